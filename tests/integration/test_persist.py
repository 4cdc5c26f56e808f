"""--persist: a background tpush (the master) keeps a worker set's sessions, and later runs
on those workers go through it: no new login, and the same output, stdin, environment,
signals and exit codes as a direct run. Masters of one test live in its own runtime
directory and are killed at its end."""

import json
import os
import re
import shutil
import secrets
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import IS_ROOT, USER, Summary, host_args, split_prefixed, ssh_add
from farm import cmdline, kill_pids, marked_processes
from test_auth import converted_key, run_on_pty, whoami_cmd
from test_jump import trust
from test_stop import remote_left, start_sleeping, unique_sleep, wait_gone


def masters(run_dir: Path, marker: str | None = None) -> list[int]:
    """PIDs of the persist masters whose socket is under `run_dir` (and, given a
    `marker` NAME=value, only those with it in their environment: a directory shared
    with the user's own tpush, or another test's, holds masters of theirs too)."""
    marked = set(marked_processes(marker)) if marker else None
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            line = cmdline(int(entry))
            if "--persist-master" in line and str(run_dir) in line and (marked is None or int(entry) in marked):
                out.append(int(entry))
    return out


def wait_until(predicate, timeout: float, what: str):
    """Polls a condition nothing notifies us of (a process ending, a session dying)."""
    end = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)
    return value


def logins(farm) -> int:
    return farm.sshd.log.read_text(errors="replace").count("Accepted publickey")


def sessions_started(farm) -> int:
    """Commands sshd started (each exec channel: a fork, a login shell), from its log."""
    return farm.sshd.log.read_text(errors="replace").count("Starting session: command")


def trust_an_impostor(home, tmp_path, entry: str) -> None:
    """known_hosts says another key (a fresh one) for `entry` ("[addr]:port"), which it
    must already hold: the server's real key is no longer accepted."""
    key = tmp_path / "impostor"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, timeout=30)
    impostor = " ".join(key.with_suffix(".pub").read_text().split()[:2])
    kh = home / ".ssh" / "known_hosts"
    lines = kh.read_text().splitlines(keepends=True)
    assert any(l.startswith(entry + " ") for l in lines), f"known_hosts has no line for {entry}"
    kh.write_text("".join(f"{entry} {impostor}\n" if l.startswith(entry + " ") else l for l in lines))


@pytest.fixture
def run_dir():
    """The masters' XDG_RUNTIME_DIR: short, as a login's /run/user/UID is. Under pytest's
    tmp_path, which holds the user's name, a socket path passed the 108 bytes a Unix
    socket may have for a longer name than root's, and tpush rightly ran without a
    master (seen as a normal user)."""
    d = Path(tempfile.mkdtemp(prefix="tpush-run-"))
    yield d
    kill_pids(masters(d))  # a master may end on its own meanwhile
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def penv(tpush, run_dir):
    """The environment of a run that uses a master (5 minutes idle)."""
    return tpush.env(XDG_RUNTIME_DIR=str(run_dir), TPUSH_PERSIST="5m")


def test_a_repeat_run_logs_in_no_more(farm, tpush, penv, run_dir):
    """The first run starts a master that keeps its 16 sessions; the second runs on them:
    the same sshd session processes, no new login, every worker's output."""
    hosts = farm.hosts[:16]
    r = tpush(*host_args(hosts), "echo one", env=penv)
    assert r.returncode == 0, str(r)
    assert len(masters(run_dir)) == 1, str(r)
    kept = set(farm.sshd.sessions())
    assert len(kept) == 16
    before = logins(farm)
    r = tpush(*host_args(hosts), "echo two", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["two"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert logins(farm) == before, "the repeat run logged in again"
    assert set(farm.sshd.sessions()) == kept


def test_through_the_master_as_a_direct_run(farm, tpush, penv):
    """stdout, stderr, stdin, -e, failing exits and the summary: the same through the
    master (second run) as directly."""
    hosts = farm.hosts[:6]
    command = 'echo "out $X $TPUSH_WORKER"; echo "err $TPUSH_WORKER" >&2; cat; exit $((TPUSH_WORKER % 3))'
    args = ["-e", "X", *host_args(hosts), command]
    direct = tpush(*args, env={**tpush.env(X="from-client")}, input=b"stdin line\n")
    tpush(*host_args(hosts), "true", env=penv)  # starts the master
    through = tpush(*args, env={**penv, "X": "from-client"}, input=b"stdin line\n")
    assert through.returncode == direct.returncode == 1, f"{direct}\n{through}"
    assert sorted(through.out.splitlines()) == sorted(direct.out.splitlines()), f"{direct}\n{through}"
    err_lines = lambda r: sorted(l for l in r.err.splitlines() if not l.startswith("tpush: 6 workers"))
    assert err_lines(through) == err_lines(direct), f"{direct}\n{through}"
    assert Summary.parse(through.err).reasons == {hosts[2]: "exit 2", hosts[5]: "exit 2",
                                                 hosts[1]: "exit 1", hosts[4]: "exit 1"}, str(through)


def test_the_clients_directory_and_umask(farm, tpush, penv, tmp_path):
    """A relative hosts file and --out-dir are the client's, from wherever it runs; files
    the run writes get the client's umask."""
    hosts = farm.hosts[:3]
    for name in ("a", "b"):
        d = tmp_path / name
        d.mkdir()
        (d / "hosts").write_text("\n".join(hosts[:2] if name == "a" else hosts) + "\n")
        r = subprocess.run(["sh", "-c", f'umask 077; exec "$0" "$@"', str(tpush.binary), "-H", "hosts",
                            "--out-dir", "out", "echo hi"],
                           cwd=d, env=penv, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r
        outs = sorted(p.name for p in (d / "out").iterdir() if p.name.endswith(".out"))
        assert len(outs) == (2 if name == "a" else 3), outs
        assert stat.S_IMODE((d / "out" / "results.json").stat().st_mode) == 0o600


def test_ctrl_c_through_the_master(farm, tpush, penv):
    """The first Ctrl-C reaches the master's run: each command's process group gets INT,
    tpush exits 130, nothing is left on the workers."""
    hosts = farm.hosts[:4]
    tpush(*host_args(hosts), "true", env=penv)
    sleep = unique_sleep()
    st = start_sleeping(tpush, hosts, sleep, env=penv)
    st.proc.send_signal(signal.SIGINT)
    r = st.finish(timeout=20)
    assert r.returncode == 130, str(r)
    assert Summary.parse(r.err).reasons == {f"w{i}": "killed by SIGINT" for i in range(4)}, str(r)
    assert remote_left(sleep) == [], str(r)


def test_a_ctrl_c_whose_kill_answers_late_keeps_the_sessions(farm, tpush, penv):
    """Ctrl-C's kill goes on a channel of its own, and the command's end can come back
    before that channel closes. The run waits for it: the sessions are kept, and the
    next run uses them without logging in again."""
    hosts = farm.hosts[:4]
    try:
        # The kill's shell lingers half a second after the kill: the kept shell's
        # report of the command's end comes first, every time.
        farm.sshd.bash_env.write_text(
            'case $BASH_EXECUTION_STRING in "kill -s INT "*) trap "sleep 0.5" EXIT;; esac\n')
        assert tpush(*host_args(hosts), "true", env=penv).returncode == 0
        st = start_sleeping(tpush, hosts, unique_sleep(), env=penv)
        st.proc.send_signal(signal.SIGINT)
        r = st.finish(timeout=20)
        assert r.returncode == 130, str(r)
        assert Summary.parse(r.err).reasons == {f"w{i}": "killed by SIGINT" for i in range(4)}, str(r)
        before = logins(farm)
        r = tpush(*host_args(hosts), "echo again", env=penv)
        assert r.returncode == 0, str(r)
        assert all(v == ["again"] for v in split_prefixed(r.out, hosts).values()), str(r)
        assert logins(farm) == before, f"the run after Ctrl-C logged in again\n{r}"
    finally:
        farm.sshd.bash_env.unlink(missing_ok=True)


def test_a_killed_client_stops_its_run_and_the_master_goes_on(farm, tpush, penv, run_dir):
    """The client is killed mid-run: the master stops that run as on a hang-up (nothing
    is left on the workers) and serves the next run."""
    hosts = farm.hosts[:4]
    tpush(*host_args(hosts), "true", env=penv)
    [master] = masters(run_dir)
    sleep = unique_sleep()
    st = start_sleeping(tpush, hosts, sleep, env=penv)
    st.proc.kill()
    st.finish(timeout=10)
    wait_until(lambda: remote_left(sleep) == [], 20, "the killed client's remote commands to end")
    r = tpush(*host_args(hosts), "echo after", env=penv)
    assert r.returncode == 0, str(r)
    assert masters(run_dir) == [master]


def test_a_master_that_dies_mid_run(farm, tpush, penv, run_dir):
    """The client says the master ended and exits 255; on each worker the connection's
    guardian hangs up the command it left running; the next run starts a new master."""
    hosts = farm.hosts[:4]
    tpush(*host_args(hosts), "true", env=penv)
    [master] = masters(run_dir)
    sleep = unique_sleep()
    st = start_sleeping(tpush, hosts, sleep, env=penv)
    os.kill(master, signal.SIGKILL)
    r = st.finish(timeout=20)
    assert r.returncode == 255, str(r)
    assert f"the persist master (pid {master}) ended during the run" in r.err, str(r)
    assert wait_gone(sleep, 10) == []
    r = tpush(*host_args(hosts), "echo again", env=penv)
    assert r.returncode == 0, str(r)
    [new] = masters(run_dir)
    assert new != master


def test_an_idle_master_ends(farm, tpush, tmp_path, run_dir):
    """--persist 1s: the master ends a second after the run, and takes its socket along."""
    hosts = farm.hosts[:2]
    r = tpush("--persist", "1s", *host_args(hosts), "true", env=tpush.env(XDG_RUNTIME_DIR=str(run_dir)))
    assert r.returncode == 0, str(r)
    wait_until(lambda: masters(run_dir) == [], 15, "the idle master to end")
    assert list((run_dir / "tpush").glob("*.sock")) == []


def test_disconnect(farm, tpush, penv, run_dir):
    """`tpush disconnect` lists the sessions the master held and ends it; a second one
    finds nothing to end."""
    hosts = farm.hosts[:5]
    tpush(*host_args(hosts), "true", env=penv)
    r = tpush(*host_args(hosts), "disconnect", env=penv)
    assert r.returncode == 0, str(r)
    held = sorted(l.split(" ")[0] for l in r.out.splitlines())
    assert held == sorted(f"{USER}@{h}" for h in hosts), str(r)
    assert all(l.endswith("s)") and " (idle " in l for l in r.out.splitlines()), str(r)
    assert "it held 5 sessions" in r.err, str(r)
    wait_until(lambda: masters(run_dir) == [], 10, "the master to end")
    r = tpush(*host_args(hosts), "disconnect", env=penv)
    assert r.returncode == 0 and "no persist master for these workers" in r.err, str(r)


def test_kept_sessions_that_died_are_replaced(farm, tpush, penv):
    """Every kept session is killed between runs (as a reboot would): the next run logs in
    afresh, transparently, and every worker succeeds."""
    hosts = farm.hosts[:8]
    tpush(*host_args(hosts), "true", env=penv)
    farm.kill_sessions()
    wait_until(lambda: farm.sshd.sessions() == [], 10, "the sessions to die")
    before = logins(farm)
    r = tpush(*host_args(hosts), "echo back", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["back"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert logins(farm) == before + 8


def test_a_frozen_kept_session_is_replaced(farm, tpush, penv, tmp_path):
    """A kept session whose server stopped answering (SIGSTOP) is given up on after the
    silence limit (the command was sent, and never answered), and the worker connects
    afresh and runs the command there; once the frozen server goes on, the command it
    still held is not run a second time (the new login claimed it)."""
    hosts = farm.hosts[:3]
    ran = tmp_path / "ran"
    tpush("--alive-interval", "1", *host_args(hosts), "true", env=penv)
    frozen = farm.sshd.sessions()[0]
    os.kill(frozen, signal.SIGSTOP)
    try:
        r = tpush("--alive-interval", "1", *host_args(hosts),
                  f"set -- $SSH_CONNECTION; echo $3 >> {ran}; echo fine", env=penv)
    finally:
        os.kill(frozen, signal.SIGCONT)
    assert r.returncode == 0, str(r)
    assert all(v == ["fine"] for v in split_prefixed(r.out, hosts).values()), str(r)
    wait_until(lambda: frozen not in farm.sshd.sessions(), 10, "the frozen session to end")
    assert sorted(ran.read_text().split()) == sorted(farm.addresses[:len(hosts)])


@pytest.mark.usefixtures("bash_farm")
def test_a_command_whose_answer_is_lost_is_not_run_again(farm, tpush, penv, relay, tmp_path):
    """The way back from a kept session goes deaf (its proxy drops what the worker sends):
    the command, sent at once, runs there but never answers; after the silence limit the
    worker logs in afresh, finds the command claimed by the kept shell, and says it may
    have run instead of running it a second time. The other worker is not disturbed."""
    hosts = farm.hosts[:2]
    ran = tmp_path / "ran"
    args = ["--alive-interval", "1", "-o", f"ProxyCommand={relay.command()}", *host_args(hosts)]
    r = tpush(*args, "true", env=penv)
    assert r.returncode == 0, str(r)
    deaf = next(e["pid"] for e in relay.log.events("start") if e["host"] == farm.addresses[0])
    os.kill(deaf, signal.SIGUSR1)
    wait_until(lambda: relay.log.events("fault"), 10, "the relay to go deaf")
    before = logins(farm)
    r = tpush(*args, f"set -- $SSH_CONNECTION; echo $3 >> {ran}; echo done", env=penv)
    assert r.returncode != 0, str(r)
    out = split_prefixed(r.out, hosts)
    assert out[hosts[0]] == [] and out[hosts[1]] == ["done"], str(r)
    assert (f"{hosts[0]}: connection lost (the kept session broke before the command answered): "
            "it may have run, so it was not run again") in r.err, str(r)
    assert sorted(ran.read_text().split()) == sorted(farm.addresses[:len(hosts)])
    assert logins(farm) == before + 1


def test_two_clients_at_once(farm, tpush, penv, run_dir):
    """A run that comes while the master runs another starts a second master, with
    sessions of its own; the next such run goes to the second master's kept sessions
    without logging in; the first run is unaffected, and disconnect ends both."""
    hosts = farm.hosts[:4]
    tpush(*host_args(hosts), "true", env=penv)
    first = start_sleeping(tpush, hosts, unique_sleep(), env=penv)
    r = tpush(*host_args(hosts), "echo second", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["second"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert len(masters(run_dir)) == 2, str(r)
    before = logins(farm)
    r = tpush(*host_args(hosts), "echo third", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["third"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert logins(farm) == before, "the third run logged in again"
    first.proc.send_signal(signal.SIGINT)
    assert first.finish(timeout=20).returncode == 130
    r = tpush(*host_args(hosts), "disconnect", env=penv)
    assert r.returncode == 0, str(r)
    # Ctrl-C's INT ended the first run's commands with an exit status: its sessions were kept
    assert re.findall(r"ended the persist master \(pid \d+\); it held (\d+) sessions", r.err) == ["4", "4"], str(r)
    assert sorted(l.split(" ")[0] for l in r.out.splitlines()) == sorted(f"{USER}@{h}" for h in hosts * 2), str(r)
    wait_until(lambda: masters(run_dir) == [], 10, "the masters to end")


def test_a_run_past_every_busy_master_runs_directly(farm, tpush, penv, run_dir):
    """Four runs at once: each finds the masters before it busy and starts the next. A
    fifth finds all four busy: it runs directly (one login of its own) and starts none.
    disconnect ends no master in the middle of a run, and names them."""
    hosts = farm.hosts[:1]
    sleepers = [start_sleeping(tpush, hosts, unique_sleep(), env=penv) for _ in range(4)]
    try:
        running = masters(run_dir)
        assert len(running) == 4
        before = logins(farm)
        r = tpush(*host_args(hosts), "echo fifth", env=penv)
        assert r.returncode == 0 and split_prefixed(r.out, hosts) == {hosts[0]: ["fifth"]}, str(r)
        assert logins(farm) == before + 1
        assert sorted(masters(run_dir)) == sorted(running)
        r = tpush(*host_args(hosts), "disconnect", env=penv)
        assert r.returncode != 0, str(r)
        [line] = r.err.splitlines()
        assert line.startswith("tpush: error: disconnect: the persist masters (pids "), str(r)
        assert line.endswith(") are running commands; end those runs (Ctrl-C) or wait for them, "
                             "then disconnect again"), str(r)
        assert sorted(int(p) for p in line.split("(pids ")[1].split(")")[0].split(", ")) == sorted(running)
    finally:
        for st in sleepers:
            st.proc.send_signal(signal.SIGINT)
    assert [st.finish(timeout=20).returncode for st in sleepers] == [130] * 4


def test_the_socket_is_private(farm, tpush, penv, run_dir):
    """The directory is 0700, the socket 0600; a directory open to others is not used
    (a warning, and the run goes direct)."""
    hosts = farm.hosts[:2]
    tpush(*host_args(hosts), "true", env=penv)
    d = run_dir / "tpush"
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    [sock] = list(d.glob("*.sock"))
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    kill_pids(masters(run_dir))
    d.chmod(0o755)
    r = tpush(*host_args(hosts), "echo direct", env=penv)
    assert r.returncode == 0, str(r)
    assert "is open to others (mode 755; chmod 700 it)" in r.err, str(r)
    assert masters(run_dir) == []


@pytest.mark.skipif(not IS_ROOT, reason="needs a second uid to connect from (setuid); the root run covers it")
def test_another_user_is_refused(farm, tpush, tmp_path):
    """Even with the directory and socket opened up, the master answers nobody but its own
    uid (SO_PEERCRED): another user's connection is closed without a word."""
    hosts = farm.hosts[:2]
    run_dir = Path(tempfile.mkdtemp(prefix="tpush-peer-"))  # out of pytest's 0700 tmp tree
    try:
        r = tpush(*host_args(hosts), "true", env=tpush.env(XDG_RUNTIME_DIR=str(run_dir), TPUSH_PERSIST="5m"))
        assert r.returncode == 0, str(r)
        d = run_dir / "tpush"
        [sock] = list(d.glob("*.sock"))
        for p in (run_dir, d):
            p.chmod(0o711)
        sock.chmod(0o666)
        probe = ("import socket, os; os.setuid(65534); s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); "
                 f"s.connect({str(sock)!r}); s.settimeout(10); print(repr(s.recv(100)))")
        r = subprocess.run(["/usr/bin/python3", "-c", probe], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == "b''", r.stdout
        assert len(masters(run_dir)) == 1, "the refused connection ended the master"
    finally:
        kill_pids(masters(run_dir))
        shutil.rmtree(run_dir, ignore_errors=True)


def test_cp_and_get_through_the_master(farm, tpush, penv, tmp_path):
    """cp and get open their SFTP channels on the kept sessions (no login after the first
    run) and give them back; relative local paths are the client's."""
    hosts = farm.hosts[:2]
    tpush(*host_args(hosts), "true", env=penv)
    before = logins(farm)
    work = tmp_path / "work"
    work.mkdir()
    (work / "conf.yaml").write_bytes(b"lr: 0.1\n" * 1000)
    dest = tmp_path / "remote" / "conf.yaml"
    dest.parent.mkdir()
    run = lambda *a: subprocess.run([str(tpush.binary), *host_args(hosts), *a], cwd=work, env=penv,
                                    capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    r = run("cp", "conf.yaml", str(dest))
    assert r.returncode == 0, r
    assert dest.read_bytes() == (work / "conf.yaml").read_bytes()
    r = run("get", str(dest), "back")
    assert r.returncode == 0, r
    for h in hosts:
        assert (work / "back" / h / "conf.yaml").read_bytes() == dest.read_bytes()
    r = run("echo done")
    assert r.returncode == 0, r
    assert logins(farm) == before, "cp, get or the run after them logged in again"


def test_detach_ps_logs_and_kill_through_the_master(farm, tpush, penv, tmp_path):
    """A detached job, then ps, logs and kill on it: every one through the master, on the
    kept sessions."""
    hosts = farm.hosts[:2]
    tpush(*host_args(hosts), "true", env=penv)
    before = logins(farm)
    sleep = unique_sleep()
    log = tmp_path / "job.log"  # the workers share this machine's files
    r = tpush("--detach", "--log", log, *host_args(hosts), f"echo up; exec {sleep}", env=penv)
    assert r.returncode == 0, str(r)
    wait_until(lambda: len(remote_left(sleep)) == 2, 20, "the detached jobs to start")
    r = tpush(*host_args(hosts), "ps", sleep.split()[1], env=penv)
    assert r.returncode == 0 and r.out.count(sleep) == 2 * len(hosts), str(r)  # each sees both
    wait_until(lambda: log.exists() and "up" in log.read_text(), 20, "the jobs' log")
    r = tpush(*host_args(hosts), "logs", "-n", "5", str(log), env=penv)
    assert r.returncode == 0, str(r)
    assert all(v and set(v) == {"up"} for v in split_prefixed(r.out, hosts).values()), str(r)
    r = tpush(*host_args(hosts), "kill", sleep.split()[1], env=penv)
    assert r.returncode == 0, str(r)
    wait_until(lambda: remote_left(sleep) == [], 20, "the jobs to be killed")
    assert logins(farm) == before


def test_kill_spares_the_clients_wrappers_through_the_master(farm, tpush, penv):
    """`timeout 60 tpush kill PAT` through the master: the rule that spares the client and
    its ancestors applies to the client the user started, not to the master."""
    hosts = farm.hosts[:1]
    tpush(*host_args(hosts), "true", env=penv)
    word = f"tpushtarget{os.getpid()}x{time.monotonic_ns() % 1_000_000}"
    target = subprocess.Popen(["bash", "-c", f"exec -a {word} sleep 600"], start_new_session=True)
    try:
        r = subprocess.run(["timeout", "60", str(tpush.binary), *host_args(hosts), "kill", word],
                           env=penv, capture_output=True, text=True, timeout=90)
        assert r.returncode == 0, f"{r.returncode}\n{r.stdout}\n{r.stderr}"
        killed = [l for l in r.stdout.splitlines() if " killed " in l]
        assert len(killed) == 1 and f" killed {target.pid} {word}" in killed[0], r.stdout
        assert target.wait(timeout=10) == -signal.SIGTERM
    finally:
        if target.poll() is None:
            target.kill()


def test_tty_through_the_master(pty_farm, tpush, penv):
    """--tty: each worker gets a pseudo-terminal, with the client's TERM."""
    hosts = pty_farm.hosts[:2]
    tpush(*host_args(hosts), "true", env=penv)
    r = tpush("--tty", *host_args(hosts), 'tty; echo "$TERM"', env={**penv, "TERM": "vt220"})
    assert r.returncode == 0, str(r)
    for lines in split_prefixed(r.out, hosts).values():
        assert lines[0].startswith("/dev/pts/") and lines[1].rstrip("\r") == "vt220", str(r)


def test_a_passphrase_is_asked_on_the_clients_terminal(farm, tpush, bare_home, tmp_path, penv):
    """The master has no terminal: an encrypted key's passphrase is asked on the client's,
    once, and the run succeeds. A repeat whose every worker has a kept session logs in
    nowhere and asks nothing (as ssh through a ControlMaster); once the sessions died, the
    next run asks again and logs in afresh."""
    path = converted_key(farm, tmp_path, "test_rsa", "-N", "pass word", "-m", "PEM")
    hosts = farm.hosts[:3]
    argv = [str(tpush.binary), "-i", str(path), *host_args(hosts), whoami_cmd()]
    for expected in (1, 0):
        before = logins(farm)
        code, out, prompts = run_on_pty(argv, penv, "pass word")
        assert prompts == expected and code == 0, out
        for a in farm.addresses[:3]:
            assert f"{USER}@{a}" in out, out
        assert logins(farm) == before + (3 if expected else 0)
    farm.kill_sessions()
    wait_until(lambda: farm.sshd.sessions() == [], 10, "the sessions to die")
    code, out, prompts = run_on_pty(argv, penv, "pass word")
    assert prompts == 1 and code == 0, out


def test_sessions_through_a_proxy_command_are_kept(farm, tpush, penv, relay, run_dir):
    """A ProxyCommand (as IAP tunnels are): the master keeps the session and its proxy
    process; the repeat run starts no new proxy and logs in no more; disconnect ends the
    proxies with the sessions."""
    hosts = farm.hosts[:3]
    args = ["-o", f"ProxyCommand={relay.command()}", *host_args(hosts)]
    r = tpush(*args, "echo one", env=penv)
    assert r.returncode == 0, str(r)
    assert relay.log.started() == 3 and len(relay.log.running()) == 3
    before = logins(farm)
    r = tpush(*args, "echo two", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["two"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert relay.log.started() == 3 and logins(farm) == before
    r = tpush(*args, "disconnect", env=penv)
    assert r.returncode == 0 and "it held 3 sessions" in r.err, str(r)
    assert all(" via proxy command " in l for l in r.out.splitlines()), str(r)
    wait_until(lambda: relay.log.running() == [], 15, "the proxy commands to end")


def test_sessions_behind_a_jump_host_are_kept(farm, tpush, home, bastion, penv, run_dir):
    """-J: the master keeps the bastion's session with the worker sessions it carries; the
    repeat run logs in nowhere (bastion or workers) and opens no channel through the
    bastion; disconnect names the route and ends the bastion's session too."""
    trust(home, bastion)
    hosts = farm.hosts[:4]
    args = ["-J", bastion.jump(USER), *host_args(hosts)]
    r = tpush(*args, "echo one", env=penv)
    assert r.returncode == 0, str(r)
    assert bastion.counts()["sessions"] == 1 and bastion.channels() == 4
    before = logins(farm)
    mark = bastion.mark()
    r = tpush(*args, "echo two", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["two"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert logins(farm) == before
    assert bastion.sessions(since=mark) == 0 and bastion.channels(since=mark) == 0
    r = tpush(*args, "disconnect", env=penv)
    assert r.returncode == 0 and "it held 4 sessions" in r.err, str(r)
    assert all(f" via jump host {USER}@{bastion.host}" in l for l in r.out.splitlines()), str(r)
    wait_until(lambda: masters(run_dir) == [], 10, "the master to end")
    wait_until(lambda: bastion.connection_pids() == [], 10, "the bastion's session to end")


def test_sessions_through_a_slices_iap_tunnel_keep_the_one_tunnel(farm, tpush, penv, run_dir, fake_gcloud):
    """--tunnel-through-iap: the master keeps the one IAP tunnel with the gateway session on
    it and the slice's sessions it carries; the repeat run starts no gcloud and logs in
    nowhere."""
    g = fake_gcloud
    names = g.tpu("kept", farm.addresses[:4])
    env = g.env(penv, iap_port=farm.port)
    args = ["-t", "kept", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap", "-p", farm.port]
    r = tpush(*args, "echo one", env=env)
    assert r.returncode == 0, str(r)
    assert [c[c.index("start-iap-tunnel") + 1] for c in g.calls("start-iap-tunnel")] == [names[0]]
    before, calls = logins(farm), len(g.calls())
    r = tpush(*args, "echo two", env=env)
    assert r.returncode == 0, str(r)
    assert all(v == ["two"] for v in split_prefixed(r.out, [f"w{k}" for k in range(4)]).values()), str(r)
    assert logins(farm) == before, "the repeat run logged in again"
    assert g.calls()[calls:] == [], "the repeat run ran gcloud"
    assert len(g.tunnels.running()) == 1
    r = tpush(*args, "disconnect", env=env)
    assert r.returncode == 0 and "it held 4 sessions" in r.err, str(r)
    wait_until(lambda: masters(run_dir) == [], 10, "the master to end")
    wait_until(lambda: g.tunnels.running() == [], 10, "the IAP tunnel to end")


def test_a_kept_jump_host_that_died_is_replaced(farm, tpush, home, bastion, penv):
    """The bastion drops its connections between runs: the master notices (the kept
    worker sessions behind it go with it) and the next run logs in afresh through a new
    bastion session, transparently."""
    trust(home, bastion)
    hosts = farm.hosts[:4]
    args = ["-J", bastion.jump(USER), *host_args(hosts)]
    assert tpush(*args, "true", env=penv).returncode == 0
    assert bastion.kill_sessions() >= 1
    wait_until(lambda: bastion.connection_pids() == [], 10, "the bastion's session to die")
    before = logins(farm)
    r = tpush(*args, "echo back", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["back"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert bastion.counts()["sessions"] == 2 and logins(farm) == before + 4


def test_a_kept_jump_host_is_checked_against_known_hosts_again(farm, tpush, home, bastion, penv, tmp_path):
    """known_hosts changes between runs to say another key for the bastion: its kept
    session is not used, and every worker behind it fails as a first run would (host key
    changed, naming the jump host); nothing logs in."""
    trust(home, bastion)
    hosts = farm.hosts[:3]
    args = ["-J", bastion.jump(USER), *host_args(hosts)]
    assert tpush(*args, "true", env=penv).returncode == 0
    before = logins(farm)
    trust_an_impostor(home, tmp_path, f"[{bastion.address}]:{bastion.port}")
    r = tpush(*args, "echo ran", env=penv)
    assert r.returncode == 255, str(r)
    assert all(v == [] for v in split_prefixed(r.out, hosts).values()), str(r)
    s = r.summary()
    for h in hosts:
        assert s.reasons[h].startswith(f"jump host {USER}@{bastion.host}"), str(r)
        assert "host key changed" in s.reasons[h], str(r)
    assert logins(farm) == before and bastion.counts()["sessions"] == 1


def test_kept_sessions_gather_no_helpers(farm, tpush, penv):
    """A kept session has one hang-up guardian, however many commands ran on it, and
    it ends with the session."""
    hosts = farm.hosts[:3]
    guardians = lambda: [p for p in marked_processes(farm.sshd.marker)
                         if cmdline(p).startswith("sh -c ") and "__tpush_helper__" in cmdline(p)
                         and "tpush-guard-" in cmdline(p)]
    for _ in range(5):
        r = tpush(*host_args(hosts), "true", env=penv)
        assert r.returncode == 0, str(r)
    assert len(guardians()) == 3, [cmdline(p) for p in guardians()]
    assert len(farm.sshd.sessions()) == 3  # the sessions themselves are still there
    r = tpush("disconnect", *host_args(hosts), env=penv)
    assert r.returncode == 0, str(r)
    wait_until(lambda: guardians() == [], 10, "the guardians to end with their sessions")


def test_the_default_keeps_sessions_for_runs_typed_at_a_terminal(farm, tpush, run_dir):
    """No --persist, TPUSH_PERSIST or config: a run from a terminal starts a master for 10
    minutes and says so once; a run with stdin from a pipe or file (a script) starts none."""
    hosts = farm.hosts[:2]
    env = {k: v for k, v in tpush.env(XDG_RUNTIME_DIR=str(run_dir)).items() if k != "TPUSH_PERSIST"}
    r = tpush(*host_args(hosts), "echo script", env=env, input=b"")
    assert r.returncode == 0 and masters(run_dir) == [], str(r)
    code, out, _ = run_on_pty([str(tpush.binary), *host_args(hosts), "echo typed"], env, "")
    assert code == 0, out
    assert "keeping these sessions open for 10 minutes for the next runs" in out, out
    [master] = masters(run_dir)
    assert " 600 " in cmdline(master)
    code, out, _ = run_on_pty([str(tpush.binary), *host_args(hosts), "echo again"], env, "")
    assert code == 0 and "keeping these sessions" not in out, out  # said once, when it started


def test_timeout_and_the_second_ctrl_c_through_the_master(farm, tpush, penv):
    """-u: TERM to each group, exit 255, nothing left; a command that ignores INT outlives
    the first Ctrl-C and the second hangs up: as in a direct run."""
    hosts = farm.hosts[:3]
    tpush(*host_args(hosts), "true", env=penv)
    sleep = unique_sleep()
    r = tpush("-u", 2, *host_args(hosts), sleep, env=penv, timeout=60)
    assert r.returncode == 255 and Summary.parse(r.err).timed_out == 3, str(r)
    wait_until(lambda: remote_left(sleep) == [], 10, "-u's TERM to end the commands")
    sleep = unique_sleep()
    st = start_sleeping(tpush, hosts, f"trap '' INT; {sleep}", env=penv)
    st.proc.send_signal(signal.SIGINT)
    st.wait_for_stderr("interrupt sent to 3 running worker(s)", 15)
    st.proc.send_signal(signal.SIGINT)
    r = st.finish(timeout=15)
    assert r.returncode == 130 and Summary.parse(r.err).interrupted == 3, str(r)
    wait_until(lambda: remote_left(sleep) == [], 10, "the hang-up to end the commands")


def test_json_and_gathered_output_through_the_master(farm, tpush, penv):
    """--json and -b are the client's choice of output, made in the master's run."""
    hosts = farm.hosts[:3]
    tpush(*host_args(hosts), "true", env=penv)
    r = tpush("--json", *host_args(hosts), "echo same", env=penv)
    assert r.returncode == 0, str(r)
    objs = [json.loads(l) for l in r.out.splitlines()]
    assert sorted(o["worker"] for o in objs if o.get("text") == "same") == sorted(hosts), r.out
    assert objs[-1]["type"] == "summary" and objs[-1]["exit_code"] == 0, r.out
    r = tpush("-b", *host_args(hosts), "echo same", env=penv)
    assert r.returncode == 0 and r.out.count("same") == 1, str(r)


def test_a_redescribed_tpu_gets_new_sessions(farm, tpush, tmp_path, run_dir):
    """A TPU recreated with new addresses: after --refresh the master opens sessions to the
    new addresses (sessions are kept per user@address:port) and the workers answer there."""
    from test_tpu import ECHO, LOC, Gcloud, labels
    gcloud = Gcloud(tmp_path, tpush, farm)
    env = gcloud.env(XDG_RUNTIME_DIR=str(run_dir), TPUSH_PERSIST="5m")
    gcloud.tpu("tpu2", 2)
    r = gcloud.run("-t", "tpu2", *LOC, ECHO, env=env)
    assert r.returncode == 0, str(r)
    before = logins(farm)
    gcloud.tpu("tpu2", 2, external_ip=lambda w, k=0: f"127.0.4.{1 + w}")
    r = gcloud.run("-t", "tpu2", *LOC, "--refresh", ECHO, env=env)
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, labels(2))
    assert lines == {"w0": ["127.0.4.1 0/2"], "w1": ["127.0.4.2 1/2"]}, str(r)
    assert logins(farm) == before + 2
    r = gcloud.run("-t", "tpu2", *LOC, "disconnect", env=env)
    assert sorted(l.split(" ")[0].split("@")[1].rsplit(":", 1)[0] for l in r.out.splitlines()) == \
        ["127.0.3.1", "127.0.3.2", "127.0.4.1", "127.0.4.2"], str(r)


def test_a_kept_session_is_checked_against_known_hosts_again(farm, tpush, home, penv, tmp_path):
    """known_hosts changes between runs to say another key for a worker: its kept session
    is not used; the worker fails with `host key changed` as a direct run would, the other
    worker runs on its kept session."""
    hosts = farm.hosts[:2]
    r = tpush(*host_args(hosts), "true", env=penv)
    assert r.returncode == 0, str(r)
    before = logins(farm)
    trust_an_impostor(home, tmp_path, f"[{hosts[0].rsplit(':', 1)[0]}]:{farm.port}")
    r = tpush(*host_args(hosts), "echo ran", env=penv)
    assert r.returncode == 255, str(r)
    assert split_prefixed(r.out, hosts) == {hosts[0]: [], hosts[1]: ["ran"]}, str(r)
    assert Summary.parse(r.err).reasons[hosts[0]].startswith("host key changed"), str(r)
    assert logins(farm) == before  # the refused worker never got as far as a login


def test_ctrl_z_pauses_the_masters_run(farm, tpush, penv):
    """Ctrl-Z stops the client, and the master's run pauses with it (nothing more is
    printed, as with a stopped direct run); continued, the output goes on."""
    hosts = farm.hosts[:2]
    tpush(*host_args(hosts), "true", env=penv)
    # One process ticks: a shell loop around `sleep` may outlive a group's SIGINT when
    # the sleep exits on its own at that instant (bash then takes the signal as handled).
    ticker = "perl -e '$| = 1; while (1) { print \"tick\\n\"; select(undef, undef, undef, 0.1) }'"
    st = tpush.stream(*host_args(hosts), ticker, env=penv)
    count = lambda: len(st.lines["out"])
    st.wait_for(lambda ls: len(ls) >= 4, 20, "ticks")
    st.proc.send_signal(signal.SIGTSTP)
    wait_until(lambda: Path(f"/proc/{st.proc.pid}/stat").read_text().split(") ")[1][0] == "T", 10,
               "the client to stop")
    time.sleep(0.5)  # what the master had already handed to the writer
    paused = count()
    time.sleep(1.0)  # an absence cannot be awaited: ten ticks' worth of nothing
    assert count() == paused, "output went on while the client was stopped"
    st.proc.send_signal(signal.SIGCONT)
    st.wait_for(lambda ls: len(ls) >= paused + 4, 20, "ticks after the client continued")
    st.proc.send_signal(signal.SIGINT)
    assert st.finish(timeout=20).returncode == 130


def test_a_runtime_dir_that_is_not_ours_falls_back_to_tmp(farm, tpush, tmp_path):
    """XDG_RUNTIME_DIR naming a directory that does not exist (as after su) does not stop
    persistence: the socket goes under /tmp/tpush-UID."""
    hosts = farm.hosts[:2]
    # /tmp/tpush-UID is shared with the user's own sessions: this test's master is the
    # one with this test's mark in its environment.
    mark = f"TPUSH_TEST_MARK={secrets.token_hex(8)}"
    env = tpush.env(XDG_RUNTIME_DIR=str(tmp_path / "gone"), TPUSH_PERSIST="5m",
                    TPUSH_TEST_MARK=mark.partition("=")[2])
    fallback = Path(f"/tmp/tpush-{os.getuid()}")
    try:
        r = tpush(*host_args(hosts), "true", env=env)
        assert r.returncode == 0 and r.err.count("warn") == 0, str(r)
        assert len(masters(fallback, mark)) == 1, str(r)
        assert stat.S_IMODE(fallback.stat().st_mode) == 0o700
    finally:
        tpush(*host_args(hosts), "disconnect", env=env)
    wait_until(lambda: masters(fallback, mark) == [], 10, "the master to end")


@pytest.mark.usefixtures("bash_farm")
def test_a_repeat_runs_in_the_kept_shells(farm, tpush, penv):
    """The first run leaves a shell waiting on each kept session; a repeat's commands run
    there: sshd starts nothing for them, and stdout, stderr (a last line without a
    newline too), the environment and exit codes are those of a direct run."""
    hosts = farm.hosts[:4]
    command = ('echo "out $TPUSH_WORKER $X"; echo "err $TPUSH_WORKER" >&2; printf "no newline" >&2; '
               'exit $((TPUSH_WORKER + 2))')
    args = ["-e", "X", *host_args(hosts), command]
    direct = tpush(*args, env=tpush.env(X="from-client"))
    r = tpush(*host_args(hosts), "true", env=penv)  # the master, and a shell per session
    assert r.returncode == 0, str(r)
    for _ in range(2):
        before = sessions_started(farm)
        through = tpush(*args, env={**penv, "X": "from-client"})
        assert sessions_started(farm) == before, f"sshd started commands for the repeat\n{through}"
        assert through.returncode == direct.returncode == 1, f"{direct}\n{through}"
        assert sorted(through.out.splitlines()) == sorted(direct.out.splitlines()), f"{direct}\n{through}"
        err_lines = lambda r: sorted(l for l in r.err.splitlines() if not l.startswith("tpush: 4 workers"))
        assert err_lines(through) == err_lines(direct), f"{direct}\n{through}"


@pytest.mark.usefixtures("bash_farm")
def test_a_changed_login_file_is_read_by_the_next_command(farm, tpush, penv):
    """A kept shell read bash's startup files when it started; once one changes (or goes
    away), the next command runs as a new login would, and sees the change."""
    hosts = farm.hosts[:3]
    greeting = lambda r: {h: v for h, v in split_prefixed(r.out, hosts).items()}
    try:
        r = tpush(*host_args(hosts), "true", env=penv)
        assert r.returncode == 0, str(r)
        farm.sshd.bash_env.write_text("export GREETING=changed\n")
        r = tpush(*host_args(hosts), 'echo "[$GREETING]"', env=penv)
        assert r.returncode == 0, str(r)
        assert all(v == ["[changed]"] for v in greeting(r).values()), str(r)
        farm.sshd.bash_env.unlink()
        r = tpush(*host_args(hosts), 'echo "[$GREETING]"', env=penv)
        assert all(v == ["[]"] for v in greeting(r).values()), str(r)
        before = sessions_started(farm)  # and the shells started meanwhile serve the next
        r = tpush(*host_args(hosts), 'echo "[$GREETING]"', env=penv)
        assert all(v == ["[]"] for v in greeting(r).values()), str(r)
        assert sessions_started(farm) == before, str(r)
    finally:
        farm.sshd.bash_env.unlink(missing_ok=True)


@pytest.mark.usefixtures("bash_farm")
def test_a_login_file_edited_in_the_tick_the_shells_started_is_seen(farm, tpush, penv):
    """An edit that leaves a login file its size and its mtime to the nanosecond, as an
    edit in the clock tick the kept shells started in would look to a comparison of
    times, is seen all the same: the next command runs as a new login would."""
    hosts = farm.hosts[:3]
    bash_env = farm.sshd.bash_env
    try:
        bash_env.write_text("export GREETING=before\n")
        r = tpush(*host_args(hosts), "true", env=penv)  # the master, and a shell per session
        assert r.returncode == 0, str(r)
        was = bash_env.stat()
        bash_env.write_text("export GREETING=after!\n")
        os.utime(bash_env, ns=(was.st_atime_ns, was.st_mtime_ns))
        now = bash_env.stat()
        assert (now.st_size, now.st_mtime_ns) == (was.st_size, was.st_mtime_ns)
        r = tpush(*host_args(hosts), 'echo "[$GREETING]"', env=penv)
        assert r.returncode == 0, str(r)
        assert all(v == ["[after!]"] for v in split_prefixed(r.out, hosts).values()), str(r)
    finally:
        bash_env.unlink(missing_ok=True)


def test_a_process_left_holding_the_output_is_waited_for(farm, tpush, penv):
    """As with a direct run (and ssh): a command that leaves a process behind that still
    writes to its stdout and stderr ends when they close, and what it writes is that
    worker's output; the session serves the next run."""
    hosts = farm.hosts[:3]
    r = tpush(*host_args(hosts), "true", env=penv)
    assert r.returncode == 0, str(r)
    r = tpush(*host_args(hosts), "(sleep 0.5; echo late; echo late-err >&2; exit 3) & echo early", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["early", "late"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert sorted(l for l in r.err.splitlines() if "late-err" in l) == sorted(f"{h}: late-err" for h in hosts)
    r = tpush(*host_args(hosts), "echo next", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["next"] for v in split_prefixed(r.out, hosts).values()), str(r)


@pytest.mark.usefixtures("bash_farm")
def test_a_kept_shell_killed_between_runs(farm, tpush, penv):
    """The kept shells are killed while idle (by the user, say): the next run runs its
    commands on exec channels of the same sessions (no new login), and starts new shells
    that serve the run after it."""
    hosts = farm.hosts[:3]
    shells = lambda: [p for p in marked_processes(farm.sshd.marker)
                      if cmdline(p).startswith("bash -c ") and "tpush:shell:" in cmdline(p)]
    r = tpush(*host_args(hosts), "true", env=penv)
    assert r.returncode == 0, str(r)
    first = shells()
    assert len(first) == 3, [cmdline(p) for p in first]
    for pid in first:
        os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not set(first) & set(shells()), 10, "the shells to die")
    before = logins(farm)
    r = tpush(*host_args(hosts), "echo fine", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["fine"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert logins(farm) == before
    started = sessions_started(farm)
    r = tpush(*host_args(hosts), "echo again", env=penv)
    assert r.returncode == 0, str(r)
    assert all(v == ["again"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert sessions_started(farm) == started
    assert len(shells()) == 3


def test_agent_forwarding_through_the_master_reaches_the_clients_agent(farm, tpush, penv, agent):
    """-A on kept sessions: the command gets a channel of its own with the agent forwarded,
    and the master passes its requests to the agent of the tpush that sent the run. A later
    run without -A gets nothing of it: its kept shell started without an agent, and a
    channel that finds the connection's agent socket (sshd keeps it for the connection)
    finds nothing behind it."""
    key = farm.key("id_ed25519")
    ssh_add(agent, key)
    hosts = farm.hosts[:3]
    listing = "ssh-add -l 2>&1; echo status $?"
    r = tpush(*host_args(hosts), "true", env=penv)  # starts the master, no agent
    assert r.returncode == 0, str(r)
    before = logins(farm)
    r = tpush("-A", *host_args(hosts), listing, env={**penv, "SSH_AUTH_SOCK": str(agent)})
    assert r.returncode == 0, str(r)
    expected = subprocess.run(["ssh-keygen", "-l", "-f", f"{key}.pub"], capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip()
    assert all(v == [expected, "status 0"] for v in split_prefixed(r.out, hosts).values()), str(r)
    assert logins(farm) == before, "the -A run logged in again"
    r = tpush(*host_args(hosts), listing, env={**penv, "SSH_AUTH_SOCK": str(agent)})
    assert r.returncode == 0, str(r)
    assert all(v[-1] in ("status 1", "status 2") and expected not in v
               for v in split_prefixed(r.out, hosts).values()), str(r)


def test_a_shell_opens_on_the_kept_session(pty_farm, tpush, penv):
    """tpush shell through the master: the worker's kept session carries the shell (no new
    login), on the client's terminal, and its exit status comes back."""
    import pexpect
    hosts = pty_farm.hosts[:2]
    assert tpush(*host_args(hosts), "true", env=penv).returncode == 0
    before = logins(pty_farm)
    for status in (7, 0):  # the session stays kept after a shell, for the next one
        child = pexpect.spawn(str(tpush.binary), [*host_args(hosts), "shell"], env=penv, encoding="utf-8",
                              codec_errors="replace", dimensions=(30, 100), timeout=60)
        child.send("PS1='kept''-prompt$ '; PROMPT_COMMAND=\r")
        child.expect_exact("kept-prompt$ ")
        child.send(f'set -- $SSH_CONNECTION; echo "at $3"; tty; exit {status}\r')
        child.expect(r"at (\S+)\r\n/dev/pts/")
        assert child.match.group(1) == pty_farm.addresses[0]
        child.expect(pexpect.EOF)
        child.wait()
        assert child.exitstatus == status
        assert logins(pty_farm) == before, "the shell logged in afresh"


def sockets_of(pid: int) -> int:
    """The sockets process `pid` holds open."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


def test_a_forward_rides_the_kept_session(farm, tpush, penv, run_dir):
    """tpush forward through the master: the master binds the port, the kept session carries
    the connections (no new login; here to the worker's own sshd, whose banner comes back),
    Ctrl-C at the client ends it, and the session is kept for the next run (a forward ended
    with no connection open gives it back clean)."""
    hosts = farm.hosts[:2]
    assert tpush(*host_args(hosts), "true", env=penv).returncode == 0
    before = logins(farm)
    from test_forward import free_port
    local = free_port()
    st = tpush.stream(*host_args(hosts), "forward", f"{local}:127.0.0.1:{farm.port}", env=penv)
    try:
        st.wait_for_stderr(f"tpush: forwarding 127.0.0.1:{local} -> {hosts[0]}", 60)
        [master] = masters(run_dir)
        idle = sockets_of(master)
        with socket.create_connection(("127.0.0.1", local), timeout=30) as c:
            assert c.makefile("rb").readline().startswith(b"SSH-2.0-OpenSSH")
        wait_until(lambda: sockets_of(master) == idle, 30, "the forwarded connection to close")
        st.proc.send_signal(signal.SIGINT)
        r = st.finish(60)
        assert r.returncode == 0, str(r)
    finally:
        st.close()
    assert tpush(*host_args(hosts), "true", env=penv).returncode == 0  # the session was kept after it
    assert logins(farm) == before, "the forward, or the run after it, logged in afresh"
