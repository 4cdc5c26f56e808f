"""--diff: the reference output once (the most common, or the leader's), then every other
distinct output as a unified diff against it. Oracles: GNU `diff -u` of the same two
outputs must write the same hunks, `patch` must turn the reference into each other output,
`nodeset -e` must expand each header to the workers that printed that output."""

import subprocess
from pathlib import Path

RULE = "-" * 15
BASE = "".join(f"line {i}\n" for i in range(1, 21))
# What each of 6 workers prints (cat of its file): 0, 1 and 3 the same, the others not.
OUTPUTS = [
    BASE,
    BASE,
    BASE.replace("line 5\n", "line five\n").replace("line 18\n", ""),  # two hunks
    BASE,
    "new first\nnew second\n" + BASE[:-1],  # lines before, no newline at the end
    "",  # nothing: compared as an empty output
]


def expand(names: str) -> list[str]:
    """The workers a header names, through nodeset -e; "(N)" must count them."""
    names, _, count = names.partition(" (")
    r = subprocess.run(["nodeset", "-e", names], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = r.stdout.split()
    assert count == (f"{len(out)})" if len(out) > 1 else ""), names
    return out


def parse(text: str) -> tuple[tuple[str, str] | None, list[tuple[str, str, str]]]:
    """--diff's text on one stream: the reference block (header, body) if there is one,
    then each diff as (the --- names, the +++ names, the text from "---" on)."""
    lines = text.splitlines(keepends=True)
    ref, i = None, 0
    if lines and lines[0] == RULE + "\n":
        assert lines[2] == RULE + "\n", text
        i = 3
        while i < len(lines) and not lines[i].startswith("--- "):
            i += 1
        ref = (lines[1].rstrip("\n"), "".join(lines[3:i]))
    diffs = []
    while i < len(lines):
        assert lines[i].startswith("--- ") and lines[i + 1].startswith("+++ "), lines[i:]
        j = i + 2
        while j < len(lines) and lines[j][0] in " -+@\\" and not (
                lines[j].startswith("--- ") and j + 1 < len(lines) and lines[j + 1].startswith("+++ ")):
            j += 1
        diffs.append((lines[i][4:].rstrip("\n"), lines[i + 1][4:].rstrip("\n"), "".join(lines[i:j])))
        i = j
    return ref, diffs


def hunks(diff: str) -> str:
    """The part of a diff from its first "@@" on."""
    at = diff.find("\n@@ ")
    return diff[at + 1:] if at >= 0 else ""


def check_against_diff_u(tmp_path: Path, reference: str, other: str, diff: str) -> None:
    """The hunks are diff -u's for the same outputs, and patch makes `other` of `reference`."""
    ref_file, other_file, patch_file, patched = (tmp_path / n for n in ("ref", "other", "patch", "patched"))
    ref_file.write_text(reference)
    other_file.write_text(other)
    gnu = subprocess.run(["diff", "-u", ref_file, other_file], capture_output=True, text=True, timeout=60)
    assert gnu.returncode == 1, gnu.stderr
    assert hunks(diff) == hunks(gnu.stdout)
    patch_file.write_text(diff)
    p = subprocess.run(["patch", "-s", "-o", patched, ref_file, patch_file], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert patched.read_text() == other


def run_diff(farm, tpush, tmp_path: Path, *extra: str, outputs=OUTPUTS, stream: str = "out"):
    d = tmp_path / "outputs"
    d.mkdir(exist_ok=True)
    for w, text in enumerate(outputs):
        (d / str(w)).write_text(text)
    hosts = farm.addresses[:len(outputs)]
    cmd = f"cat {d}/$TPUSH_WORKER" + (" >&2" if stream == "err" else "")
    r = tpush("-p", farm.port, "-w", ",".join(hosts), *extra, cmd)
    assert r.returncode == 0, str(r)
    return hosts, r


def without_summary(err: str) -> str:
    """stderr up to the summary (a slow run prints one) and tpush's own lines."""
    return "".join(l for l in err.splitlines(keepends=True) if not l.startswith("tpush: "))


def test_diff_prints_the_most_common_output_once_then_diff_u_of_each_other(farm, tpush, tmp_path):
    hosts, r = run_diff(farm, tpush, tmp_path, "--diff")
    ref, diffs = parse(r.out)
    assert ref is not None, str(r)
    assert expand(ref[0]) == [hosts[0], hosts[1], hosts[3]] and ref[1] == BASE
    # One diff per other distinct output, in the order of their first worker, each
    # naming the reference's workers and its own.
    assert [(expand(a), expand(b)) for a, b, _ in diffs] == [
        ([hosts[0], hosts[1], hosts[3]], [hosts[w]]) for w in (2, 4, 5)]
    for (_, _, diff), w in zip(diffs, (2, 4, 5)):
        check_against_diff_u(tmp_path, BASE, OUTPUTS[w], diff)
    assert "\\ No newline at end of file" in diffs[1][2]
    assert hunks(diffs[0][2]).count("@@ ") == 2
    assert without_summary(r.err) == ""


def test_diff_with_gather_prints_the_same(farm, tpush, tmp_path):
    _, plain = run_diff(farm, tpush, tmp_path, "--diff")
    _, gathered = run_diff(farm, tpush, tmp_path, "--diff", "-b")
    assert gathered.out == plain.out and gathered.out.startswith(RULE)


def test_diff_with_leader_compares_with_the_leader(farm, tpush, tmp_path):
    """The leader (w2 here, alone in its group) streams live; its output is the reference,
    not printed again; every other output, the most common one too, is a diff against it."""
    hosts, r = run_diff(farm, tpush, tmp_path, "--diff", "--leader=" + farm.addresses[2])
    live, sep, rest = r.out.partition("--- ")
    assert live == "".join(f"{hosts[2]}: {l}\n" for l in OUTPUTS[2].splitlines())
    ref, diffs = parse(sep + rest)
    assert ref is None
    assert [(expand(a), expand(b)) for a, b, _ in diffs] == [
        ([hosts[2]], [hosts[0], hosts[1], hosts[3]]), ([hosts[2]], [hosts[4]]), ([hosts[2]], [hosts[5]])]
    for (_, _, diff), w in zip(diffs, (0, 4, 5)):
        check_against_diff_u(tmp_path, OUTPUTS[2], OUTPUTS[w], diff)
    assert "the same as the leader" not in r.err  # the leader stands alone

    # The default leader (w0) is in the most common group: one line names that group.
    hosts, r = run_diff(farm, tpush, tmp_path, "--diff", "--leader")
    live, sep, rest = r.out.partition("--- ")
    assert live == "".join(f"{hosts[0]}: {l}\n" for l in BASE.splitlines())
    ref, diffs = parse(sep + rest)
    assert ref is None and [expand(b) for _, b, _ in diffs] == [[hosts[2]], [hosts[4]], [hosts[5]]]
    for (_, _, diff), w in zip(diffs, (2, 4, 5)):
        check_against_diff_u(tmp_path, BASE, OUTPUTS[w], diff)
    same = [l for l in r.err.splitlines() if "the same as the leader" in l]
    assert len(same) == 1 and expand(same[0].split("stdout of ")[1].split(":")[0]) == [hosts[0], hosts[1], hosts[3]]


def test_diff_on_stderr(farm, tpush, tmp_path):
    """stderr is compared apart from stdout and goes to stderr; here the most common is
    silence, which is named on the --- lines but not printed."""
    errs = ["", "warning: disk 91%\n", "", "", "warning: disk 97%\nretrying\n", ""]
    hosts, r = run_diff(farm, tpush, tmp_path, "--diff", outputs=errs, stream="err")
    # stdout as -b prints it: everyone printed nothing there.
    stdout_ref, stdout_diffs = parse(r.out)
    assert stdout_ref is not None and stdout_ref[1] == "(no output)\n" and stdout_diffs == [], r.out
    assert expand(stdout_ref[0]) == hosts
    ref, diffs = parse(without_summary(r.err))
    assert ref is None, r.err
    silent = [hosts[0], hosts[2], hosts[3], hosts[5]]
    assert [(expand(a), expand(b)) for a, b, _ in diffs] == [(silent, [hosts[1]]), (silent, [hosts[4]])]
    for (_, _, diff), w in zip(diffs, (1, 4)):
        check_against_diff_u(tmp_path, "", errs[w], diff)


def test_diff_with_json_is_a_usage_error(farm, tpush):
    r = tpush("-p", farm.port, "-w", farm.addresses[0], "--diff", "--json", "true")
    assert r.returncode == 2, str(r)
    assert "tpush: error: --json does not go with --diff" in r.err and r.out == ""
