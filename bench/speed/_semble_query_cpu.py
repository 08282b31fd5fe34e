"""semble's side of ``bench.speed.query_cpu``; run with *semble's* python (imports only semble and
the standard library):

    OPENBLAS_NUM_THREADS=1 $SEMBLE_PYTHON bench/speed/_semble_query_cpu.py \
        FOLDER MODEL_DIR QUESTIONS_JSON

The index is built first into a fresh cache folder (not timed), then each question is timed
as in ``bench.speed.query_cpu`` (``time.process_time``, median of 3 runs, median over questions).
"""

import json
import os
import statistics
import sys
import tempfile
import time


def main() -> int:
    folder, model_dir, questions_path = sys.argv[1:4]
    os.environ["SEMBLE_CACHE_LOCATION"] = tempfile.mkdtemp(prefix="bench-semble-cpu-")
    os.environ["SEMBLE_MODEL_NAME"] = os.path.abspath(model_dir)
    os.environ["HF_HUB_OFFLINE"] = "1"
    from semble import SembleIndex
    from semble.index.dense import load_model

    model, _ = load_model(os.path.abspath(model_dir))
    model.encode(["warm up"])
    index = SembleIndex.from_path(folder)
    with open(questions_path, encoding="utf-8") as handle:
        questions = [q["query"] for q in json.load(handle)]
    for question in questions:
        index.search(question, top_k=10)
    per_question = []
    for question in questions:
        times = []
        for _ in range(3):
            started = time.process_time()
            index.search(question, top_k=10)
            times.append((time.process_time() - started) * 1000)
        per_question.append(statistics.median(times))
    print(f"semble cpu p50 {statistics.median(per_question):.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
