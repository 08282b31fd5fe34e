"""Which mappings of a process hold its anonymous memory, and which grew (issue 20).

    python -m bench.soak.soak_smaps save PID before.json
    python -m bench.soak.soak_smaps save PID after.json
    python -m bench.soak.soak_smaps diff before.json after.json

``/proc/PID/smaps`` per mapping ("Anonymous:" KiB), grouped for the diff as glibc's main heap
(``[heap]``), other named mappings (a library's data, stacks) and unnamed mappings: glibc's
other arenas start on 64 MiB boundaries, Arrow's mimalloc reserves 1 GiB at a time, and the
rest is mostly Python's 1 MiB arenas (adjacent ones merge) and malloc's mmapped blocks.
"""

from __future__ import annotations

import json
import re
import sys

MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) ")


def read(pid: int) -> dict[str, dict[str, int]]:
    """``{"start-end name": {"size": KiB, "anon": KiB}}``."""
    mappings: dict[str, dict[str, int]] = {}
    current = ""
    with open(f"/proc/{pid}/smaps", encoding="utf-8", errors="replace") as smaps:
        for line in smaps:
            found = MAPPING.match(line)
            if found:
                parts = line.split()
                current = parts[0] + " " + (parts[5] if len(parts) > 5 else "")
                size = (int(found.group(2), 16) - int(found.group(1), 16)) >> 10
                mappings[current] = {"size": size, "anon": 0}
            elif line.startswith("Anonymous:"):
                mappings[current]["anon"] = int(line.split()[1])
    return mappings


def group(mappings: dict[str, dict[str, int]]) -> dict[str, int]:
    """Anonymous KiB by kind of mapping."""
    kinds: dict[str, int] = {}
    for key, value in mappings.items():
        name = key.split(" ", 1)[1]
        if name == "[heap]":
            kind = "[heap] (glibc main arena)"
        elif name:
            kind = "named (libraries, stacks)"
        elif value["size"] >= 1 << 20:
            kind = "reserved >= 1 GiB (mimalloc)"
        elif int(key.split("-", 1)[0], 16) % (64 << 20) == 0:
            kind = "64 MiB-aligned (glibc's other arenas)"
        else:
            kind = "other anonymous (Python arenas, mmapped blocks)"
        kinds[kind] = kinds.get(kind, 0) + value["anon"]
    return kinds


def main() -> None:
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__)
        return
    if len(sys.argv) != 4 or sys.argv[1] not in ("save", "diff"):
        sys.exit(__doc__.split("\n\n")[1])  # the usage lines; --help lands here too
    if sys.argv[1] == "save":
        with open(sys.argv[3], "w", encoding="utf-8") as out:
            json.dump(read(int(sys.argv[2])), out)
        return
    with open(sys.argv[2], encoding="utf-8") as a, open(sys.argv[3], encoding="utf-8") as b:
        before, after = group(json.load(a)), group(json.load(b))
    for kind in sorted(set(before) | set(after)):
        print(f"{kind:48} {before.get(kind, 0) >> 10:5} -> {after.get(kind, 0) >> 10:5} MiB")
    print(f"{'total':48} {sum(before.values()) >> 10:5} -> {sum(after.values()) >> 10:5} MiB")


if __name__ == "__main__":
    main()
