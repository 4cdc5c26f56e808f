"""--sudo: the command runs as root under a real sudo, for a login user with a password.
The password is asked once, on tpush's terminal, only when a worker's sudo asks for it;
it goes to one worker first and to the others only once sudo let the command run there; a
wrong one is never tried again; it never reaches the command's stdin, an argument, the
environment, the output, --out-dir or tpush's log. NOPASSWD needs no terminal; sudo's
lecture and requiretty (with --tty) work; kill --sudo takes the same way.

Root only: a login user with a password (useradd, chpasswd) and a sudoers rule of the
test's (/etc/sudoers.d, removed afterwards) need root, and a user's sshd lets in only
that user."""

from __future__ import annotations

import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pexpect
import pytest

from conftest import IS_ROOT, USER, split_prefixed
from farm import Sshd, free_port, known_hosts_lines, public_key

PASSWORD = "pw-" + secrets.token_hex(6)
WORKERS = 4
PROMPT = re.compile(r"\[tpush\] sudo password for \S+ \(asked once, for every worker\): ")


class SudoUser:
    """A login user with PASSWORD, its sshd on every loopback address, its sudoers rules."""

    def __init__(self, farm):
        # Its own directory, readable by the user (its login reads the sshd's BASH_ENV there).
        self.dir = Path(tempfile.mkdtemp(prefix="tpush-sudo-"))
        self.dir.chmod(0o755)
        self.name = "tpush-s" + secrets.token_hex(3)
        self.rules_file = Path("/etc/sudoers.d") / self.name
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", self.name], check=True,
                       capture_output=True)
        subprocess.run(["chpasswd"], input=f"{self.name}:{PASSWORD}\n", text=True, check=True,
                       capture_output=True)
        ssh_dir = Path("/home") / self.name / ".ssh"
        ssh_dir.mkdir(mode=0o755)
        authorized = ssh_dir / "authorized_keys"
        authorized.write_text(public_key(farm.key("id_ed25519")) + "\n")
        authorized.chmod(0o644)
        self.sshd = None
        for _ in range(5):  # retry if someone grabs the free port before sshd binds it
            self.sshd = Sshd(self.dir / "sshd", "0.0.0.0", free_port(), authorized,
                             extra_config=f"AllowUsers {self.name}@127.0.0.0/8")
            try:
                self.sshd.start(farm.addresses[0])
                break
            except (RuntimeError, TimeoutError) as e:
                if "Address already in use" not in str(e):
                    raise
        self.hosts = [f"{a}:{self.sshd.port}" for a in farm.addresses[:WORKERS]]
        self.known_hosts = known_hosts_lines(farm.addresses[:WORKERS], self.sshd.port, self.sshd.host_key_files)

    def rules(self, *lines: str) -> None:
        """This user's sudoers lines (checked with visudo first)."""
        text = "".join(line + "\n" for line in lines)
        draft = self.rules_file.with_name(self.name + ".draft")  # visudo -c skips names with a dot
        draft.write_text(text)
        subprocess.run(["visudo", "-cqf", str(draft)], check=True, capture_output=True)
        draft.chmod(0o440)
        draft.rename(self.rules_file)

    def stop(self) -> None:
        self.rules_file.unlink(missing_ok=True)
        if self.sshd is not None:
            self.sshd.stop()
        subprocess.run(["pkill", "-KILL", "-u", self.name], capture_output=True)
        subprocess.run(["userdel", "--force", "--remove", self.name], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def sudo_user(farm):
    if not IS_ROOT:
        pytest.skip(f"a login user with a password and sudoers rules need root; running as {USER}")
    for tool in ("useradd", "sudo", "visudo"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed (apt-get install sudo passwd)")
    user = SudoUser(farm)
    try:
        yield user
    finally:
        user.stop()


@pytest.fixture
def sudoer(sudo_user, home):
    """The user, with this test's HOME trusting its sshd; rules default to a password asked."""
    with open(home / ".ssh" / "known_hosts", "a") as f:
        f.write(sudo_user.known_hosts)
    sudo_user.rules(f"{sudo_user.name} ALL=(ALL:ALL) ALL")
    yield sudo_user
    sudo_user.sshd.kill_sessions()


def hosts_args(user) -> list[str]:
    return ["-l", user.name, "-w", ",".join(user.hosts)]


def at_terminal(tpush, args, answer: str | None = PASSWORD, timeout=60):
    """tpush at a pty; answers each password prompt with `answer`. Returns (exit status,
    everything it wrote to the terminal, prompts seen)."""
    child = pexpect.spawn(str(tpush.binary), [str(a) for a in args], env=tpush.env(), encoding="utf-8",
                          codec_errors="replace", timeout=timeout)
    transcript, prompts = "", 0
    while True:
        i = child.expect([PROMPT, pexpect.EOF])
        transcript += child.before + (child.after if i == 0 else "")
        if i == 1:
            break
        prompts += 1
        child.sendline(answer)
    child.wait()
    status = child.exitstatus if child.exitstatus is not None else 128 + child.signalstatus
    return status, transcript, prompts


ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def worker_lines(transcript: str, hosts: list[str]) -> dict[str, list[str]]:
    """The workers' lines in what tpush wrote to its terminal (tpush's own lines, the status
    line it draws and erases, and the prompt left out)."""
    lines = {h: [] for h in hosts}
    for line in ESCAPE.sub("", transcript).replace("\r\n", "\n").split("\n"):
        line = line.replace("^M", "").rsplit("\r", 1)[-1]  # a pty's \r, as tpush shows it
        for h in hosts:
            if line.startswith(h + ": "):
                lines[h].append(line[len(h) + 2:])
    return lines


def test_password_asked_once_for_every_worker_and_found_nowhere(tpush, sudoer, tmp_path):
    """One prompt for four workers, each of which asks; every worker runs as root; the
    command reads nothing on stdin; the password is nowhere: not in what tpush wrote to the
    terminal (with -v's log), not in --out-dir's files, not in any process's arguments or the
    command's environment on the worker."""
    out_dir = tmp_path / "out"
    status, transcript, prompts = at_terminal(tpush, [
        "-v", "--out-dir", out_dir, "--sudo", *hosts_args(sudoer),
        'echo "as $(id -un)"; cat; echo "stdin done"; ps -eo args; env'])
    assert prompts == 1, transcript
    assert status == 0, transcript
    lines = worker_lines(transcript, sudoer.hosts)
    for h in sudoer.hosts:  # after whatever sudo itself says (a minimal root: "unable to resolve host")
        assert "as root" in lines[h], transcript
        after = lines[h][lines[h].index("as root") + 1:]
        assert after[:1] == ["stdin done"], transcript  # cat read EOF, and no password
    assert PASSWORD not in transcript
    for f in out_dir.iterdir():
        assert PASSWORD not in f.read_text(errors="replace"), f
    for h in sudoer.hosts:  # the prompt and the mark are taken out
        assert not any(line.startswith(("[tpush:sudo:", "tpush:sudo-ran:")) for line in lines[h]), transcript


def test_wrong_password_is_tried_on_one_worker_only(tpush, sudoer):
    """A wrong password: one prompt, sudo on one worker gets it once and is refused (never a
    second try), the others never get it; every worker fails saying why; nothing ran."""
    status, transcript, prompts = at_terminal(tpush, ["--sudo", *hosts_args(sudoer), "echo ran"],
                                              answer="not-" + PASSWORD)
    assert prompts == 1, transcript
    assert status == 1, transcript
    assert all("ran" not in lines for lines in worker_lines(transcript, sudoer.hosts).values()), transcript
    assert transcript.count("incorrect password attempt") == 1, transcript
    assert transcript.count("sudo refused the password (wrong; not tried again)") == 1, transcript
    assert transcript.count("tpush asks once and never tries it again") == WORKERS - 1, transcript


def test_nopasswd_needs_no_terminal(tpush, sudoer):
    """NOPASSWD: no prompt and no terminal needed (tpush's stdin is a pipe), whose bytes reach
    the command once sudo let it run."""
    sudoer.rules(f"{sudoer.name} ALL=(ALL:ALL) NOPASSWD: ALL")
    r = tpush("--sudo", *hosts_args(sudoer), 'id -un; cat; echo end', input=b"typed ahead\n")
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, sudoer.hosts)
    for h in sudoer.hosts:
        assert lines[h] == ["root", "typed ahead", "end"], str(r)


def test_a_password_without_a_terminal_fails_each_worker_saying_so(tpush, sudoer):
    r = tpush("--sudo", *hosts_args(sudoer), "echo ran")
    assert r.returncode == 1, str(r)
    assert "ran" not in r.out, str(r)
    reasons = r.summary().reasons
    for h in sudoer.hosts:
        assert "no terminal to ask on" in reasons.get(h, ""), str(r)


def test_lecture_passes_on_and_the_password_still_goes(tpush, sudoer):
    sudoer.rules(f"Defaults:{sudoer.name} lecture=always", f"{sudoer.name} ALL=(ALL:ALL) ALL")
    status, transcript, prompts = at_terminal(tpush, ["--sudo", *hosts_args(sudoer), "id -un"])
    assert prompts == 1 and status == 0, transcript
    assert "Respect the privacy of others" in transcript, transcript
    assert all(lines[-1:] == ["root"] for lines in worker_lines(transcript, sudoer.hosts).values()), transcript


def test_requiretty_needs_tty_and_works_with_it(tpush, sudoer):
    """requiretty: without --tty sudo refuses (its own words pass on); with --tty the prompt
    comes through the worker's terminal, and the password is not echoed."""
    sudoer.rules(f"Defaults:{sudoer.name} requiretty", f"{sudoer.name} ALL=(ALL:ALL) ALL")
    status, transcript, prompts = at_terminal(tpush, ["--sudo", *hosts_args(sudoer), "id -un"])
    assert status == 1 and prompts == 0, transcript
    assert "you must have a tty to run sudo" in transcript, transcript
    status, transcript, prompts = at_terminal(tpush, ["--sudo", "--tty", *hosts_args(sudoer), "id -un"])
    assert prompts == 1 and status == 0, transcript
    assert all(lines[-1:] == ["root"] for lines in worker_lines(transcript, sudoer.hosts).values()), transcript
    assert PASSWORD not in transcript


def test_kill_sudo_takes_the_same_way(tpush, sudoer):
    """kill --sudo as a user with a password: asked once, and a root process stops."""
    marker = "tpush-sudo-" + secrets.token_hex(4)
    victim = subprocess.Popen(["bash", "-c", f"exec -a {marker} sleep 300"], start_new_session=True)
    try:
        status, transcript, prompts = at_terminal(tpush, ["kill", "--sudo", *hosts_args(sudoer)[:2],
                                                          "-w", sudoer.hosts[0], marker])
        assert prompts == 1 and status == 0, transcript
        victim.wait(timeout=30)
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()


def test_ps_sudo_takes_the_same_way(tpush, sudoer):
    """ps --sudo as a user with a password: asked once, and it lists a process of another
    user (the test's), which ps as that user leaves out as not its own."""
    marker = "tpush-sudo-" + secrets.token_hex(4)
    other = subprocess.Popen(["bash", "-c", f"exec -a {marker} sleep 300"], start_new_session=True)
    host = sudoer.hosts[0]
    try:
        status, transcript, prompts = at_terminal(tpush, ["ps", "--sudo", *hosts_args(sudoer)[:2], "-w", host, marker])
        assert prompts == 1 and status == 0, transcript
        assert any(str(other.pid) in line for line in worker_lines(transcript, [host])[host]), transcript
        status, transcript, prompts = at_terminal(tpush, ["ps", *hosts_args(sudoer)[:2], "-w", host, marker])
        assert prompts == 0 and not any(str(other.pid) in line for line in worker_lines(transcript, [host])[host]), \
            transcript
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize("tty", [[], ["--tty"]], ids=["pipe", "tty"])
def test_interrupt_stops_the_root_command(tpush, sudoer, tty):
    """Ctrl-C (INT to tpush) reaches the command sudo runs as root, through sudo (or a
    pseudo-terminal's ^C), as INT: the command stops there and goes no further."""
    sudoer.rules(f"{sudoer.name} ALL=(ALL:ALL) NOPASSWD: ALL")
    marker = f"sleep {3000 + secrets.randbelow(100000)}"  # what the root command's sleep reads as
    s = tpush.stream("--sudo", *tty, *hosts_args(sudoer), f"echo started; {marker}; echo not stopped")
    try:
        s.wait_for(lambda out: sum("started" in line for line in out) == WORKERS, 60, "every worker started")
        # Each worker's sleep exec'd first: INT that reaches a shell's child between fork and
        # exec is lost, and the shell may end without it (the shell's race: test_stop.py).
        deadline = time.monotonic() + 30
        while _count(marker) < WORKERS:
            assert time.monotonic() < deadline, f"the workers' {marker} did not start within 30s"
            time.sleep(0.02)  # poll: nothing tells us when a remote exec happened
        s.proc.send_signal(signal.SIGINT)
        r = s.finish(60)
        assert r.returncode == 130 and "not stopped" not in r.out, str(r)
        deadline = time.monotonic() + 30
        while _running(marker):
            assert time.monotonic() < deadline, f"root's {marker} still runs after Ctrl-C:\n{_lineage(marker)}\n{r}"
            time.sleep(0.1)
    finally:
        s.close()
        subprocess.run(["pkill", "-KILL", "-x", "-f", marker], capture_output=True)


def _pids(marker: str) -> list[str]:
    """Processes that run `marker` as their own command line (exec'd, not a shell's fork)."""
    return subprocess.run(["pgrep", "-x", "-f", marker], capture_output=True, text=True).stdout.split()


def _count(marker: str) -> int:
    return len(_pids(marker))


def _running(marker: str) -> bool:
    return _count(marker) > 0


def _lineage(marker: str) -> str:
    """The processes from sshd down to each `marker` still running: who kept it alive."""
    pids = _pids(marker)
    ps = subprocess.run(["ps", "-e", "-o", "pid=,ppid=,pgid=,sid=,tpgid=,tty=,stat=,args="],
                        capture_output=True, text=True).stdout.splitlines()
    rows = {line.split()[0]: line for line in ps}
    out = []
    for pid in pids:
        while pid in rows and pid != "1":
            out.append(rows[pid])
            pid = rows[pid].split()[1]
        out.append("--")
    return "\n".join(out)


@pytest.mark.parametrize("argv", [["cp", "f", "/tmp/"], ["get", "/etc/hostname", "out"], ["shell"],
                                  ["forward", "6006"], ["rsync", "-a", "f", ":/tmp/"]])
def test_subcommands_that_run_nothing_as_root_refuse_sudo(farm, tpush, argv):
    """--sudo with a subcommand that has no command to run as root: a one-line usage error
    naming the subcommand and what to do instead, before any connection."""
    r = tpush("--sudo", "-w", farm.hosts[0], *argv)
    assert r.returncode == 2, str(r)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and f"tpush {argv[0]} does not run as root with --sudo: " in lines[0], str(r)
