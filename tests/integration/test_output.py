"""Output: whole lines, in order, per stream; huge lines; missing final newlines; non-UTF-8
bytes; and a reader that goes away (`| head -1`)."""

import subprocess
import time

import pytest

from conftest import FARM_WORKERS, host_args, kill_group, output_lines, split_prefixed

GEN = r'''
import os, sys
w = int(os.environ["TPUSH_WORKER"])
mode = sys.argv[1]
out, err = sys.stdout.buffer, sys.stderr.buffer

def pad(i):  # distinct per worker and line, varying length: torn lines cannot pass
    return bytes([97 + (w + i) % 26]) * (i % 97)

if mode == "flood":
    n = int(sys.argv[2])
    for i in range(n):
        out.write(b"out w%d i%d %s\n" % (w, i, pad(i)))
        err.write(b"err w%d i%d %s\n" % (w, i, pad(i)))
        if i % 500 == 0:
            out.flush(); err.flush()
elif mode == "huge":
    big = bytes([65 + w % 26]) * (1 << 20)
    out.write(b"before w%d\n" % w)
    out.flush()
    if w % 2 == 0:
        out.write(big)                      # 1 MiB, no newline, then EOF
    else:
        out.write(big + b"\n")              # 1 MiB line, then more lines
        for i in range(100):
            out.write(b"after w%d i%d\n" % (w, i))
'''


@pytest.fixture
def gen(tmp_path):
    """Path of the output generator script (the workers share this machine's files)."""
    p = tmp_path / "gen.py"
    p.write_text(GEN)
    return p


def expected_flood(stream, w, n):
    return [f"{stream} w{w} i{i} " + chr(97 + (w + i) % 26) * (i % 97) for i in range(n)]


def test_flood_every_line_whole_once_in_order(farm, tpush, gen):
    """10,000 lines per worker on stdout and on stderr from >= 64 workers: every line
    present exactly once, whole, in per-worker order, each on the right stream."""
    n = 10_000
    r = tpush("-H", farm.hosts_file, f"/usr/bin/python3 {gen} flood {n}", timeout=600)
    assert r.returncode == 0, str(r)
    out = split_prefixed(r.out, farm.hosts)
    err = output_lines(r.err, farm.hosts)
    for w, h in enumerate(farm.hosts):
        exp_out, exp_err = expected_flood("out", w, n), expected_flood("err", w, n)
        if out[h] != exp_out:
            bad = next((i for i, (a, b) in enumerate(zip(out[h], exp_out)) if a != b), min(len(out[h]), n))
            pytest.fail(f"{h} stdout differs at line {bad}: got {len(out[h])} lines; "
                        f"{out[h][bad:bad + 1]!r} != {exp_out[bad:bad + 1]!r}")
        if err[h] != exp_err:
            bad = next((i for i, (a, b) in enumerate(zip(err[h], exp_err)) if a != b), min(len(err[h]), n))
            pytest.fail(f"{h} stderr differs at line {bad}: got {len(err[h])} lines; "
                        f"{err[h][bad:bad + 1]!r} != {exp_err[bad:bad + 1]!r}")
    s = r.summary()
    assert (s.total, s.ok) == (FARM_WORKERS, FARM_WORKERS), r.err[-2000:]


def test_output_after_a_long_pause_is_intact(farm, tpush, gen):
    """Sessions that have lived a few seconds give libssh2's untouched zero pages back to
    the kernel (Connection::tick); output that streams after that is still whole and in
    order, on both streams."""
    n, hosts = 3000, farm.hosts[:16]
    r = tpush(*host_args(hosts), f"sleep 3; /usr/bin/python3 {gen} flood {n}", timeout=120)
    assert r.returncode == 0, str(r)
    out = split_prefixed(r.out, hosts)
    err = output_lines(r.err, hosts)
    for w, h in enumerate(hosts):
        assert out[h] == expected_flood("out", w, n), h
        assert err[h] == expected_flood("err", w, n), h


def test_one_mebibyte_lines_arrive_whole(farm, tpush, gen):
    """1 MiB lines (with and without a final newline) from 16 workers at once arrive whole."""
    hosts = farm.hosts[:16]
    r = tpush(*host_args(hosts), f"/usr/bin/python3 {gen} huge", timeout=300)
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, hosts)
    for w, h in enumerate(hosts):
        big = chr(65 + w % 26) * (1 << 20)
        exp = [f"before w{w}", big]
        if w % 2:
            exp += [f"after w{w} i{i}" for i in range(100)]
        got = lines[h]
        assert len(got) == len(exp), f"{h}: {len(got)} lines, expected {len(exp)}"
        assert got == exp, f"{h}: lines differ (lengths {[len(x) for x in got[:4]]})"


def test_final_line_without_newline(farm, tpush):
    """A last line without a newline is printed, with a newline added after the prefix."""
    hosts = farm.hosts[:4]
    r = tpush(*host_args(hosts), 'printf "first\\nlast-$TPUSH_WORKER"', timeout=60)
    assert r.returncode == 0, str(r)
    assert r.out.endswith("\n"), str(r)
    lines = split_prefixed(r.out, hosts)
    for w, h in enumerate(hosts):
        assert lines[h] == ["first", f"last-{w}"], str(r)


def test_final_line_without_newline_raw(farm, tpush):
    """With -N the partial last line is printed as is."""
    r = tpush("-N", *host_args(farm.hosts[:1]), "printf 'first\\nno-newline'", timeout=60)
    assert r.returncode == 0, str(r)
    assert r.stdout == b"first\nno-newline", str(r)


def test_stderr_final_line_without_newline(farm, tpush):
    hosts = farm.hosts[:2]
    r = tpush(*host_args(hosts), 'printf "err-$TPUSH_WORKER" >&2', timeout=60)
    assert r.returncode == 0, str(r)
    err = output_lines(r.err, hosts)
    for w, h in enumerate(hosts):
        assert err[h] == [f"err-{w}"], str(r)


def test_non_utf8_bytes_pass_through(farm, tpush):
    hosts = farm.hosts[:2]
    r = tpush(*host_args(hosts), r"printf 'a\377\376\000b\n'", timeout=60)
    assert r.returncode == 0, str(r)
    for h in hosts:
        assert f"{h}: ".encode() + b"a\xff\xfe\x00b\n" in r.stdout, str(r)


def test_head_closes_pipe_quickly(farm, tpush):
    """`tpush ... 'yes' | head -1` ends promptly and quietly (exit 141 per the contract)."""
    hosts = farm.hosts[:4]
    script = ('"$TPUSH" -w "$HOSTS" yes | head -1; '
              'echo "tpush-exit=${PIPESTATUS[0]}" >&2')
    env = tpush.env(TPUSH=tpush.binary, HOSTS=",".join(hosts))
    t0 = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", script], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.communicate()
        pytest.fail("`tpush ... yes | head -1` did not end within 30s")
    elapsed = time.monotonic() - t0
    assert elapsed < 10, f"took {elapsed:.1f}s"
    lines = out.decode().splitlines()
    assert len(lines) == 1 and lines[0].endswith(": y"), out[:300]
    err = err.decode(errors="replace")
    assert "tpush-exit=141" in err, err[-2000:]
    noise = [l for l in err.splitlines() if not l.startswith("tpush-exit=")]
    assert not any("error" in l.lower() or "broken pipe" in l.lower() for l in noise), err[-2000:]


# ---------------------------------------------------------------------------
# Pipes get pdsh's exact format: dshbak and clubak (the real ones) are the oracles

def groups_of(tool_argv: list[str], text: str) -> list[str]:
    """The group headers `dshbak -c` / `clubak -b` print for `text` (their node sets)."""
    r = subprocess.run(tool_argv, input=text, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    return [lines[i + 1] for i in range(len(lines) - 2) if set(lines[i]) == {"-"} and set(lines[i + 2]) == {"-"}]


@pytest.mark.parametrize("label", ["host", "index"])
def test_identical_output_is_one_group_in_dshbak_and_clubak(farm, tpush, label):
    """12 workers of label widths 9 to 10 (127.0.1.1 ... 127.0.1.12), or w0 ... w11, each
    printing the same two lines: one group, whatever the width."""
    addresses = farm.addresses[:12]
    r = tpush("--label", label, "-p", farm.port, "-w", ",".join(addresses), "echo same; echo also same")
    assert r.returncode == 0, str(r)
    for line in r.out.splitlines():  # exactly LABEL: TEXT, one colon and one space
        lab, sep, text = line.partition(": ")
        assert sep and text in ("same", "also same") and " " not in lab, repr(line)
    dshbak = groups_of(["dshbak", "-c"], r.out)
    assert len(dshbak) == 1, dshbak
    clubak = groups_of(["clubak", "-b"], r.out)
    assert len(clubak) == 1, clubak
    labels = addresses if label == "host" else [f"w{i}" for i in range(12)]
    expanded = subprocess.run(["nodeset", "-e", clubak[0].split()[0]], capture_output=True, text=True,
                              timeout=60).stdout.split()
    assert sorted(expanded) == sorted(labels)
