#!/usr/bin/python3
"""Checks the shell scripts tpush sends to workers: every src/<folder>/[<sub>/]*.sh, which
cmake/EmbedScripts.cmake embeds in the binary.

    tests/check_scripts.py syntax [REPO]       bash -n on each; sh -n too on those for sh
    tests/check_scripts.py shellcheck [REPO]   shellcheck on each (Debian's shellcheck)

A script says which shell runs it on its first line: `#!/bin/sh` or `#!/bin/bash`,
or, for a fragment that other text completes, `# shellcheck shell=sh` or `=bash`.
shellcheck runs its default checks at every severity (style included), with
no ~/.shellcheckrc; what a script does on purpose is written as a `# shellcheck disable=SCnnnn # why` line (EmbedScripts
drops such lines from what is sent). Exit 0: clean; 1: the findings, or a tool
missing (shellcheck: `apt-get install shellcheck`; it is in
`scripts/install-deps.sh test`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

SHELLS = {"#!/bin/sh": "sh", "#!/bin/bash": "bash"}
DIRECTIVE = re.compile(r"^#\s*shellcheck\s+shell=(sh|bash)\b", re.M)


def shell_of(path: Path) -> str | None:
    text = path.read_text()
    first = text.split("\n", 1)[0]
    if first.startswith("#!"):
        return SHELLS.get(first.strip())
    header = re.match(r"(#[^\n]*\n)*", text).group(0)
    m = DIRECTIVE.search(header)
    return m.group(1) if m else None


def run(argv: list[str]) -> tuple[int, str]:
    p = subprocess.run(argv, capture_output=True, text=True)
    return p.returncode, (p.stdout + p.stderr).strip()


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in ("syntax", "shellcheck"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    mode = sys.argv[1]
    repo = Path(sys.argv[2] if len(sys.argv) > 2 else Path(__file__).resolve().parents[1])
    scripts = sorted(repo.glob("src/**/*.sh"))
    if not scripts:
        print(f"check_scripts: no src/**/*.sh under {repo}", file=sys.stderr)
        return 1
    problems = []
    shells = {}
    for path in scripts:
        rel = path.relative_to(repo)
        shells[path] = shell_of(path)
        if shells[path] is None:
            problems.append(f"{rel}: say which shell runs it: a first line `#!/bin/sh` or `#!/bin/bash`, "
                            f"or `# shellcheck shell=sh` (or bash) in the leading comment lines")
    if mode == "shellcheck" and not shutil.which("shellcheck"):
        problems.append("shellcheck is not installed: apt-get install shellcheck "
                        "(scripts/install-deps.sh test installs it)")
    for path in scripts:
        rel, shell = path.relative_to(repo), shells[path]
        if shell is None:
            continue
        if mode == "syntax":
            checks = [["bash", "-n", str(path)]] + ([["sh", "-n", str(path)]] if shell == "sh" else [])
        elif shutil.which("shellcheck"):
            checks = [["shellcheck", "--norc", "--shell=" + shell, "--format=gcc", str(path)]]
        else:
            checks = []
        for argv in checks:
            code, out = run(argv)
            if code != 0:
                problems.append(f"{rel}: `{' '.join(argv[:-1])}` failed:\n{out or '(no output)'}")
    for p in problems:
        print(f"check_scripts: {p}", file=sys.stderr)
    if not problems:
        print(f"check_scripts: {mode}: {len(scripts)} scripts clean")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
