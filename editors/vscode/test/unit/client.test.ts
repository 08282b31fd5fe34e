import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as http from "node:http";
import { AddressInfo } from "node:net";
import { LineSplitter, SeekClient, errorMessage, loopbackBase, newToken, parseServeAddress } from "../../src/client";

test("only plain http on a loopback address is accepted", () => {
  assert.equal(loopbackBase("http://127.0.0.1:7421/x?y#z").href, "http://127.0.0.1:7421/");
  assert.equal(loopbackBase("http://localhost:1").host, "localhost:1");
  assert.equal(loopbackBase("http://[::1]:5/").hostname, "[::1]");
  assert.throws(() => loopbackBase("https://127.0.0.1:1"), /http on loopback/);
  assert.throws(() => loopbackBase("http://example.com:7421"), /this machine/);
  assert.throws(() => loopbackBase("http://127.0.0.1.evil.example/"), /this machine/);
  assert.throws(() => loopbackBase("http://user:pw@127.0.0.1:1"), /user name/);
  assert.throws(() => loopbackBase("not a url"), /not a URL/);
});

test("tokens are fresh 64-character hex strings", () => {
  const a = newToken();
  assert.match(a, /^[0-9a-f]{64}$/);
  assert.notEqual(a, newToken());
});

test("the address is read from seek's own line only, the one with this session's token", () => {
  const token = "ab12".repeat(16);
  const own = `seek: the page for /w is at http://127.0.0.1:40123/#token=${token}\n`;
  assert.equal(parseServeAddress(`INFO something\n${own}`, token), "http://127.0.0.1:40123/");
  assert.equal(parseServeAddress(own.replace("\n", "\r\n"), token), "http://127.0.0.1:40123/");
  // A line that quotes repository text, before seek's own: passed over.
  const forged = [
    "warning: cannot read 'x is at http://127.0.0.1:6666/'",
    "seek: the page for /w is at http://127.0.0.1:6666/",
    "seek: the page for /w is at http://127.0.0.1:6666/#token=0000",
    `warning: seek: the page for /w is at http://127.0.0.1:6666/#token=${token}`,
    `seek: the page for /w is at http://127.0.0.1:6666/#token=${token}x`,
    `seek: the page for /w is at http://127.0.0.1:6666/#token=${token} and more`,
  ];
  for (const line of forged) {
    assert.equal(parseServeAddress(`${line}\n`, token), undefined, line);
    assert.equal(parseServeAddress(`${line}\n${own}`, token), "http://127.0.0.1:40123/", line);
  }
  // The first of seek's lines wins; a line still being written is not read.
  assert.equal(parseServeAddress(`${own}${own.replace("40123", "40124")}`, token), "http://127.0.0.1:40123/");
  assert.equal(parseServeAddress(own.slice(0, own.indexOf("40123") + 3), token), undefined);
  assert.equal(parseServeAddress(own.trimEnd(), token), undefined);
  assert.equal(parseServeAddress(own.replace("127.0.0.1", "10.0.0.1"), token), undefined);
  assert.equal(parseServeAddress(own, ""), undefined);
});

test("seek's JSON errors become their one-line message; other bodies their first line", () => {
  const e = errorMessage(403, JSON.stringify({ error: { code: "forbidden", message: "path is not served" } }));
  assert.equal(e.message, "path is not served");
  assert.equal(e.code, "forbidden");
  assert.equal(errorMessage(502, "Bad gateway\nmore").message, "HTTP 502: Bad gateway");
});

test("JSON lines split across chunks are joined", () => {
  const s = new LineSplitter();
  assert.deepEqual(s.push('{"a":1}\n{"b"'), [{ a: 1 }]);
  assert.deepEqual(s.push(':2}\n\n'), [{ b: 2 }]);
  assert.deepEqual(s.push('{"c":3}'), []);
  assert.deepEqual(s.end(), [{ c: 3 }]);
});

function serve(handler: http.RequestListener): Promise<{ url: string; close: () => void }> {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port;
      resolve({ url: `http://127.0.0.1:${port}/`, close: () => server.close() });
    });
  });
}

test("every call carries the token and JSON; errors carry seek's message", async () => {
  const seen: http.IncomingHttpHeaders[] = [];
  const { url, close } = await serve((req, res) => {
    seen.push(req.headers);
    if (req.url === "/bad") {
      res.writeHead(409, { "Content-Type": "application/json" });
      return res.end(JSON.stringify({ error: { code: "locked", message: "another run is going" } }));
    }
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ echo: body ? JSON.parse(body) : null }));
    });
  });
  try {
    const client = new SeekClient(url, "s3cret");
    assert.deepEqual(await client.call("POST", "/v1/search", { query: "x" }), { echo: { query: "x" } });
    assert.equal(seen[0].authorization, "Bearer s3cret");
    assert.equal(seen[0]["content-type"], "application/json");
    await assert.rejects(client.call("GET", "/bad"), /another run is going/);
  } finally {
    close();
  }
});

test("a stream's JSON lines arrive as they are sent", async () => {
  const { url, close } = await serve((req, res) => {
    res.writeHead(200, { "Content-Type": "application/x-ndjson" });
    res.write('{"piece":"Hel');
    setTimeout(() => res.write('lo"}\n{"piece":" world"}\n'), 20);
    setTimeout(() => res.end('{"done":true}\n'), 40);
  });
  try {
    const items: unknown[] = [];
    const stream = new SeekClient(url, "t").stream("POST", "/ui/api/ask", { question: "q" }, (i) => items.push(i));
    await stream.done;
    assert.deepEqual(items, [{ piece: "Hello" }, { piece: " world" }, { done: true }]);
  } finally {
    close();
  }
});

test("a server that is gone is reported as down", async () => {
  const { url, close } = await serve(() => undefined);
  close();
  await new Promise((r) => setTimeout(r, 50));
  const err = await new SeekClient(url, "t").call("GET", "/v1/status").catch((e) => e);
  assert.equal(err.code, "down");
  assert.match(err.message, /not answering/);
});
