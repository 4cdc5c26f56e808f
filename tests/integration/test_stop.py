"""Stopping remote commands, whoever the farm logs in (root's signal requests are refused
by sshd, so these are the cases that failed for root before the process-group stop):
the first Ctrl-C, the second, -u, --fail-fast and a connection that drops leave no remote
process behind; `tpush kill` on the client's own machine spares the client's wrappers."""

import os
import re
import shutil
import signal
import subprocess
import time

import pytest

import faults as faults_mod
from conftest import Summary, host_args, split_prefixed


def unique_sleep() -> str:
    """A sleep whose command line no other test's process has (found with pgrep -f)."""
    return f"sleep 61.{os.getpid()}{time.monotonic_ns() % 1_000_000:06d}"


def remote_left(pattern: str) -> list[str]:
    r = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True)
    return [l for l in r.stdout.splitlines() if "pgrep" not in l]


def wait_gone(pattern: str, timeout: float) -> list[str]:
    """Waits until no process matches (the watchdog acts within about a second of the
    hang-up); returns what is still there after `timeout`."""
    end = time.monotonic() + timeout
    while (left := remote_left(pattern)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


def start_sleeping(tpush, hosts, command, *options, env=None):
    """Starts `command` (holding a unique_sleep()) on every worker and returns once each
    worker's sleep runs: its `sleep` process exists under its own name. A signal that
    reaches a shell's child between fork and exec is lost (the child still runs the
    shell's handler, and exec clears what it noted: bash's race, not tpush's); a test
    that sent Ctrl-C right after "started" hit it about once in 20 runs under load."""
    st = tpush.stream("--label", "index", *options, *host_args(hosts),
                      f'echo "started $TPUSH_WORKER"; {command}', env=env)
    st.wait_for(lambda ls: sum("started" in l for l in ls) == len(hosts), 60, "all workers to start")
    sleep = re.search(r"sleep 61\.\d+", command).group(0)
    end = time.monotonic() + 30
    while sum(1 for l in remote_left(sleep) if l.split(None, 1)[1].startswith(sleep)) < len(hosts):
        if time.monotonic() > end:
            pytest.fail(f"the workers' {sleep} did not start within 30s")
        time.sleep(0.02)  # poll: nothing tells us when a remote exec happened
    return st


def test_first_interrupt_stops_the_remote_process_group(farm, tpush):
    """No pty: one Ctrl-C sends INT to each command's process group (the shell and its
    sleep); every worker ends killed by SIGINT, tpush exits 130, nothing is left."""
    hosts = farm.hosts[:4]
    sleep = unique_sleep()
    st = start_sleeping(tpush, hosts, sleep)
    st.proc.send_signal(signal.SIGINT)
    r = st.finish(timeout=15)
    assert r.returncode == 130, str(r)
    s = Summary.parse(r.err)
    assert s.reasons == {f"w{i}": "killed by SIGINT" for i in range(4)}, str(r)
    assert remote_left(sleep) == [], str(r)


def test_second_interrupt_hangs_up_and_the_group_gets_hup(farm, tpush):
    """A command that ignores INT outlives the first Ctrl-C; the second closes the
    connections, and each worker's watchdog sends HUP to the group it left behind."""
    hosts = farm.hosts[:4]
    sleep = unique_sleep()
    st = start_sleeping(tpush, hosts, f"trap '' INT; {sleep}")
    st.proc.send_signal(signal.SIGINT)
    st.wait_for_stderr("interrupt sent to 4 running worker(s)", 15)
    st.proc.send_signal(signal.SIGINT)
    r = st.finish(timeout=15)
    assert r.returncode == 130, str(r)
    assert Summary.parse(r.err).interrupted == 4, str(r)
    assert wait_gone(sleep, 10) == [], str(r)


def test_command_timeout_terminates_the_group(farm, tpush):
    """-u: TERM to the group over a second channel before the hang-up."""
    hosts = farm.hosts[:4]
    sleep = unique_sleep()
    r = tpush("-u", 2, *host_args(hosts), sleep, timeout=60)
    assert r.returncode == 255, str(r)  # no worker ran to the end
    s = Summary.parse(r.err)
    assert set(s.reasons.values()) == {"timed out after 2s"} and len(s.reasons) == 4, str(r)
    assert wait_gone(sleep, 5) == [], str(r)


def test_command_timeout_with_tty(farm, tpush, pty_farm):
    """-u with --tty: the hang-up of the terminal ends the command (SIGHUP)."""
    hosts = farm.hosts[:2]
    sleep = unique_sleep()
    r = tpush("-u", 2, "--tty", *host_args(hosts), sleep, timeout=60)
    assert r.returncode == 255 and Summary.parse(r.err).timed_out == 2, str(r)
    assert wait_gone(sleep, 5) == [], str(r)


def test_fail_fast_stops_the_other_groups(farm, tpush):
    hosts = farm.hosts[:8]
    sleep = unique_sleep()
    r = tpush("--fail-fast", "--label", "index", *host_args(hosts),
              f'if [ "$TPUSH_WORKER" = 5 ]; then sleep 1; exit 9; fi; {sleep}', timeout=60)
    assert r.returncode == 1, str(r)
    assert "failed first (exit 9)" in r.err, str(r)
    assert wait_gone(sleep, 5) == [], str(r)


def test_a_dropped_connection_ends_the_remote_command(farm, tpush):
    """tpush killed outright (no last words): sshd closes the session and the watchdog,
    seeing it gone with the command still running, sends HUP to the group."""
    hosts = farm.hosts[:4]
    sleep = unique_sleep()
    st = start_sleeping(tpush, hosts, sleep)
    st.proc.send_signal(signal.SIGKILL)
    st.finish(timeout=15)
    assert wait_gone(sleep, 10) == []


def test_a_command_that_ends_keeps_its_background_jobs(farm, tpush):
    """The hang-up watch acts only on a connection lost mid-command: what a finished
    command left running on purpose (nohup ... &) is still there once the watch has gone."""
    sleep = unique_sleep()
    mark = f"tpush-test-mark-{os.getpid()}-{time.monotonic_ns()}"
    r = tpush("-N", *host_args(farm.hosts[:1]), f': {mark}; nohup {sleep} >/dev/null 2>&1 &')
    try:
        assert r.returncode == 0, str(r)
        # The watch is a subshell of the login shell: its command line holds the mark.
        assert wait_gone(mark, 10) == [], str(r)
        assert remote_left(sleep), f"the background job was killed\n{r}"
    finally:
        subprocess.run(["pkill", "-f", sleep])


def test_a_command_that_closes_its_output_before_it_ends_is_not_hung_up(farm, tpush):
    """stdout and stderr closed while the command runs on (as coreutils close them just
    before they exit): sshd sends end of output, and the command's stdin, which its
    hang-up watch reads, stays open until the command really ends with its status."""
    hosts = farm.hosts[:4]
    r = tpush(*host_args(hosts), "echo out; exec >&- 2>&-; sleep 0.5; exit 7")
    assert r.returncode == 1, str(r)
    assert set(r.summary().reasons.values()) == {"exit 7"}, str(r)
    assert all(v == ["out"] for v in split_prefixed(r.out, hosts).values()), str(r)


def test_a_command_that_ends_on_a_cut_link_leaves_no_watch(farm, tpush, faults):
    """The link is cut mid-command, and sshd, hearing nothing, keeps the session for
    many minutes: the command ends on its own all the same, and its hang-up watch
    with it (sshd closes the command's stdin when the shell ends)."""
    hosts = farm.hosts[:1]
    mark = f"tpush-test-mark-{os.getpid()}-{time.monotonic_ns()}"
    flag = f"/tmp/{mark}.flag"
    st = tpush.stream("--alive-interval", 1, *host_args(hosts),
                      f': {mark}; echo started; while [ ! -e {flag} ]; do sleep 0.05; done; rm -f {flag}')
    try:
        st.wait_for(lambda ls: any("started" in l for l in ls), 60, "the command to start")
        sessions = faults_mod.session_pids(farm)
        faults.partition(farm.addresses[0], farm.port)
        open(flag, "w").close()
        r = st.finish(timeout=60)
        assert r.returncode != 0 and "connection lost" in r.err, str(r)
        assert wait_gone(mark, 10) == [], str(r)
        assert set(sessions) & set(faults_mod.session_pids(farm)), "sshd ended the session: nothing was tested"
    finally:
        if os.path.exists(flag):
            os.unlink(flag)


def test_a_dropped_connection_ends_the_command_of_a_worker_without_tail(farm, tpush):
    """A worker whose PATH has no tail, setpriv or sh, only what the command runs: the
    watch needs nothing but the login shell, so a dropped connection still ends it."""
    hosts = farm.hosts[:2]
    sleep = unique_sleep()
    bin_dir = farm.dir / f"bin-{os.getpid()}"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "sleep").symlink_to(shutil.which("sleep"))
    try:
        farm.sshd.bash_env.write_text(f"PATH={bin_dir}\n")
        st = start_sleeping(tpush, hosts, sleep)
        st.proc.send_signal(signal.SIGKILL)
        st.finish(timeout=15)
        assert wait_gone(sleep, 10) == []
    finally:
        farm.sshd.bash_env.unlink(missing_ok=True)
        shutil.rmtree(bin_dir, ignore_errors=True)


def test_a_dropped_connection_ends_the_command_under_busybox(farm, tpush):
    """A worker with busybox's userland (its ash runs the command, its applets are the
    tools): a dropped connection ends the command; what ignores HUP on purpose, as
    nohup does, is left to run."""
    hosts = farm.hosts[:2]
    sleep, stubborn = unique_sleep(), unique_sleep()
    bin_dir = farm.dir / f"busybox-{os.getpid()}"
    bin_dir.mkdir(exist_ok=True)
    for applet in ("sh", "sleep", "cat", "kill"):
        (bin_dir / applet).symlink_to("/bin/busybox")
    try:
        farm.sshd.bash_env.write_text(
            f'PATH={bin_dir}; exec {bin_dir}/sh -c "$BASH_EXECUTION_STRING"\n')
        st = start_sleeping(tpush, hosts, f"( (trap '' HUP; exec {stubborn}) & ); {sleep}")
        st.proc.send_signal(signal.SIGKILL)
        st.finish(timeout=15)
        assert wait_gone(sleep, 10) == []
        assert len(remote_left(stubborn)) == len(hosts), "what ignored HUP was killed"
    finally:
        farm.sshd.bash_env.unlink(missing_ok=True)
        subprocess.run(["pkill", "-f", stubborn])
        shutil.rmtree(bin_dir, ignore_errors=True)


def test_kill_spares_the_local_clients_wrappers(farm, tpush):
    """`timeout 60 tpush -w <this machine> kill PAT`: timeout's command line holds PAT, but
    it is the client's ancestor, so only the real target is killed."""
    word = f"tpushtarget{os.getpid()}x{time.monotonic_ns() % 1_000_000}"
    target = subprocess.Popen(["bash", "-c", f"exec -a {word} sleep 600"], start_new_session=True)
    try:
        r = subprocess.run(["timeout", "60", str(tpush.binary), *host_args(farm.hosts[:1]), "kill", word],
                           env=tpush.env(), capture_output=True, text=True, timeout=90)
        assert r.returncode == 0, f"{r.returncode}\n{r.stdout}\n{r.stderr}"
        killed = [l for l in r.stdout.splitlines() if " killed " in l]
        assert len(killed) == 1 and f" killed {target.pid} {word}" in killed[0], r.stdout
        assert target.wait(timeout=10) == -signal.SIGTERM
    finally:
        if target.poll() is None:
            target.kill()
