"""Output modes: -b (gathered), --leader, --json, --out-dir, the status line on a terminal,
--fail-fast, and --failed / `tpush last`. Oracles where another tool defines the behaviour:
clubak -b for grouping, nodeset -e for folded node sets."""

import base64
import hashlib
import json
import os
import pty
import re
import select
import subprocess

from conftest import split_prefixed

RULE = "-" * 15


def gathered(text: str) -> list[tuple[str, str]]:
    """(header, body) of each group a -b style text holds, in order."""
    lines = text.split("\n")
    is_head = [i + 2 < len(lines) and lines[i] == RULE and lines[i + 2] == RULE for i in range(len(lines))]
    groups, i = [], 0
    while i < len(lines):
        if not is_head[i]:
            assert lines[i] == "", f"text outside any group: {lines[i]!r}"
            i += 1
            continue
        head, i, body = lines[i + 1], i + 3, []
        while i < len(lines) and not is_head[i]:
            body.append(lines[i])
            i += 1
        groups.append((head, "\n".join(body).rstrip("\n")))
    return groups


def expand(header: str) -> list[str]:
    """The workers a group header names, through nodeset -e; "(N)" must count them."""
    names, _, count = header.partition(" (")
    r = subprocess.run(["nodeset", "-e", names], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = r.stdout.split()
    assert count == (f"{len(out)})" if len(out) > 1 else ""), header
    return out


def as_sets(groups: list[tuple[str, str]], strip_space: bool = False) -> dict[frozenset, str]:
    # clubak keeps the space after "LABEL:"; tpush -b prints the text itself.
    return {frozenset(expand(h)): "\n".join(l[1:] if strip_space else l for l in b.split("\n")) for h, b in groups}


def test_gather_groups_as_clubak_does(farm, tpush):
    """-b: one group per distinct output, on each stream; the same groups clubak -b makes
    of the plain piped output; headers folded as nodeset folds them."""
    cmd = 'echo "class $((TPUSH_WORKER % 3))"; echo shared; [ $TPUSH_WORKER = 4 ] && echo err4 >&2; true'
    hosts = ["-p", farm.port, "-w", ",".join(farm.addresses)]  # labels without ':' (pdsh's format)
    plain = tpush(*hosts, cmd)
    assert plain.returncode == 0, str(plain)
    oracle = subprocess.run(["clubak", "-b"], input=plain.out, capture_output=True, text=True, timeout=60)
    r = tpush(*hosts, "-b", cmd)
    assert r.returncode == 0, str(r)
    ours = as_sets(gathered(r.out))
    assert ours == as_sets(gathered(oracle.stdout), strip_space=True)
    assert len(ours) == 3 and sum(len(s) for s in ours) == len(farm.addresses)
    groups_text = r.err.split("\ntpush: ")[0]  # the summary may follow (a slow run prints it)
    assert [(expand(h), b) for h, b in gathered(groups_text)] == [([farm.addresses[4]], "err4")]


def test_gather_lists_silent_workers(farm, tpush):
    hosts = farm.addresses[:5]
    r = tpush("-p", farm.port, "-w", ",".join(hosts), "-b", '[ $TPUSH_WORKER = 2 ] && echo only2; true')
    assert r.returncode == 0, str(r)
    groups = as_sets(gathered(r.out))
    assert groups == {frozenset([hosts[2]]): "only2", frozenset(hosts[:2] + hosts[3:]): "(no output)"}


def test_leader_streams_one_worker_and_shows_only_differences(farm, tpush):
    hosts = farm.addresses[:8]
    cmd = 'echo step 1; [ $TPUSH_WORKER = 5 ] && echo diverged || echo step 2'
    r = tpush("-p", farm.port, "-w", ",".join(hosts), "--leader", cmd)
    assert r.returncode == 0, str(r)
    live, _, rest = r.out.partition(RULE)
    assert split_prefixed(live, [hosts[0]]) == {hosts[0]: ["step 1", "step 2"]}
    assert as_sets(gathered(RULE + rest)) == {frozenset([hosts[5]]): "step 1\ndiverged"}
    same = [l for l in r.err.splitlines() if "the same as the leader" in l]
    assert len(same) == 1 and set(expand(same[0].split("stdout of ")[1].split(":")[0])) == set(hosts) - {hosts[5]}
    # --leader=LABEL picks the worker; a label not in the run is a usage error naming it.
    r = tpush("-p", farm.port, "-w", ",".join(hosts), f"--leader={hosts[5]}", cmd)
    assert split_prefixed(r.out.partition(RULE)[0], [hosts[5]]) == {hosts[5]: ["step 1", "diverged"]}
    bad = tpush("-p", farm.port, "-w", ",".join(hosts), "--leader=nosuch", "true")
    assert bad.returncode == 2 and "--leader=nosuch: no such worker" in bad.err, str(bad)


def test_json_every_line_parses_and_bytes_survive(farm, tpush):
    """--json on every worker: text lines, a non-UTF-8 line, a last line without newline;
    each object parses, bytes round-trip, one worker object each, then the summary."""
    cmd = r"""printf 'hello %s\n' $TPUSH_WORKER; printf '\377\376\n'; printf 'err\n' >&2; printf 'tail'; exit $((TPUSH_WORKER == 3))"""
    r = tpush("-H", farm.hosts_file, "--json", cmd)
    assert r.returncode == 1, str(r)
    objs = [json.loads(line) for line in r.out.splitlines()]
    lines = [o for o in objs if o["type"] == "line"]
    workers = [o for o in objs if o["type"] == "worker"]
    assert objs[-1]["type"] == "summary" and [o for o in objs if o["type"] == "summary"] == [objs[-1]]
    assert objs[-1]["workers"] == len(farm.hosts) and objs[-1]["ok"] == len(farm.hosts) - 1
    assert objs[-1]["failed"] == 1 and objs[-1]["exit_code"] == 1
    assert sorted(o["worker"] for o in workers) == sorted(farm.hosts)
    for i, h in enumerate(farm.hosts):
        mine = [o for o in lines if o["worker"] == h]
        out = b"".join((o["text"].encode() if "text" in o else base64.b64decode(o["bytes"])) +
                       (b"" if o.get("newline", True) is False else b"\n")
                       for o in mine if o["stream"] == "stdout")
        assert out == b"hello %d\n\xff\xfe\ntail" % i
        assert [o["text"] for o in mine if o["stream"] == "stderr"] == ["err"]
        (w,) = [o for o in workers if o["worker"] == h]
        assert w["outcome"] == ("failed" if i == 3 else "ok") and w["exit_status"] == (1 if i == 3 else 0)
        a = farm.addresses[i]
        assert w["host"] == a and w["address"] == f"{a}:{farm.port}" and w["signal"] is None
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", w["started"]) and w["seconds"] >= 0


FLOOD = "import os,sys; w=os.environ['TPUSH_WORKER']; sys.stdout.write(''.join(f'w{w} line {i}\\n' for i in range(10000))); sys.stderr.write(f'e{w}\\n')"


def test_out_dir_files_match_what_each_worker_printed(farm, tpush, tmp_path):
    """--out-dir with 64+ workers x 10,000 lines: each file's checksum is that of the
    worker's own output; results.json lists every worker and the summary."""
    d = tmp_path / "out"
    r = tpush("-H", farm.hosts_file, "--out-dir", d, "-q", f'/usr/bin/python3 -c "{FLOOD}"', timeout=600)
    assert r.returncode == 0, str(r)
    for i, h in enumerate(farm.hosts):
        want = "".join(f"w{i} line {n}\n" for n in range(10000)).encode()
        assert hashlib.sha256((d / f"{h}.out").read_bytes()).hexdigest() == hashlib.sha256(want).hexdigest(), h
        assert (d / f"{h}.err").read_bytes() == b"e%d\n" % i
    res = json.loads((d / "results.json").read_text())
    assert sorted(w["worker"] for w in res["workers"]) == sorted(farm.hosts)
    assert all(w["outcome"] == "ok" for w in res["workers"]) and res["summary"]["ok"] == len(farm.hosts)
    # The terminal side saw the same lines.
    assert len(r.out.splitlines()) == 10000 * len(farm.hosts)


def test_out_dir_write_failure_is_reported_and_output_kept(farm, tpush, tmp_path):
    """A worker's file that cannot be written (it is /dev/full): said at once, naming the
    worker and the file; its output still reaches stdout; exit status 1."""
    d = tmp_path / "out"
    d.mkdir()
    h, other = farm.addresses[:2]
    (d / f"{h}.out").symlink_to("/dev/full")
    r = tpush("-p", farm.port, "-w", f"{h},{other}", "--out-dir", d, "echo kept")
    assert r.returncode == 1, str(r)
    assert f"tpush: {h}: cannot write {d}/{h}.out: No space left on device" in r.err
    assert split_prefixed(r.out, [h, other]) == {h: ["kept"], other: ["kept"]}
    assert (d / f"{other}.out").read_text() == "kept\n"
    bad = tpush("-p", farm.port, "-w", h, "--out-dir", d / f"{other}.out", "true")
    assert bad.returncode == 255 and "--out-dir" in bad.err and "cannot create the directory" in bad.err, str(bad)


def test_fail_fast_stops_the_others(farm, tpush):
    """--fail-fast at 64 workers, one failing at once while the others sleep: the others
    are stopped, the summary names the first failure, exit status is the failure's."""
    r = tpush("-H", farm.hosts_file, "--fail-fast", '[ $TPUSH_WORKER = 3 ] && exit 7; exec sleep 300', timeout=90)
    assert r.returncode == 1, str(r)
    s = r.summary()
    assert (s.failed, s.stopped, s.ok) == (1, len(farm.hosts) - 1, 0), str(r)
    assert s.reasons[farm.hosts[3]] == "exit 7"
    assert all(v.startswith(("stopped: ", "not started: ")) and f"{farm.hosts[3]} failed first (exit 7)" in v
               for k, v in s.reasons.items() if k in farm.hosts and k != farm.hosts[3])
    assert f"tpush: --fail-fast: {farm.hosts[3]} failed first (exit 7)" in r.err


def test_failed_reruns_only_what_did_not_succeed(farm, tpush, tmp_path):
    """A run with 3 unreachable workers, then --failed: exactly those 3; `tpush last` shows
    the last run; a target whose last run succeeded everywhere has nothing to rerun."""
    from faults import unused_address_port
    dead = [":".join(map(str, unused_address_port())) for _ in range(3)]
    hosts = tmp_path / "hosts"
    hosts.write_text("".join(h + "\n" for h in farm.hosts[:20]) + "".join(d + "\n" for d in dead))
    first = tpush("-H", hosts, "true")
    assert first.returncode == 255 and first.summary().unreachable == 3, str(first)
    listed = tpush("-H", hosts, "--failed", "workers", "--json")
    assert listed.returncode == 0, str(listed)
    assert sorted(w["label"] for w in json.loads(listed.out)) == sorted(dead)
    again = tpush("-H", hosts, "--failed", "echo hi")
    assert again.returncode == 255 and again.summary().total == 3 and again.out == "", str(again)
    last = tpush("last")
    assert last.returncode == 0 and "--failed 'echo hi'" in last.out and "3 workers: 0 ok" in last.out, str(last)
    target = tpush("-H", hosts, "last")
    assert "23 workers: 20 ok, 0 failed, 3 unreachable" in target.out, str(target)
    ok = tpush("-p", farm.port, "-w", farm.hosts[0], "true")
    assert ok.returncode == 0
    nothing = tpush("-p", farm.port, "-w", farm.hosts[0], "--failed", "true")
    assert nothing.returncode == 0 and "nothing to run" in nothing.err, str(nothing)
    never = tpush("-p", farm.port, "-w", farm.hosts[1], "--failed", "true")
    assert never.returncode == 2 and "no earlier run on these workers" in never.err, str(never)


def run_on_pty(tpush, *args) -> tuple[int, bytes]:
    """Runs tpush with stdout and stderr on one pseudo-terminal; its exit code and every
    byte it wrote there."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(tpush.binary), *map(str, args)], env=tpush.env(), stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    raw = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        assert ready, "tpush hung on a pty"
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the pty's other side closed
            break
        if not chunk:
            break
        raw += chunk
    os.close(master)
    return proc.wait(timeout=60), raw


def test_status_line_on_a_terminal_never_tears_a_line(farm, tpush):
    """On a pty (stdout and stderr both), a run of a few seconds shows the status line, and
    every output line still arrives whole: the status is erased before each one."""
    hosts = farm.addresses[:16]
    cmd = 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do echo "line $i of $TPUSH_WORKER"; sleep 0.2; done'
    code, raw = run_on_pty(tpush, "-p", farm.port, "-w", ",".join(hosts), cmd)
    assert code == 0
    text = raw.decode().replace("\r\n", "\n")  # the pty's own newline translation
    status = re.compile(r"\r(?:tpush: \d+/16 done[^\r\n\x1b]*)?\x1b\[K")
    assert re.search(r"\rtpush: \d+/16 done, \d+ running; slowest \S+ \(\d+ s\)\x1b\[K", text), repr(text[-500:])
    seen = {h: [] for h in hosts}
    for segment in text.split("\n"):
        parts = status.split(segment)
        assert all(p == "" for p in parts[:-1]), f"a line was torn by the status line: {segment!r}"
        line = parts[-1]
        if not line or line.startswith("tpush: "):
            continue
        m = re.fullmatch(r"(\S+):\s+(line \d+ of \d+)", line)
        assert m and m.group(1) in seen, repr(line)
        seen[m.group(1)].append(m.group(2))
    for i, h in enumerate(hosts):
        assert seen[h] == [f"line {n} of {i}" for n in range(1, 16)]


HOSTILE = (r"""printf 'fine\n'; if [ "$TPUSH_WORKER" = 1 ]; then """
           r"""printf 'ok\r%s: forged\n\033[1A\033[2Kerased\n\033[31mred\n\342\200\256reversed\n' "$1"; """
           r"""printf 'e\bE\033]0;title\007\n' >&2; fi""")


def test_a_hostile_worker_cannot_forge_lines_on_a_terminal(farm, tpush):
    """On a terminal, worker 1's carriage return, cursor movements and title sequence are
    shown escaped (^M, ^[), so it cannot overwrite its label or forge worker 0's line;
    its colour passes and is reset. --raw, and a pipe, get the bytes unchanged."""
    hosts = farm.addresses[:2]
    cmd = HOSTILE.replace('"$1"', hosts[0])
    code, raw = run_on_pty(tpush, "-q", "-p", farm.port, "-w", ",".join(hosts), cmd)
    assert code == 0, raw
    text = raw.decode().replace("\r\n", "\n")
    assert "\r" not in text, repr(text)
    escapes = re.findall(r"\x1b\[[0-9;]*m|\x1b", text)
    assert set(escapes) <= {"\x1b[31m", "\x1b[0m"}, repr(text)
    lines = text.splitlines()
    assert [l for l in lines if l.startswith(hosts[0] + ":")] == [f"{hosts[0]}: fine"], repr(text)
    for line in [f"ok^M{hosts[0]}: forged", "^[[1A^[[2Kerased", "\x1b[31mred\x1b[0m",
                 "<U+202E>reversed", "e^HE^[]0;title^G"]:
        assert f"{hosts[1]}: {line}" in lines, (line, text)

    code, raw = run_on_pty(tpush, "-q", "--raw", "-p", farm.port, "-w", ",".join(hosts), cmd)
    assert code == 0 and f"ok\r{hosts[0]}: forged".encode() in raw and b"\x1b[1A" in raw, raw
    piped = tpush("-p", farm.port, "-w", ",".join(hosts), cmd)
    assert f"{hosts[1]}: ok\r{hosts[0]}: forged\n".encode() in piped.stdout, str(piped)
    assert f"{hosts[1]}: e\bE\x1b]0;title\x07\n".encode() in piped.stderr, str(piped)
