"""Host lists on the command line (-w, -x, -H) as pdsh and clush users write them, seen
through `tpush ... workers --json` (no farm needed): blanks and newlines, pdsh's exclusions
and filters across options, ClusterShell's operators, #include, one-line escaped errors,
and the corpus of tests/fixtures/host_lists against `nodeset -e`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "host_lists"
NODESET_BATCH = FIXTURES / "nodeset_batch.py"
USER = "tpush-test-user"  # the default user, so that a user@ in a list stands out


def run(tpush_bin: Path, cwd: Path, *args: str, command=("workers", "--json")) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "USER": USER,
           "LOGNAME": USER, "LC_ALL": "C.UTF-8", "NO_COLOR": "1"}
    return subprocess.run([str(tpush_bin), *args, *command], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120)


def labels(p: subprocess.CompletedProcess) -> list[str]:
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")
    return [w["label"] if w["user"] == USER else w["user"] + "@" + w["label"]
            for w in json.loads(p.stdout)]


def error(p: subprocess.CompletedProcess) -> str:
    """The one error line of a usage error (exit 2)."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    text = p.stderr.decode("utf-8")
    assert text.endswith("\n") and text.count("\n") == 1, text
    assert text.startswith("tpush: error: "), text
    return text[len("tpush: error: "):-1]


def test_a_list_in_lines_as_cat_gives_it(tpush_bin, tmp_path):
    """-w "$(cat hosts)": newlines and blanks separate hosts; # starts a comment."""
    hosts = "# rack 1\nn[1-3]   # the first three\n\nlogin1 login2\r\nalice@db:2222\n"
    assert labels(run(tpush_bin, tmp_path, "-w", hosts)) == [
        "n1", "n2", "n3", "login1", "login2", "alice@db:2222"]


def test_pdsh_exclusions_and_filters_apply_to_every_w(tpush_bin, tmp_path):
    (tmp_path / "wcoll").write_text("foo[9-11]\nfoo12\n")
    assert labels(run(tpush_bin, tmp_path, "-w", "foo[9-11],-foo10")) == ["foo9", "foo11"]
    assert labels(run(tpush_bin, tmp_path, "-w", "foo[0-20]", "-w", "-/[1-9]$/")) == [
        "foo0", "foo10", "foo20"]
    assert labels(run(tpush_bin, tmp_path, "-w", "foo1,bar1", "-w", "/^foo/")) == ["foo1"]
    assert labels(run(tpush_bin, tmp_path, "-w", "foo[8-12],-^wcoll")) == ["foo8"]
    assert labels(run(tpush_bin, tmp_path, "-w", "foo[8-13]", "-x", "^wcoll")) == ["foo8", "foo13"]
    assert labels(run(tpush_bin, tmp_path, "-w", "foo[0-20]", "-x", "/[1-9]$/")) == [
        "foo0", "foo10", "foo20"]


def test_clustershell_operators(tpush_bin, tmp_path):
    assert labels(run(tpush_bin, tmp_path, "-w", "n[1-5]!n[2-3]")) == ["n1", "n4", "n5"]
    assert labels(run(tpush_bin, tmp_path, "-w", "n[1-5] & n[3-8]")) == ["n3", "n4", "n5"]
    assert labels(run(tpush_bin, tmp_path, "-w", "n[1-5]^n[3-8]")) == ["n1", "n2", "n6", "n7", "n8"]
    assert labels(run(tpush_bin, tmp_path, "-w", "n[1-9/2],m1")) == ["n1", "n3", "n5", "n7", "n9", "m1"]


def test_hosts_file_with_pdsh_include(tpush_bin, tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "B").write_text("foo10\n")
    (tmp_path / "sub" / "A").write_text("foo1\nfoo2\n#include B\n")
    assert labels(run(tpush_bin, tmp_path, "-H", "sub/A")) == ["foo1", "foo2", "foo10"]


def test_errors_are_one_escaped_line(tpush_bin, tmp_path):
    message = error(run(tpush_bin, tmp_path, "-w", "a,n[1-\x1b[31m]"))
    assert "\x1b" not in message
    assert message.startswith("bad host list 'n[1-\\x1b[31m]'"), message
    assert error(run(tpush_bin, tmp_path, "-w", "a!")) == (
        "bad host list 'a!': '!' at column 2 has nothing on its right "
        "(write a!b: the hosts of a without those of b)")
    assert "unknown group '@rack1'" in error(run(tpush_bin, tmp_path, "-w", "@rack1"))
    assert "run together" in error(run(tpush_bin, tmp_path, "-w", "n[1-11][1-11]"))
    assert "does not read hosts from standard input" in error(run(tpush_bin, tmp_path, "-w", "-"))


def test_a_hash_inside_a_name_is_part_of_it(tpush_bin, tmp_path):
    """-w 'gpu-#4' is the host gpu-#4, as nodeset -e and pdsh -w have it (it ran on gpu-);
    a '#' that starts an item starts a comment, as in a hosts file."""
    assert labels(run(tpush_bin, tmp_path, "-w", "gpu-#4")) == ["gpu-#4"]
    assert labels(run(tpush_bin, tmp_path, "-w", "gpu-#[1-2],b #c")) == ["gpu-#1", "gpu-#2", "b"]
    (tmp_path / "hosts").write_text("gpu-#4   # rack 4\n")
    assert labels(run(tpush_bin, tmp_path, "-H", "hosts")) == ["gpu-#4"]


@pytest.mark.parametrize("content, line, shown", [
    (b"127.0.0.1:1\nnode2\x00x\n", 2, "'node2\\x00x': '\\x00' at column 6 cannot be in a host name: a NUL byte"),
    (b"127.0.0.1:1\n\xff\xfe\n", 2, "'\\xff\\xfe': '\\xff\\xfe' at column 1 cannot be in a host name: not UTF-8 text"),
    ("127.0.0.1:1\n".encode("utf-16"), 1, "'\\xff\\xfe1\\x002\\x007\\x00.\\x000\\x00.\\x000\\x00.\\x001\\x00:\\x001\\x00': "
                                            "'\\xff\\xfe' at column 1 cannot be in a host name: not UTF-8 text"),
])
def test_a_hosts_file_that_is_not_text_stops_before_any_connection(tpush_bin, tmp_path, content, line, shown):
    """A NUL (it cut the name, and ssh_config's error, short) or bytes that are not text
    (they went to DNS): exit 2 naming FILE:LINE and the bytes, escaped. 127.0.0.1:1 would
    have been refused (exit 255) had anything been connected."""
    (tmp_path / "hosts").write_bytes(content)
    message = error(run(tpush_bin, tmp_path, "-H", "hosts", command=("--connect-timeout", "5", "echo", "hi")))
    assert message.startswith(f"hosts:{line}: bad host list {shown} (a hosts file is ASCII or UTF-8 text; "
                              "convert it, e.g. iconv -f UTF-16 -t UTF-8 hosts > hosts.utf8)"), message


def corpus() -> list[str]:
    """nodeset_agrees.txt without groups and wildcards: the command line has no groups file."""
    lines = (FIXTURES / "nodeset_agrees.txt").read_text().split("\n")
    return [l for l in lines if l and not l.startswith("#") and not any(c in l for c in "@*?")]


def test_corpus_matches_nodeset_through_the_command_line(tpush_bin, tmp_path):
    exprs = corpus()
    assert len(exprs) > 60
    request = "".join(json.dumps(["-S", "\\n", "-e", "--", e]) + "\n" for e in exprs)
    p = subprocess.run(["/usr/bin/python3", str(NODESET_BATCH)], input=request, text=True,
                       capture_output=True, cwd=tmp_path, timeout=300)
    if p.returncode == 3:
        pytest.skip("ClusterShell is not installed (apt-get install clustershell)")
    assert p.returncode == 0, p.stderr
    answers = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(answers) == len(exprs)
    mismatches = []
    for expr, answer in zip(exprs, answers):
        want = None if answer["rc"] != 0 else sorted(h for h in answer["out"].split("\n") if h)
        r = run(tpush_bin, tmp_path, "-w", expr)
        if r.returncode == 0:
            got = sorted(labels(r))
        elif b"no workers" in r.stderr:
            got = []
        else:
            got = None
        if got != want:
            mismatches.append((expr, want, got))
    assert not mismatches
