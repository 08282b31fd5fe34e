"""seek's CLI run in the test's process on a workspace (click's runner): its output, the
exit status checked. The commands register when their modules are imported."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

import seek.cli.context_cmd  # noqa: F401 - registers the command
import seek.cli.search_cmd  # noqa: F401 - registers the commands
from seek.cli import cli


def run_cli(project: Path, *args: str) -> str:
    found = CliRunner().invoke(cli, ["-C", str(project), *args])
    assert found.exit_code == 0, found.output
    return found.output
