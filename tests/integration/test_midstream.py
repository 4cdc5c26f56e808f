"""Failures after the command started: a signal kills the command, the session's sshd is
killed, the network is partitioned, the host freezes.  Lines received before stay."""

import os
import signal
import subprocess
import time

import pytest

import faults as faults_mod
from conftest import host_args, split_prefixed

LABELS = [f"w{i}" for i in range(4)]

# Worker 0 names its session process ($PPID is `sshd: root@notty`) and ticks for a
# minute; the others finish at once.
TICKER = ('if [ "$TPUSH_WORKER" = 0 ]; then echo "pid $PPID"; i=0; '
          'while [ $i -lt 1200 ]; do echo "tick $i"; i=$((i+1)); sleep 0.05; done; fi; '
          'echo "done $TPUSH_WORKER"')


def test_command_killed_by_signal(farm, tpush):
    hosts = farm.hosts[:4]
    r = tpush(*host_args(hosts), 'echo "start $TPUSH_WORKER"; [ "$TPUSH_WORKER" = 1 ] && kill -9 $$; '
              'echo "end $TPUSH_WORKER"', timeout=60)
    assert r.returncode == 1, str(r)
    lines = split_prefixed(r.out, hosts)
    assert lines[hosts[1]] == ["start 1"], str(r)
    s = r.summary()
    assert s.reasons == {hosts[1]: "killed by SIGKILL"}, str(r)
    assert (s.ok, s.failed, s.unreachable, s.timed_out) == (3, 1, 0, 0), str(r)


def start_ticker(farm, tpush, *extra):
    st = tpush.stream("--label", "index", *extra, *host_args(farm.hosts[:4]), TICKER)
    st.wait_for(lambda ls: any(l.startswith("w0: tick 5") for l in ls), 60, "w0 to tick 5")
    pid_line = next(l for _, l in st.lines["out"] if l.startswith(b"w0: pid "))
    return st, int(pid_line.split()[2])


def check_lost(r, st, since, limit):
    assert r.returncode == 255, str(r)
    lines = split_prefixed(r.out, LABELS)
    for w in (1, 2, 3):
        assert lines[f"w{w}"] == [f"done {w}"], str(r)
    w0 = lines["w0"]
    assert w0[0].startswith("pid ") and "done 0" not in w0, str(r)
    ticks = w0[1:]
    assert len(ticks) >= 6 and ticks == [f"tick {i}" for i in range(len(ticks))], \
        f"lines received before the failure were not kept in order: {ticks[:10]}...\n{r}"
    s = r.summary()
    assert set(s.reasons) == {"w0"} and s.reasons["w0"].startswith("connection lost"), str(r)
    assert s.lost == 1 and s.timed_out == 0 and s.ok == 3, str(r)
    took = st.exit_time - since
    assert took < limit, f"loss detected {took:.1f}s after the fault (limit {limit}s)\n{r}"


def test_session_killed_mid_stream(farm, tpush):
    """kill -9 of the worker's session sshd: `connection lost`, earlier lines kept."""
    st, pid = start_ticker(farm, tpush)
    t = time.monotonic() - st.t0
    faults_mod.kill_session(pid, signal.SIGKILL)
    r = st.finish(timeout=60)
    check_lost(r, st, t, 15)


def test_partition_mid_stream_detected(farm, tpush, faults):
    """All packets of worker 0 dropped mid-stream; with --alive-interval 1 the silence is
    detected as `connection lost` within ~10 s (3 periods plus TCP_USER_TIMEOUT slack)."""
    st, _ = start_ticker(farm, tpush, "--alive-interval", 1)
    t = time.monotonic() - st.t0
    faults.partition(farm.addresses[0], farm.port)
    r = st.finish(timeout=60)
    check_lost(r, st, t, 15)


def test_frozen_host_mid_stream_detected(farm, tpush):
    """SIGSTOP of the session sshd (the kernel still ACKs): detected by the alive rule."""
    st, pid = start_ticker(farm, tpush, "--alive-interval", 1)
    t = time.monotonic() - st.t0
    faults_mod.kill_session(pid, signal.SIGSTOP)
    try:
        r = st.finish(timeout=60)
    finally:
        try:  # the autouse cleanup kills it too; SIGKILL works on stopped processes
            faults_mod.kill_session(pid, signal.SIGKILL)
        except (ValueError, ProcessLookupError):
            pass
    check_lost(r, st, t, 15)


@pytest.mark.parametrize("seconds", [2])
def test_command_timeout(farm, tpush, seconds):
    """-u bounds the whole command: `timed out after Ns`, exit 255, the others unaffected."""
    hosts = farm.hosts[:3]
    r = tpush("-u", seconds, *host_args(hosts), '[ "$TPUSH_WORKER" = 2 ] && sleep 60; echo fin',
              timeout=60)
    assert r.returncode == 255, str(r)
    assert r.elapsed < 20, str(r)
    lines = split_prefixed(r.out, hosts)
    assert lines[hosts[0]] == ["fin"] and lines[hosts[1]] == ["fin"] and lines[hosts[2]] == [], str(r)
    s = r.summary()
    assert set(s.reasons) == {hosts[2]} and s.reasons[hosts[2]].startswith(f"timed out after {seconds}"), str(r)
    assert s.timed_out == 1, str(r)


def test_tpush_itself_stopped_and_continued_loses_no_worker(farm, tpush):
    """Ctrl-Z then fg (SIGSTOP, SIGCONT) for longer than the silence limit: the workers
    kept talking into tpush's sockets, so every one ends ok with every line. Found by the
    soak (tests/soak/repro_paused_client.py): each was reported lost before."""
    hosts = farm.hosts[:4]
    st = tpush.stream("--alive-interval", 1, *host_args(hosts),
                      'i=0; while [ $i -lt 40 ]; do echo "line $i"; i=$((i+1)); sleep 0.1; done')
    st.wait_for(lambda ls: len(ls) >= 4, 60, "the first lines")
    st.proc.send_signal(signal.SIGSTOP)
    time.sleep(4)  # the pause itself: longer than 3 alive intervals
    st.proc.send_signal(signal.SIGCONT)
    r = st.finish(timeout=60)
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, hosts)
    assert all(lines[h] == [f"line {i}" for i in range(40)] for h in hosts), str(r)


def client_sockets(port: int) -> list[tuple[int, int]]:
    """(Recv-Q, Send-Q) of every established socket connected to loopback `port`."""
    out = subprocess.run(["ss", "-Htn", "state", "established", f"( dport = :{port} )"],
                         capture_output=True, text=True, check=True, timeout=10).stdout
    return [(int(f[0]), int(f[1])) for f in (line.split() for line in out.splitlines()) if len(f) >= 2]


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_tpush_stopped_while_connecting_does_not_time_out(tpush, home, faults):
    """Stopped during the handshake for longer than --connect-timeout, then continued: the
    server's replies wait in tpush's socket, so the connect deadline has not passed for
    the worker. Found by the soak (repro_paused_client.py --during connect)."""
    other = faults.other_sshd()
    with open(home / ".ssh" / "known_hosts", "a") as f:
        f.write(other.own_known_hosts_lines())
    os.kill(other.sshd.pid, signal.SIGSTOP)  # the kernel still completes TCP; no banner yet
    try:
        # The deadline leaves this test 5 s to see the connection before tpush gives up on
        # the silent server, also on a machine busy with the rest of the suite.
        st = tpush.stream("--connect-timeout", 5, "-w", other.host, "echo hello")
        wait_until(lambda: client_sockets(other.port) or st.proc.poll() is not None, 30, "tpush's TCP connection")
        assert st.proc.poll() is None, f"tpush ended before it was stopped: {st.finish(10)}"
        st.proc.send_signal(signal.SIGSTOP)
    finally:
        os.kill(other.sshd.pid, signal.SIGCONT)
    wait_until(lambda: any(q > 0 for q, _ in client_sockets(other.port)), 30, "the banner in tpush's socket")
    time.sleep(6)  # the pause itself: longer than the connect timeout
    st.proc.send_signal(signal.SIGCONT)
    r = st.finish(timeout=60)
    assert r.returncode == 0, str(r)
    assert r.out == f"{other.host}: hello\n", str(r)
