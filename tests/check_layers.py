#!/usr/bin/python3
"""Fails when a source file includes a header of a higher layer.

The order is the one ARCHITECTURE.md states under "## Layers", in the line
that starts with "Layers, lowest first:", e.g.

    Layers, lowest first: util < ssh < inventory < fanout < output < commands

A file in src/<folder>/ or include/tpush/<folder>/ may include tpush headers
of its own folder and of the folders before it. src/main.cpp is above them all.

    tests/check_layers.py [REPO]      exit 0: clean; 1: a list of violations
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"tpush/([a-z_]+)/([^"]+)"', re.M)


def layer_order(architecture: Path) -> list[str]:
    for line in architecture.read_text().splitlines():
        m = re.match(r"\s*Layers, lowest first:\s*(.+)$", line)
        if m:
            return [name.strip(" `") for name in m.group(1).split("<")]
    raise SystemExit(f"{architecture}: no 'Layers, lowest first: a < b < ...' line")


def folder_of(path: Path, repo: Path) -> str | None:
    rel = path.relative_to(repo).parts
    if rel[0] == "src" and len(rel) > 2:
        return rel[1]
    if rel[:2] == ("include", "tpush") and len(rel) > 3:
        return rel[2]
    return None


def main() -> int:
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    order = layer_order(repo / "ARCHITECTURE.md")
    rank = {name: i for i, name in enumerate(order)}
    problems = []
    files = sorted([*repo.glob("src/**/*.cpp"), *repo.glob("src/**/*.h"), *repo.glob("include/tpush/**/*.h")])
    for path in files:
        folder = folder_of(path, repo)
        if folder is None:
            continue
        if folder not in rank:
            problems.append(f"{path.relative_to(repo)}: folder '{folder}' is not in the layer order "
                            f"of ARCHITECTURE.md ({' < '.join(order)}); add it there")
            continue
        text = path.read_text()
        for m in INCLUDE.finditer(text):
            target = m.group(1)
            if target not in rank:
                problems.append(f"{path.relative_to(repo)}: includes tpush/{target}/{m.group(2)} from an "
                                f"unknown layer '{target}'")
            elif rank[target] > rank[folder]:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{path.relative_to(repo)}:{line}: {folder} includes tpush/{target}/{m.group(2)}, "
                                f"a higher layer ({' < '.join(order)}): move the shared part down "
                                f"(a leaf header) or the file up")
    for p in problems:
        print(f"check_layers: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
