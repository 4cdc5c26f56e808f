#!/usr/bin/python3
"""Fails when the tree breaks a rule ARCHITECTURE.md states as true:

- signal masks and dispositions are touched only in src/util/signals.cpp;
- the commands and persist layers (whose functions return tpush's exit codes) name
  every exit code from include/tpush/output/exit_codes.h, never a bare 1, 2, 130,
  141 or 255;
- ARCHITECTURE.md's "Error tiers" names every exception type util/error.h declares,
  and says how many there are;
- no folder of src/ or include/tpush/ holds more than 20 files (a crowd is split
  into sub-folders named for its ideas);
- every unit test file names what it tests: tests/unit/test_<folder>_[<sub>_]<file>.cpp
  for src/<folder>/[<sub>/]<file>.cpp (or a header of include/tpush/), optionally
  followed by _<aspect> (test_ssh_config_config_oracle.cpp).

    tests/check_rules.py [REPO]      exit 0: clean; 1: a list of violations
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SIGNAL_CALL = re.compile(r"\b(sigaction|sigprocmask|pthread_sigmask|signalfd|sigfillset|sigemptyset|sigaddset)\s*\("
                         r"|\bsignal\s*\(\s*SIG")
BARE_EXIT = re.compile(r"\b(return|code\s*=)\s*(1|2|130|141|255)\s*;")
MAX_FILES_PER_FOLDER = 20
NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


RAW_STRING = re.compile(r'R"(\w*)\((.*?)\)\1"', re.S)


def code_lines(path: Path):
    """(line number, text) of the C++ code, // comments and string literals (raw ones
    too: remote shell scripts) left out."""
    text = RAW_STRING.sub(lambda m: '""' + "\n" * m.group(0).count("\n"), path.read_text(errors="replace"))
    for n, line in enumerate(text.splitlines(), 1):
        line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        yield n, line.split("//", 1)[0]


def check(repo: Path) -> list[str]:
    problems = []
    src = repo / "src"
    for f in sorted(src.rglob("*.cpp")):
        rel = f.relative_to(repo)
        for n, line in code_lines(f):
            if rel != Path("src/util/signals.cpp") and SIGNAL_CALL.search(line):
                problems.append(f"{rel}:{n}: a signal call outside src/util/signals.cpp: {line.strip()}")
            if rel.parts[1] in ("commands", "persist") or rel.name == "main.cpp":
                if BARE_EXIT.search(line):
                    problems.append(f"{rel}:{n}: a bare exit code (name it from output/exit_codes.h): {line.strip()}")
    for folder in sorted({*src.glob("**/"), *(repo / "include/tpush").glob("**/")}):
        count = sum(1 for f in folder.iterdir() if f.is_file())
        if count > MAX_FILES_PER_FOLDER:
            problems.append(f"{folder.relative_to(repo)}: {count} files, more than {MAX_FILES_PER_FOLDER}: "
                            f"split it into sub-folders named for its ideas")
    problems += unit_test_names(repo)
    errors = re.findall(r"^class (\w+) : public std::runtime_error", (repo / "include/tpush/util/error.h").read_text(), re.M)
    arch = (repo / "ARCHITECTURE.md").read_text()
    section = arch[arch.find("## Error tiers"):]
    section = section[: section.find("\n## ", 4)] if "\n## " in section[4:] else section
    for name in errors:
        if f"`{name}`" not in section:
            problems.append(f"ARCHITECTURE.md: 'Error tiers' does not name {name} (util/error.h declares it)")
    if f"all {NUMBERS.get(len(errors), len(errors))} from `util/error.h`" not in section:
        problems.append(f"ARCHITECTURE.md: 'Error tiers' must say 'all {NUMBERS.get(len(errors), len(errors))} "
                        f"from `util/error.h`' (it declares {len(errors)})")
    return problems


def unit_test_names(repo: Path) -> list[str]:
    """tests/unit/test_*.cpp files whose names pair with no source file."""
    names = {"_".join(p.relative_to(repo / "src").with_suffix("").parts)
             for p in [*(repo / "src").rglob("*.cpp"), *(repo / "src").rglob("*.h")]}
    names |= {"_".join(p.relative_to(repo / "include/tpush").with_suffix("").parts)
              for p in (repo / "include/tpush").rglob("*.h")}
    problems = []
    for test in sorted((repo / "tests/unit").glob("test_*.cpp")):
        stem = test.stem.removeprefix("test_")
        if not any(stem == n or stem.startswith(n + "_") for n in names):
            problems.append(f"{test.relative_to(repo)}: names no source file (test_<folder>_[<sub>_]<file>.cpp "
                            f"for src/<folder>/[<sub>/]<file>.cpp): rename it for what it tests")
    return problems


def main() -> int:
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    problems = check(repo)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
