"""The man page and the shell completions cannot drift from the binary.

Every option `tpush --help` prints must have its own entry in man/tpush.1's OPTIONS
section and be offered by each completion file (bash, zsh, fish); the values --help lists
for an option (`TEXT:{auto,always,never}`) must be completed too; every exit code in
include/tpush/output/exit_codes.h must be documented under EXIT STATUS. Adding an
option or an exit code without documenting it fails here. No farm needed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

MAN = REPO / "man" / "tpush.1"
BASH = REPO / "completions" / "tpush.bash"
ZSH = REPO / "completions" / "_tpush"
FISH = REPO / "completions" / "tpush.fish"
EXIT_CODES = REPO / "include" / "tpush" / "output" / "exit_codes.h"

OPTION = re.compile(r"--?[A-Za-z][\w-]*")


def mentions(text: str, option: str) -> bool:
    """`option` occurs in text as a whole option (-S is not found in -Sx or --no-S)."""
    return re.search(r"(?<![\w-])" + re.escape(option) + r"(?![\w-])", text) is not None


# ---------------------------------------------------------------------------
# What the binary says

OPTION_LINE = re.compile(r"^  (-[^\s,]+(?:, -[^\s,]+)*)(?: (\S+))?(?:\s{2,}|$)")
SUBCOMMAND_LINE = re.compile(r"^  ([a-z][\w-]*)(?: (.*?))?(?:\s{2,}|$)")


def parse_option_table(text: str, group: str | None = None) -> tuple[list[str], dict[str, list[str]]]:
    """Option names (in order) and allowed values ({a,b} value names) from a --help text;
    with `group`, only that group's table."""
    options: list[str] = []
    values: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            current = line[:-1]
            continue
        if not line.strip():
            continue
        m = OPTION_LINE.match(line)
        if not m or (group is not None and current != group):
            continue
        names = m.group(1).split(", ")
        assert all(OPTION.fullmatch(n) for n in names), f"cannot parse --help line {line!r}"
        options += names
        v = re.fullmatch(r"\{([^}]*)\}", m.group(2) or "")
        if v:
            for n in names:
                values[n] = v.group(1).split(",")
    return options, values


class Help:
    """`tpush --help`: the global options, and the subcommand list."""

    def __init__(self, text: str):
        self.text = text
        self.options, self.values = parse_option_table(text)
        self.subcommands: dict[str, str] = {}  # name -> usage after the name
        block = text[text.index("Subcommands"):].split("\n\n", 1)[0].splitlines()[1:]
        for line in block:
            m = SUBCOMMAND_LINE.match(line)
            if m:
                self.subcommands[m.group(1)] = m.group(2) or ""


class SubHelp:
    """`tpush SUB --help`: the subcommand's own options (its "SUB options:" group)."""

    def __init__(self, name: str, text: str):
        self.name, self.text = name, text
        self.options, self.values = parse_option_table(text, f"{name} options")


def run_help(tpush_bin, *args) -> str:
    r = subprocess.run([str(tpush_bin), *args, "--help"], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "LC_ALL": "C.UTF-8"})
    assert r.returncode == 0, f"tpush {' '.join(args)} --help exited {r.returncode}: {r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def help_(tpush_bin) -> Help:
    text = run_help(tpush_bin)
    h = Help(text)
    # Guard the parser itself: if --help's layout changes, fail loudly rather than
    # "document" an empty option list.
    for must in ("--help", "-w", "-H", "--hosts", "-f", "--fanout", "--host-key-check", "--color"):
        assert must in h.options, f"could not find {must} in tpush --help:\n{text}"
    assert "--color" in h.values, text
    for must in ("workers", "cp", "logs", "kill"):
        assert must in h.subcommands, f"could not find the {must} subcommand in tpush --help:\n{text}"
    return h


@pytest.fixture(scope="module")
def subhelps(tpush_bin, help_) -> dict[str, SubHelp]:
    subs = {name: SubHelp(name, run_help(tpush_bin, name)) for name in help_.subcommands}
    for name, must in (("logs", "--follow"), ("kill", "--tpu"), ("ps", "--all-users"), ("cp", "--recursive")):
        assert must in subs[name].options, f"could not find {must} in tpush {name} --help:\n{subs[name].text}"
    return subs


def exit_codes() -> dict[str, int]:
    codes = {name: int(value) for name, value in
             re.findall(r"constexpr\s+int\s+(\w+)\s*=\s*(\d+)\s*;", EXIT_CODES.read_text())}
    assert len(codes) >= 5, f"could not parse the exit codes in {EXIT_CODES}"
    return codes


# ---------------------------------------------------------------------------
# The man page

def roff_plain(text: str) -> str:
    """Roff source to searchable text: \\- -> -, font escapes and quotes dropped."""
    text = text.replace("\\-", "-").replace("\\(en", "-").replace("\\&", "").replace("\\%", "")
    text = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", text)
    return text.replace('"', "")


def man_sections() -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in MAN.read_text().splitlines():
        m = re.match(r'^\.SH\s+"?([^"]*)"?\s*$', line)
        if m:
            current = m.group(1).strip()
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return sections


def tp_tags(lines: list[str]) -> list[str]:
    """The tag line of every .TP entry, as plain text."""
    return [re.sub(r"^\.[A-Z]{1,2}\s+", "", roff_plain(lines[i + 1]))
            for i, l in enumerate(lines[:-1]) if l.strip() == ".TP"]


def test_man_page_documents_every_option(help_):
    sections = man_sections()
    assert "OPTIONS" in sections, "man/tpush.1 has no OPTIONS section"
    tags = "\n".join(tp_tags(sections["OPTIONS"]))
    missing = [o for o in help_.options if not mentions(tags, o)]
    assert not missing, (f"options printed by `tpush --help` without an entry (.TP tag) in "
                         f"man/tpush.1 OPTIONS: {missing}")


def test_man_page_documents_usage_forms(help_):
    synopsis = roff_plain("\n".join(man_sections().get("SYNOPSIS", [])))
    missing = [s for s in help_.subcommands if not re.search(rf"\b{re.escape(s)}\b", synopsis)]
    assert not missing, f"subcommands of `tpush --help` missing from man/tpush.1 SYNOPSIS: {missing}"


def test_man_page_documents_every_subcommand_option(subhelps):
    """Each subcommand's own options (`tpush SUB --help`) are named in its SUBCOMMANDS entry."""
    lines = man_sections()["SUBCOMMANDS"]
    entries: dict[str, str] = {}  # subcommand -> the text of its .TP entries
    for i, l in enumerate(lines[:-1]):
        if l.strip() != ".TP":
            continue
        name = roff_plain(lines[i + 1]).split()[1] if len(roff_plain(lines[i + 1]).split()) > 1 else ""
        body = [lines[i + 1]]
        for nxt in lines[i + 2:]:
            if nxt.strip() == ".TP":
                break
            body.append(nxt)
        entries[name] = entries.get(name, "") + roff_plain("\n".join(body))
    missing = {sub: [o for o in h.options if not mentions(entries.get(sub, ""), o)] for sub, h in subhelps.items()}
    missing = {sub: opts for sub, opts in missing.items() if opts or sub not in entries}
    assert not missing, f"subcommand options without a mention in their man/tpush.1 SUBCOMMANDS entry: {missing}"


def test_man_page_lists_option_values(help_):
    """Each value --help allows (--color auto|always|never, ...) is named in that option's entry."""
    lines = man_sections()["OPTIONS"]
    entries: dict[str, str] = {}
    for i, l in enumerate(lines[:-1]):
        if l.strip() != ".TP":
            continue
        body = []
        for nxt in lines[i + 2:]:
            if nxt.strip() in (".TP",) or nxt.startswith(".SS"):
                break
            body.append(nxt)
        for o in OPTION.findall(roff_plain(lines[i + 1])):
            entries[o] = roff_plain("\n".join(body))
    missing = {o: [v for v in vals if not re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", entries.get(o, ""))]
               for o, vals in help_.values.items()}
    missing = {o: v for o, v in missing.items() if v}
    assert not missing, f"values allowed by --help but not named in their man/tpush.1 entry: {missing}"


def test_man_page_documents_environment_of_help(help_):
    """Environment variables --help mentions (NO_COLOR, TPUSH_ZONE, $USER, ...) are under ENVIRONMENT."""
    env = "\n".join(man_sections().get("ENVIRONMENT", []))
    names = set(re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b", help_.text))
    names |= set(re.findall(r"\$([A-Z_][A-Z0-9_]*)", help_.text))
    missing = sorted(n for n in names if not re.search(rf"\b{n}\b", env))
    assert not missing, f"environment variables named by --help but not in man/tpush.1 ENVIRONMENT: {missing}"


def test_man_page_documents_every_exit_code():
    section = man_sections().get("EXIT STATUS")
    assert section is not None, "man/tpush.1 has no EXIT STATUS section"
    tags = {t.strip() for t in tp_tags(section)}
    missing = {name: code for name, code in exit_codes().items() if str(code) not in tags}
    assert not missing, f"exit codes in {EXIT_CODES.name} without an entry in man/tpush.1 EXIT STATUS: {missing}"


def test_help_footer_exit_codes_match_header(help_):
    footer = help_.text[help_.text.find("Exit status:"):]
    said = {int(c) for c in re.findall(r"(?:status:|;)\s+(\d+)\s", footer)}
    assert said == set(exit_codes().values()), f"--help's exit status line ({sorted(said)}) " \
                                               f"disagrees with {EXIT_CODES.name} ({sorted(exit_codes().values())})"


def test_man_page_renders_without_warnings():
    assert shutil.which("man"), "man (package man-db) is not installed: scripts/install-deps.sh test installs it"
    env = {**os.environ, "MANWIDTH": "80", "LC_ALL": "C.UTF-8", "MANPAGER": "cat", "PAGER": "cat"}
    r = subprocess.run(["man", "--warnings", "-l", str(MAN)], capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 0 and r.stderr.strip() == "", f"man --warnings -l man/tpush.1:\n{r.stderr}"
    assert "EXIT STATUS" in r.stdout and "OPTIONS" in r.stdout


# ---------------------------------------------------------------------------
# bash

def bash_complete(line: str) -> list[str]:
    """What the bash completion offers for `line` with the cursor at its end."""
    script = ('source "$1"; COMP_LINE=$2; COMP_POINT=${#COMP_LINE}; '
              'read -ra COMP_WORDS <<<"$COMP_LINE"; [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("");'
              'COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _tpush tpush; '
              'printf "%s\\n" "${COMPREPLY[@]}"')
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash", str(BASH), line],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"bash completion failed for {line!r}: {r.stderr}"
    return [w for w in r.stdout.splitlines() if w]


def test_bash_completion_syntax_and_registration():
    r = subprocess.run(["bash", "-n", str(BASH)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"bash -n completions/tpush.bash:\n{r.stderr}"
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", 'source "$1" && complete -p tpush',
                        "bash", str(BASH)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and re.search(r"^complete .* tpush$", r.stdout.strip()), \
        f"sourcing completions/tpush.bash defines no completion for tpush: {r.stdout!r} {r.stderr!r}"


def test_bash_completion_offers_every_option(help_, subhelps):
    offered = set(bash_complete("tpush -"))
    missing = [o for o in help_.options if o not in offered]
    assert not missing, f"options of `tpush --help` that completions/tpush.bash does not offer: {missing}"
    for name, sub in subhelps.items():
        if name == "rsync":  # every word after `rsync` is rsync's
            continue
        offered = set(bash_complete(f"tpush {name} -"))
        missing = [o for o in sub.options + help_.options if o not in offered]
        assert not missing, f"`tpush {name}` options not offered by completions/tpush.bash: {missing}"
    for s in help_.subcommands:
        assert s in bash_complete("tpush " + s[:2]), f"bash completion does not offer the {s!r} subcommand"


def test_bash_completion_offers_option_values(help_):
    for option, values in help_.values.items():
        for line in (f"tpush {option} ", f"tpush {option}=") if option.startswith("--") else (f"tpush {option} ",):
            got = bash_complete(line)
            assert sorted(got) == sorted(values), f"bash completion of {line!r}: {got[:20]}, --help allows {values}"


def test_bash_completion_completes_files_for_file_options(tmp_path):
    (tmp_path / "hosts.txt").write_text("node1\n")
    (tmp_path / "id_test").write_text("")
    for option, name in (("-H", "hosts.txt"), ("--hosts", "hosts.txt"), ("-i", "id_test"),
                         ("--identity", "id_test")):
        got = bash_complete(f"tpush {option} {tmp_path}/{name[:3]}")
        assert f"{tmp_path}/{name}" in got, f"bash completion of {option} FILE: {got}"


# ---------------------------------------------------------------------------
# zsh

def zsh_options() -> set[str]:
    """Option names that _tpush's _arguments specs define (not the flags of _arguments itself)."""
    text = ZSH.read_text()
    return set(re.findall(r"(?:\{|,|['\"]\*?|['\"]\([^)]*\)\*?)(--?[A-Za-z][\w-]*)[+=]?-?(?=[,}\[])", text))


def test_zsh_completion_defines_every_option(help_, subhelps):
    defined = zsh_options()
    missing = [o for o in help_.options + [o for h in subhelps.values() for o in h.options] if o not in defined]
    assert not missing, f"options of `tpush --help` without an _arguments spec in completions/_tpush: {missing}"
    text = ZSH.read_text()
    for s in help_.subcommands:
        assert re.search(rf"\b{re.escape(s)}\b", text), f"completions/_tpush does not offer the {s!r} subcommand"
    for option, values in help_.values.items():
        spec = next((l for l in text.splitlines() if mentions(l, option) and "[" in l), "")
        missing_values = [v for v in values if not re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", spec.split("]", 1)[-1])]
        assert not missing_values, f"completions/_tpush: values {missing_values} of {option} not offered"


def test_zsh_completion_syntax():
    assert ZSH.read_text().startswith("#compdef tpush"), "completions/_tpush must start with #compdef tpush"
    assert shutil.which("zsh"), "zsh is not installed: scripts/install-deps.sh test installs it"
    r = subprocess.run(["zsh", "-n", str(ZSH)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"zsh -n completions/_tpush:\n{r.stderr}"


# ---------------------------------------------------------------------------
# fish

def value_options(text: str, group: str | None = None) -> set[str]:
    """The options of a --help text (or of one group) that take a value (`-w HOSTS`, not
    `--leader [=LABEL]`)."""
    taking: set[str] = set()
    current = None
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            current = line[:-1]
            continue
        m = OPTION_LINE.match(line)
        if m and (group is None or current == group) and m.group(2) and not m.group(2).startswith("[="):
            taking |= set(m.group(1).split(", "))
    return taking


@pytest.fixture(scope="module")
def fish_home(tmp_path_factory, tpush_bin) -> dict[str, str]:
    """The environment fish completes in: its own empty home, and tpush on PATH (fish loads
    a command's completion only once the command exists)."""
    assert shutil.which("fish"), "fish is not installed: scripts/install-deps.sh test installs it"
    home = tmp_path_factory.mktemp("fish-home")
    return {"PATH": f"{Path(tpush_bin).parent}:{os.environ['PATH']}", "HOME": str(home), "LC_ALL": "C.UTF-8",
            "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
            "XDG_CACHE_HOME": str(home / "cache")}


def fish_complete(env: dict[str, str], line: str) -> list[str]:
    """What fish offers for `line`, the cursor at its end: the candidates of `complete -C`.
    fish finds completions/tpush.fish as it finds an installed one, by its name in
    $fish_complete_path (then its own completions, for the remote command's)."""
    script = 'set fish_complete_path $argv[1] $__fish_data_dir/completions; complete -C $argv[2]'
    r = subprocess.run(["fish", "-c", script, str(FISH.parent), line], capture_output=True, text=True,
                       timeout=60, env=env)
    assert r.returncode == 0 and not r.stderr.strip(), f"fish completion failed for {line!r}: {r.stderr}"
    return [c.split("\t", 1)[0] for c in r.stdout.splitlines() if c]


def test_fish_completion_syntax():
    assert shutil.which("fish"), "fish is not installed: scripts/install-deps.sh test installs it"
    r = subprocess.run(["fish", "--no-execute", str(FISH)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and not r.stderr.strip(), f"fish --no-execute completions/tpush.fish:\n{r.stderr}"


def test_fish_completion_offers_every_option(fish_home, help_, subhelps):
    offered = set(fish_complete(fish_home, "tpush -"))
    missing = [o for o in help_.options if o not in offered]
    assert not missing, f"options of `tpush --help` that completions/tpush.fish does not offer: {missing}"
    for name, sub in subhelps.items():
        if name == "rsync":  # every word after `rsync` is rsync's
            continue
        offered = set(fish_complete(fish_home, f"tpush {name} -"))
        missing = [o for o in sub.options + help_.options if o not in offered]
        assert not missing, f"`tpush {name}` options not offered by completions/tpush.fish: {missing}"
    for s in help_.subcommands:
        assert s in fish_complete(fish_home, "tpush " + s[:2]), f"fish does not offer the {s!r} subcommand"


def test_fish_completion_offers_option_values(fish_home, help_):
    for option, values in help_.values.items():
        got = fish_complete(fish_home, f"tpush {option} ")
        assert sorted(got) == sorted(values), f"fish completion of 'tpush {option} ': {got[:20]}, --help allows {values}"
        if option.startswith("--"):
            got = fish_complete(fish_home, f"tpush {option}=")
            assert sorted(got) == sorted(f"{option}={v}" for v in values), \
                f"fish completion of 'tpush {option}=': {got[:20]}, --help allows {values}"


def test_fish_completion_completes_files_for_file_options(fish_home, tmp_path):
    (tmp_path / "hosts.txt").write_text("node1\n")
    (tmp_path / "id_test").write_text("")
    for option, name in (("-H", "hosts.txt"), ("--hosts", "hosts.txt"), ("-i", "id_test"),
                         ("--identity", "id_test"), ("-F", "id_test")):
        got = fish_complete(fish_home, f"tpush {option} {tmp_path}/{name[:3]}")
        assert f"{tmp_path}/{name}" in got, f"fish completion of {option} FILE: {got}"


def test_fish_completion_subcommand_options_win(fish_home, tmp_path, help_, subhelps):
    """Where a subcommand's option has the name of one of tpush's (cp -p is --preserve, logs -f
    is --follow, logs -n takes LINES, kill --tpu is a flag), the word after it is read as the
    subcommand's option wants it: a file argument after a flag, no files for a value."""
    (tmp_path / "file.txt").write_text("")
    global_taking = value_options(help_.text)
    cases = 0
    for name, sub in subhelps.items():
        taking = value_options(sub.text, f"{name} options")
        for option in (o for o in sub.options if o in help_.options):
            if (option in taking) == (option in global_taking):
                continue  # the same shape either way
            cases += 1
            got = fish_complete(fish_home, f"tpush {name} {option} {tmp_path}/fi")
            if option in taking:
                assert f"{tmp_path}/file.txt" not in got, \
                    f"`tpush {name} {option}` takes a value, but fish offers files after it: {got}"
            else:
                assert f"{tmp_path}/file.txt" in got, \
                    f"`tpush {name} {option}` is a flag, but fish offers no file after it: {got}"
    assert cases >= 4, "found fewer subcommand options that shadow tpush's than cp -p, get -p, logs -f/-n, kill --tpu"


def test_fish_completion_follows_the_command_line(fish_home):
    """An option's value is not taken for the remote command; once the remote command (or
    rsync) has begun, its own completions are offered and tpush's options are not."""
    assert "--fanout" in fish_complete(fish_home, "tpush -w node1 --fan")
    assert "--follow" in fish_complete(fish_home, "tpush logs -n 5 --fol")
    got = fish_complete(fish_home, "tpush -w node1 ls --al")
    assert "--all" in got, f"fish does not complete ls's options after `tpush -w node1 ls`: {got}"
    got = fish_complete(fish_home, "tpush -w node1 ls --fa")
    assert "--fanout" not in got, f"fish offers tpush's options to the remote command: {got}"
    got = fish_complete(fish_home, "tpush -t mytpu rsync --dele")
    assert "--delete" in got and "--detach" not in got, f"fish completion after `tpush rsync`: {got}"
    assert "uname" in fish_complete(fish_home, "tpush -w node1 unam")
