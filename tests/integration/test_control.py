import os
"""Run control: fan-out limit, Ctrl-C, bounded memory under backpressure, host-list
de-duplication and exclusion."""

import signal
import subprocess
import time

import pytest

from conftest import Summary, host_args, kill_group, split_prefixed


def test_fanout_limits_concurrent_sessions(farm, tpush, tmp_path):
    """-f 2: never more than 2 commands run at once; all 8 workers still run."""
    log = tmp_path / "events"
    hosts = farm.hosts[:8]
    cmd = (f'echo "$(date +%s.%N) 1" >> {log}; sleep 0.4; '
           f'echo "$(date +%s.%N) -1" >> {log}; echo done')
    r = tpush("-f", 2, *host_args(hosts), cmd)
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, hosts)
    assert all(lines[h] == ["done"] for h in hosts), str(r)
    events = sorted((float(t), int(d)) for t, d in (l.split() for l in log.read_text().splitlines()))
    assert len(events) == 16
    running = peak = 0
    for _, d in events:  # at equal times the end (-1) sorts first
        running += d
        peak = max(peak, running)
    assert peak <= 2, f"{peak} commands ran at once with -f 2"


def test_interrupt_twice_closes_and_exits_130(farm, tpush):
    """First SIGINT: forwarded, tpush says who still runs; a second within 2 s closes the
    channels, lists every worker as interrupted and exits 130 promptly. (The remote commands
    ignore SIGINT, so they outlive the first one whoever the farm logs in.)"""
    hosts = farm.hosts[:4]
    st = tpush.stream("--label", "index", *host_args(hosts),
                      'trap "" INT; echo "started $TPUSH_WORKER"; sleep 60')
    st.wait_for(lambda ls: sum(l.startswith("w") and "started" in l for l in ls) == 4, 60,
                "all workers to start")
    st.proc.send_signal(signal.SIGINT)
    st.wait_for_stderr("interrupt sent to 4 running worker(s)", 15)
    st.proc.send_signal(signal.SIGINT)
    r = st.finish(timeout=15)
    assert r.returncode == 130, str(r)
    s = Summary.parse(r.err)
    assert s.head_line is not None and s.interrupted == 4, str(r)
    assert set(s.reasons) == {"w0", "w1", "w2", "w3"}, str(r)
    assert all(v.startswith("interrupted") for v in s.reasons.values()), str(r)


def test_interrupt_with_tty_ends_remote_commands(farm, tpush, pty_farm):
    """--tty: the first Ctrl-C reaches the remote commands as ^C, even for root; they die of
    SIGINT, tpush exits 130 and no remote process is left."""
    hosts = farm.hosts[:4]
    marker = f"tty-interrupt-{os.getpid()}-{time.monotonic_ns()}"
    st = tpush.stream("--label", "index", "--tty", *host_args(hosts),
                      f'echo "started $TPUSH_WORKER"; sleep 61; echo {marker}')
    st.wait_for(lambda ls: sum("started" in l for l in ls) == 4, 60, "all workers to start")
    st.proc.send_signal(signal.SIGINT)
    r = st.finish(timeout=15)
    assert r.returncode == 130, str(r)
    s = Summary.parse(r.err)
    assert all(v == "killed by SIGINT" for v in s.reasons.values()) and len(s.reasons) == 4, str(r)
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    assert left == [], f"remote processes left behind: {left}\n{r}"


def rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def test_memory_bounded_when_stdout_is_not_read(farm, tpush):
    """Workers flood output while nobody reads tpush's stdout: tpush must stop reading the
    channels (backpressure) instead of buffering without limit."""
    hosts = farm.hosts[:4]
    proc = subprocess.Popen([str(tpush.binary), *host_args(hosts), "yes flood-line-of-some-length"],
                            env=tpush.env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        peak = 0
        end = time.monotonic() + 8
        while time.monotonic() < end and proc.poll() is None:  # sample RSS, never read stdout
            peak = max(peak, rss_kib(proc.pid))
            time.sleep(0.25)
        assert proc.poll() is None, f"tpush exited early with {proc.returncode}"
        assert peak < 256 * 1024, f"tpush RSS reached {peak // 1024} MiB with stdout not read"
    finally:
        kill_group(proc)
        proc.communicate(timeout=30)


def test_duplicates_dropped_and_exclusions(farm, tpush):
    """Duplicate hosts run once (first position kept); -x removes hosts."""
    h = farm.hosts
    r = tpush("-w", f"{h[0]},{h[1]},{h[0]},{h[2]}", "-w", h[1], "-x", h[2], "echo $TPUSH_WORKER/$TPUSH_NUM_WORKERS")
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, [h[0], h[1]])
    assert lines == {h[0]: ["0/2"], h[1]: ["1/2"]}, str(r)


@pytest.mark.parametrize("args", [["--no-such-option"], ["--connect-timeout", "soon"],
                                  ["--label", "bogus"], ["--host-key-check", "maybe"]])
def test_bad_options_are_usage_errors(farm, tpush, args):
    r = tpush(*args, *host_args(farm.hosts[:1]), "true", timeout=30)
    assert r.returncode == 2, str(r)
    assert r.err.startswith("tpush: error:") or "\ntpush: error:" in r.err, str(r)
