// The Ask view's page: sends questions to the extension, shows the streamed answer, its
// sources (click to open) and the context line. Text only: nothing from the answer is
// inserted as HTML.
(function () {
  const vscode = acquireVsCodeApi();
  const log = document.getElementById("log");
  const form = document.getElementById("form");
  const question = document.getElementById("question");
  let answer = null;
  let turn = null;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = question.value.trim();
    if (!q) return;
    question.value = "";
    vscode.postMessage({ type: "ask", question: q });
  });
  question.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  document.getElementById("new").addEventListener("click", () => {
    log.textContent = "";
    vscode.postMessage({ type: "new" });
  });

  window.addEventListener("message", (event) => {
    const m = event.data;
    if (m.type === "start") {
      turn = el("div", "turn");
      turn.appendChild(el("div", "question", m.question));
      answer = el("div", "answer streaming");
      turn.appendChild(answer);
      log.appendChild(turn);
    } else if (m.type === "sources" && turn) {
      const box = el("div", "sources");
      box.appendChild(el("div", "context-line", m.contextLine));
      for (const s of m.sources) {
        const link = el("a", "source", s.label);
        link.href = "#";
        link.title = `score ${s.score}`;
        link.addEventListener("click", (e) => {
          e.preventDefault();
          vscode.postMessage({ type: "open", label: s.label });
        });
        box.appendChild(link);
      }
      turn.insertBefore(box, answer);
    } else if (m.type === "piece" && answer) {
      answer.textContent += m.text;
    } else if (m.type === "done" && answer) {
      answer.classList.remove("streaming");
    } else if (m.type === "error") {
      if (!turn) {
        turn = el("div", "turn");
        log.appendChild(turn);
      }
      if (answer) answer.classList.remove("streaming");
      turn.appendChild(el("div", "error", m.message));
    }
    log.scrollTop = log.scrollHeight;
  });
})();
