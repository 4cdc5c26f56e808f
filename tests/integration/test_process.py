"""kill PATTERN, kill --tpu, ps, logs and detached jobs against the real sshd farm.

The farm's workers all run on this machine, so every test matches only processes that
carry a marker unique to the test (and, where workers start their own, to the worker)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import host_args, output_lines

STUBBORN = ("import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "f = open(sys.argv[2]) if len(sys.argv) > 2 else None; "
            "print('ready', flush=True); time.sleep(1000)")
PLAIN = "import sys, time; print('ready', flush=True); time.sleep(1000)"


def marker(what: str) -> str:
    return f"tpush-{what}-{uuid.uuid4().hex[:12]}"


def alive(pid: int) -> bool:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return raw[raw.rindex(")") + 2] not in "ZX"


def wait_gone(pid: int, timeout: float = 10) -> bool:
    end = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.02)
    return not alive(pid)


@pytest.fixture
def procs():
    """start(code, *args) -> pid of a local python3 process (ready once it printed 'ready');
    whatever is still running is killed at teardown."""
    started: list[subprocess.Popen] = []

    def start(code: str, *args: str) -> int:
        p = subprocess.Popen(["python3", "-c", code, *args], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        started.append(p)
        assert p.stdout.readline() == b"ready\n"
        return p.pid

    yield start
    for p in started:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=10)


def lines_for(r, hosts):
    return output_lines(r.out, hosts)


def test_kill_term_then_kill_after_grace(farm, tpush, procs):
    """TERM for all; the one that ignores TERM gets KILL after the grace; both reported."""
    m = marker("kill")
    plain = procs(PLAIN, m)
    stubborn = procs(STUBBORN, m)
    host = farm.hosts[0]
    t0 = time.monotonic()
    r = tpush(*host_args([host]), "kill", "--grace", "1", m)
    assert r.returncode == 0, str(r)
    assert time.monotonic() - t0 >= 1
    out = lines_for(r, [host])[host]
    assert any(l.startswith(f"killed {plain} ") and m in l for l in out), str(r)
    assert any(l.startswith(f"killed {stubborn} ") for l in out), str(r)
    assert any(l.startswith(f"KILLed {stubborn} ") for l in out), str(r)
    assert not any(l.startswith(f"KILLed {plain} ") for l in out), str(r)
    assert wait_gone(plain) and wait_gone(stubborn)


def test_kill_nothing_matched_is_not_a_failure(farm, tpush):
    """No match on any worker: `nothing matched` everywhere, exit 0. The remote shell that
    runs the helper holds the pattern in its own command line and must not match it."""
    hosts = farm.hosts[:3]
    r = tpush(*host_args(hosts), "kill", marker("none"))
    assert r.returncode == 0, str(r)
    assert lines_for(r, hosts) == {h: ["nothing matched"] for h in hosts}, str(r)


def test_kill_pattern_starting_with_dash_and_signal(farm, tpush, procs):
    """`kill -s INT -- -PATTERN`: a leading '-' is a pattern after --; -s picks the signal."""
    m = "-" + marker("dash")
    pid = procs(PLAIN, m)
    host = farm.hosts[0]
    r = tpush(*host_args([host]), "kill", "-s", "INT", "--", m)
    assert r.returncode == 0, str(r)
    assert any(l.startswith(f"killed {pid} ") for l in lines_for(r, [host])[host]), str(r)
    assert wait_gone(pid)


def test_kill_on_many_workers(farm, tpush):
    """Each worker starts its own job (setsid, so it outlives the session); one kill stops
    them all. The workers share this machine, so each sees every job: the union of the
    reports must cover every job, and all must be gone."""
    hosts = farm.hosts[:4]
    m = marker("many")
    r = tpush("--label", "index", *host_args(hosts),
              f"setsid sh -c 'sleep 1000; : {m}-'\"$TPUSH_WORKER\" </dev/null >/dev/null 2>&1 & echo $!")
    assert r.returncode == 0, str(r)
    pids = [int(v[0]) for v in output_lines(r.out, ["w0", "w1", "w2", "w3"]).values()]
    assert all(alive(p) for p in pids)
    r = tpush("--label", "index", *host_args(hosts), "kill", f"{m}-[0-9]+")
    assert r.returncode == 0, str(r)
    reported = {int(l.split()[1]) for v in output_lines(r.out, ["w0", "w1", "w2", "w3"]).values()
                for l in v if l.startswith("killed ")}
    assert set(pids) <= reported, str(r)
    assert all(wait_gone(p) for p in pids), str(r)


def test_kill_bad_usage(farm, tpush):
    host = farm.hosts[0]
    for args, needle in ((["kill"], "needs a PATTERN"),
                         (["kill", "a(b"], "not an extended regex"),
                         (["kill", "-s", "BOGUS", "x"], "unknown signal"),
                         (["kill", "--tpu", "python"], "takes no PATTERN")):
        r = tpush(*host_args([host]), *args)
        assert r.returncode == 2, str(r)
        assert needle in r.err, str(r)


def test_kill_tpu_frees_device_and_removes_lockfiles(farm, tpush, procs, tmp_path):
    """A stand-in device held open by a TERM-ignoring process plus the lock files:
    the holder is stopped (TERM, then KILL), the lock file and log dir removed."""
    dev = tmp_path / "accel0"
    dev.write_text("")
    lock, logs = tmp_path / "libtpu_lockfile", tmp_path / "tpu_logs"
    lock.write_text("")
    (logs / "sub").mkdir(parents=True)
    holder = procs(STUBBORN, marker("holder"), str(dev))
    host = farm.hosts[0]
    env = tpush.env(TPUSH_TPU_DEVICES=f"{tmp_path}/accel* {tmp_path}/vfio/*",
                    TPUSH_TPU_LOCKFILES=f"{lock} {logs}")
    r = tpush(*host_args([host]), "kill", "--tpu", "--grace", "0.5", env=env)
    assert r.returncode == 0, str(r)
    out = lines_for(r, [host])[host]
    assert any(l.startswith(f"killed {holder} ") for l in out), str(r)
    assert any(l.startswith(f"KILLed {holder} ") for l in out), str(r)
    assert f"removed {lock}" in out and f"removed {logs}" in out, str(r)
    assert wait_gone(holder)
    assert not lock.exists() and not logs.exists()
    # Nothing left to do, on several workers at once.
    hosts = farm.hosts[:3]
    r = tpush(*host_args(hosts), "kill", "--tpu", env=env)
    assert r.returncode == 0, str(r)
    assert all(v == ["no process holds the TPU (1 devices)", f"no TPU lock files ({lock} {logs})"]
               for v in lines_for(r, hosts).values()), str(r)


def test_ps_lists_matches_not_itself(farm, tpush, procs):
    m = marker("ps")
    pid = procs(PLAIN, m)
    hosts = farm.hosts[:2]
    r = tpush(*host_args(hosts), "ps", m)
    assert r.returncode == 0, str(r)
    for h, out in lines_for(r, hosts).items():
        assert out[0].split() == ["PID", "ELAPSED", "COMMAND"], str(r)
        assert len(out) == 2, str(r)  # the process, not tpush's own shell
        fields = out[1].split()
        assert int(fields[0]) == pid and m in out[1], str(r)
    r = tpush(*host_args(hosts), "ps", marker("absent"))
    assert r.returncode == 0, str(r)
    assert lines_for(r, hosts) == {h: ["nothing matched"] for h in hosts}, str(r)


def test_logs_last_lines(farm, tpush, tmp_path):
    log = tmp_path / "train.log"
    log.write_text("".join(f"step {i}\n" for i in range(1, 31)))
    hosts = farm.hosts[:2]
    r = tpush(*host_args(hosts), "logs", str(log))
    assert r.returncode == 0, str(r)
    assert all(v == [f"step {i}" for i in range(21, 31)] for v in lines_for(r, hosts).values()), str(r)
    r = tpush(*host_args(hosts), "logs", "-n", "2", str(log))
    assert all(v == ["step 29", "step 30"] for v in lines_for(r, hosts).values()), str(r)
    r = tpush(*host_args(hosts), "logs", str(tmp_path / "missing.log"))
    assert r.returncode == 1, str(r)


def tails_of(path: Path) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmd and cmd[0].endswith(b"tail") and str(path).encode() in cmd and alive(int(entry)):
                out.append(int(entry))
    return out


def test_logs_follow_until_ctrl_c_then_remote_tail_ends(farm, tpush, tmp_path):
    """logs -f streams new lines from every worker; Ctrl-C ends tpush (130) and the
    remote tails end with the SSH sessions (not only when they next write)."""
    log = tmp_path / "follow.log"
    log.write_text("first\n")
    hosts = farm.hosts[:2]
    st = tpush.stream(*host_args(hosts), "logs", "-f", str(log))
    st.wait_for(lambda ls: sum(l.rstrip().endswith(" first") for l in ls) == 2, 60, "first line")
    with log.open("a") as f:
        f.write("second\n")
    st.wait_for(lambda ls: sum(l.rstrip().endswith(" second") for l in ls) == 2, 30, "appended line")
    assert len(tails_of(log)) == 2
    # The first Ctrl-C is forwarded to the workers (sshd ignores it for root logins);
    # a second one within 2 s closes the sessions.
    st.proc.send_signal(signal.SIGINT)
    try:
        st.proc.wait(timeout=1)
    except subprocess.TimeoutExpired:
        st.proc.send_signal(signal.SIGINT)
    r = st.finish(timeout=15)
    assert r.returncode == 130, str(r)
    end = time.monotonic() + 5
    while tails_of(log) and time.monotonic() < end:
        time.sleep(0.05)
    assert tails_of(log) == [], "remote tail still running after Ctrl-C"


def test_detached_job_outlives_tpush_and_its_log_is_readable(farm, tpush, tmp_path):
    """--detach --log: `started pid N` per worker, tpush returns at once, the job keeps
    running after the session closed; `logs` shows its output; `kill` stops it."""
    m = marker("detach")
    host = farm.hosts[0]
    # -u 5: a tpush that waited for the job would end it at 5 s, timed out (exit 255).
    r = tpush(*host_args([host]), "-u", "5", "--detach", "--log", str(tmp_path / "job.log"),
              f"echo hello from $TPUSH_WORKER; sleep 1000; : {m}", timeout=30)
    assert r.returncode == 0 and "started pid" in r.out, f"tpush waited for the detached job: {r}"
    assert r.summary().ok == 1 and r.summary().timed_out == 0, str(r)
    pid = int(lines_for(r, [host])[host][0].split()[-1])
    time.sleep(0.5)
    assert alive(pid), "detached job died with its session"
    assert os.getsid(pid) == pid
    r = tpush(*host_args([host]), "logs", str(tmp_path / "job.log"))
    assert lines_for(r, [host])[host] == ["hello from 0"], str(r)
    r = tpush(*host_args([host]), "ps", m)
    assert any(l.split()[0] == str(pid) for l in lines_for(r, [host])[host][1:]), str(r)
    os.kill(pid, signal.SIGKILL)
