"""The lancedb package loads without running its REST namespace client's package until a
name of it is used (seek.store.lance_client; issue 45, deliver 5: a cold `seek corpus refs`),
and the client is whole when it is. Fresh interpreters (an import's cost is per process),
a real LanceDB table in a temporary folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import seek

SRC = str(Path(seek.__file__).resolve().parent.parent)

PROGRAM = """
import json, sys
from seek.store.lance import package
lancedb = package()
import pyarrow as pa
db = lancedb.connect(sys.argv[1])
table = db.create_table("t", pa.table({"repo": ["a", "b"], "n": [1, 2]}))
rows = table.search().where("repo = 'b'").select(["n"]).to_arrow().column("n").to_pylist()
api_before = "lance_namespace_urllib3_client.api" in sys.modules
from lance_namespace_urllib3_client import ApiClient, Configuration
from lance_namespace_urllib3_client.api.table_api import TableApi
print(json.dumps({"rows": rows, "api_before": api_before,
                  "client": [ApiClient.__name__, Configuration.__name__, TableApi.__name__],
                  "api_after": "lance_namespace_urllib3_client.api" in sys.modules}))
"""


def run(tmp_path: Path, **env: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path / "db")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC, **env},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_lancedb_reads_a_table_without_the_rest_client_which_loads_whole_when_asked(tmp_path):
    found = run(tmp_path)
    assert found["rows"] == [2]
    assert found["api_before"] is False  # its nine API modules were not imported
    assert found["client"] == ["ApiClient", "Configuration", "TableApi"]
    assert found["api_after"] is True


def test_seek_lancedb_package_leaves_the_package_as_it_is(tmp_path):
    found = run(tmp_path, SEEK_LANCEDB="package")
    assert found["rows"] == [2] and found["api_before"] is True
