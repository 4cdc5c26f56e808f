"""Fixtures for tpush's integration tests: the built binary against a real loopback farm.

    farm         session-scoped Farm (tests/farm/farm.py) with FARM_WORKERS workers
    home         a private copy of the farm's fake HOME for one test
    tpush        runs the binary (TPUSH_BIN, default <repo>/build/tpush) with HOME set
                 to `home`, SSH_AUTH_SOCK removed, and a timeout on every run
    faults       factory for fault servers / nft rules / a second sshd, all torn down

Set KEEP_FARM=1 to keep the farm's directory after the run.
"""

from __future__ import annotations

import getpass
import os
import pwd
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "farm"))

import farm as farm_mod  # noqa: E402
import faults as faults_mod  # noqa: E402

# Every sshd the tests start serves its connections without re-executing itself
# (farm.REEXEC says why): the same server to tpush, for less of the machine's CPU.
farm_mod.REEXEC = False

FARM_WORKERS = int(os.environ.get("TPUSH_TEST_WORKERS", "64"))
# Tests run as whoever runs them: the farm's sshd logs in this user.
USER = getpass.getuser()
IS_ROOT = os.geteuid() == 0
LOGIN_SHELL = pwd.getpwuid(os.getuid()).pw_shell
DEFAULT_TIMEOUT = 120  # seconds; a hung tpush fails its test instead of hanging the suite

SUMMARY_HEAD = re.compile(
    r"^tpush: (\d+) workers?: (\d+) ok, (\d+) failed, (\d+) unreachable, (\d+) timed out"
    r"(?:, (\d+) lost)?(?:, (\d+) interrupted)?(?:, (\d+) stopped)? \((\d+(?:\.\d+)?)s\)$")
SUMMARY_WORKER = re.compile(r"^tpush: (\S+):\s+(.*)$")


# ---------------------------------------------------------------------------
# Order

def pytest_collection_modifyitems(config, items):
    """Tests that run one after another in one process (an xdist_group: see
    test_relay.py) go first: started last, that chain would be the suite's tail while
    the other processes sit idle."""
    grouped = [i for i in items if i.get_closest_marker("xdist_group")]
    if grouped:
        items[:] = grouped + [i for i in items if not i.get_closest_marker("xdist_group")]


# ---------------------------------------------------------------------------
# The binary

@pytest.fixture(scope="session")
def tpush_bin() -> Path:
    p = Path(os.environ.get("TPUSH_BIN", REPO / "build" / "tpush"))
    if not p.is_absolute():
        p = REPO / p
    if not os.access(p, os.X_OK):
        pytest.skip(f"tpush binary {p} not built (run `make` or set TPUSH_BIN)")
    return p


# ---------------------------------------------------------------------------
# The farm

@pytest.fixture(scope="session")
def farm():
    if not farm_mod.sshd_available():
        pytest.skip("OpenSSH server not installed (/usr/sbin/sshd): apt-get install openssh-server")
    yield from farm_mod.farm_fixture(FARM_WORKERS)


@pytest.fixture
def pty_farm(farm):
    """For tests of --tty: a farm whose sshd can give pseudo-terminals. An sshd that is not
    root cannot (it must chown /dev/pts/N to the user and group tty, and fails with EPERM),
    so as a normal user these tests are skipped; the root run covers them."""
    if not IS_ROOT:
        pytest.skip(f"the farm's sshd runs as {USER}, not root: it cannot give pseudo-terminals")
    return farm


@pytest.fixture
def bash_farm(farm):
    """For tests of kept shells, which are bash's: in any other login shell tpush keeps
    none and runs each command on a channel of its own (what every other persist test
    checks, whatever the shell). The farm logs in whoever runs the tests, with their own
    login shell, and Debian's useradd gives /bin/sh: such a user skips these tests; root's
    run, and any user whose shell is bash, covers them."""
    if Path(LOGIN_SHELL).name != "bash":
        pytest.skip(f"{USER}'s login shell is {LOGIN_SHELL}, not bash: tpush keeps no shell in it")
    return farm


@pytest.fixture
def home(farm, tmp_path) -> Path:
    """A private copy of the farm's HOME: tests may edit its keys and known_hosts."""
    return farm.copy_home(tmp_path / "home")


@pytest.fixture
def bare_home(home) -> Path:
    """`home` without any default key file (id_ed25519 removed; test keys kept, not default)."""
    for name in ("id_ed25519", "id_ecdsa", "id_rsa", "google_compute_engine"):
        for suffix in ("", ".pub"):
            (home / ".ssh" / (name + suffix)).unlink(missing_ok=True)
    return home


@pytest.fixture(autouse=True)
def _kill_leftover_sessions(request):
    """After each test, kill farm sessions and remote commands the test left behind
    (stopped or partitioned sessions, commands still running after tpush gave up), so one
    test's remote load never leaks into the next."""
    yield
    if "farm" not in request.fixturenames:
        return
    request.getfixturevalue("farm").kill_sessions()


# ---------------------------------------------------------------------------
# Running tpush

def base_env(home: Path) -> dict[str, str]:
    # Nothing of the caller's own setup: agent, tpush config, XDG directories.
    env = {k: v for k, v in os.environ.items()
           if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "TPUSH_CONFIG", "TPUSH_ZONE", "TPUSH_PERSIST")
           and not k.startswith("XDG_")}
    # TPUSH_PERSIST=0: no test run on a terminal starts a persist master unless it asks.
    env.update(HOME=str(home), USER=USER, LOGNAME=USER, LC_ALL="C.UTF-8", NO_COLOR="1", TPUSH_PERSIST="0")
    return env


@dataclass
class Result:
    args: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes
    elapsed: float

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def summary(self) -> "Summary":
        """The parsed summary; fails the test if a counts line deviates from the contract."""
        s = Summary.parse(self.err)
        if s.malformed:
            raise AssertionError("summary counts line does not match CLI-CONTRACT.md "
                                 "(`tpush: N workers: A ok, B failed, C unreachable, D timed out (T s)`): "
                                 f"{s.malformed!r}\n{self}")
        return s

    def __str__(self) -> str:  # shown in assertion messages
        return (f"tpush {' '.join(self.args)}\n  exit {self.returncode} after {self.elapsed:.2f}s\n"
                f"  stdout (tail): {self.out[-1500:]!r}\n  stderr (tail): {self.err[-3000:]!r}")


@dataclass
class Summary:
    """The summary block on stderr: the counts line and one reason per listed worker."""
    total: int | None = None
    ok: int | None = None
    failed: int | None = None
    unreachable: int | None = None
    timed_out: int | None = None
    lost: int = 0          # shown only when non-zero
    interrupted: int = 0   # shown only when non-zero
    stopped: int = 0       # shown only when non-zero (--fail-fast)
    reasons: dict[str, str] = field(default_factory=dict)
    head_line: str | None = None
    malformed: str | None = None  # a counts-like line that does not follow the contract

    @classmethod
    def parse(cls, stderr: str) -> "Summary":
        s = cls()
        for line in stderr.splitlines():
            m = SUMMARY_HEAD.match(line)
            if m:
                s.head_line = line
                s.total, s.ok, s.failed, s.unreachable, s.timed_out = map(int, m.groups()[:5])
                s.lost, s.interrupted, s.stopped = (int(g or 0) for g in m.groups()[5:8])
                s.reasons = {}  # per-worker lines follow the counts line
                continue
            if re.match(r"^tpush: \d+ workers?: ", line):
                s.malformed = s.head_line = line  # still parse the worker lines below it
                s.reasons = {}
                continue
            if s.head_line is not None and not line.startswith("tpush: error"):
                m = SUMMARY_WORKER.match(line)
                if m:
                    s.reasons[m.group(1)] = m.group(2)
        return s


class Tpush:
    """Runs the tpush binary with a controlled environment and a hard timeout."""

    def __init__(self, binary: Path, home: Path):
        self.binary, self.home = binary, home

    def env(self, **extra) -> dict[str, str]:
        env = base_env(self.home)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def __call__(self, *args, timeout: float = DEFAULT_TIMEOUT, env: dict | None = None,
                 input: bytes | None = None) -> Result:
        args = [str(a) for a in args]
        t0 = time.monotonic()
        proc = subprocess.Popen([str(self.binary), *args], env=env or self.env(),
                                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            out, err = proc.communicate()
            pytest.fail(f"tpush hung: no exit within {timeout}s: tpush {' '.join(args)}\n"
                        f"stdout tail: {out[-1000:]!r}\nstderr tail: {err[-2000:]!r}")
        return Result(args, proc.returncode, out, err, time.monotonic() - t0)

    def stream(self, *args, env: dict | None = None) -> "Streaming":
        """Start tpush and read its stdout/stderr lines as they arrive (see Streaming)."""
        return Streaming([str(self.binary), *map(str, args)], env or self.env())


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class Streaming:
    """A running tpush whose output lines are collected by reader threads, each with the
    time it was read, so a test can act mid-stream (kill a session, partition a host)."""

    def __init__(self, argv: list[str], env: dict[str, str]):
        self.argv = argv
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.lines = {"out": [], "err": []}   # (time since start, bytes line)
        self.cond = threading.Condition()
        self.threads = [threading.Thread(target=self._read, args=(self.proc.stdout, "out"), daemon=True),
                        threading.Thread(target=self._read, args=(self.proc.stderr, "err"), daemon=True)]
        for t in self.threads:
            t.start()
        self.exit_time: float | None = None

    def _read(self, pipe, name: str) -> None:
        for line in iter(pipe.readline, b""):
            with self.cond:
                self.lines[name].append((time.monotonic() - self.t0, line))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_for(self, predicate, timeout: float, what: str) -> None:
        """Block until predicate(stdout lines as str) is true; fail the test on timeout/exit."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                texts = [l.decode("utf-8", "replace") for _, l in self.lines["out"]]
                if predicate(texts):
                    return
                if self.proc.poll() is not None and not any(t.is_alive() for t in self.threads):
                    self.close()
                    pytest.fail(f"tpush exited ({self.proc.returncode}) before {what}:\n{self.result()}")
                left = end - time.monotonic()
                if left <= 0:
                    self.close()
                    pytest.fail(f"timed out after {timeout}s waiting for {what}:\n{self.result()}")
                self.cond.wait(min(left, 0.5))

    def wait_for_stderr(self, text: str, timeout: float) -> None:
        """Block until a stderr line contains `text`; fail the test on timeout."""
        end = time.monotonic() + timeout
        with self.cond:
            while not any(text in l.decode("utf-8", "replace") for _, l in self.lines["err"]):
                left = end - time.monotonic()
                if left <= 0:
                    self.close()
                    pytest.fail(f"no {text!r} on stderr within {timeout}s:\n{self.result()}")
                self.cond.wait(min(left, 0.5))

    def finish(self, timeout: float) -> Result:
        """Wait for tpush to exit (kill it and fail if it takes longer than `timeout`)."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.close()
            pytest.fail(f"tpush did not exit within {timeout}s:\n{self.result()}")
        self.exit_time = time.monotonic() - self.t0
        for t in self.threads:
            t.join(timeout=30)
        return self.result()

    def result(self) -> Result:
        return Result(self.argv[1:], self.proc.returncode if self.proc.returncode is not None else -1,
                      b"".join(l for _, l in self.lines["out"]), b"".join(l for _, l in self.lines["err"]),
                      time.monotonic() - self.t0)

    def close(self) -> None:
        if self.proc.poll() is None:
            kill_group(self.proc)
            self.proc.wait(timeout=10)
        for t in self.threads:
            t.join(timeout=10)


@pytest.fixture
def tpush(tpush_bin, home):
    """tpush(*args, timeout=..., env=...) -> Result, run with HOME=`home`.  Streams started
    with tpush.stream(...) are killed at teardown."""
    runner = Tpush(tpush_bin, home)
    streams: list[Streaming] = []
    orig = runner.stream

    def stream(*args, **kw):
        s = orig(*args, **kw)
        streams.append(s)
        return s
    runner.stream = stream
    yield runner
    for s in streams:
        s.close()


# ---------------------------------------------------------------------------
# Output parsing

def split_prefixed(text: str, labels: list[str]) -> dict[str, list[str]]:
    """Split tpush's prefixed output into per-label lines, checking the exact prefix of a
    pipe (pdsh's): `LABEL: ` then the text.  Every line must belong to a label.  Labels may
    hold ':' (host:port); they are matched by length, few distinct ones, so lookup is cheap."""
    by_label: dict[str, list[str]] = {l: [] for l in labels}
    by_length: dict[int, dict[str, list[str]]] = {}
    for l in labels:
        by_length.setdefault(len(l) + 2, {})[l + ": "] = by_label[l]
    lengths = sorted(by_length)
    lines = text.split("\n")
    if lines[-1] == "":  # the text ends with a newline (or is empty)
        lines.pop()
    for line in lines:
        for n in lengths:
            dest = by_length[n].get(line[:n])
            if dest is not None:
                dest.append(line[n:])
                break
        else:
            raise AssertionError(f"line without a valid worker prefix: {line[:200]!r}")
    return by_label


def output_lines(text: str, labels: list[str]) -> dict[str, list[str]]:
    """Like split_prefixed, but ignores tpush's own `tpush: ` lines (summary, errors)."""
    kept = "".join(l for l in text.splitlines(keepends=True) if not l.startswith("tpush: "))
    return split_prefixed(kept, labels)


def host_args(hosts: list[str]) -> list[str]:
    """-w arguments for a list of addr:port hosts."""
    return ["-w", ",".join(hosts)]


# ---------------------------------------------------------------------------
# Faults

class Faults:
    """Factory for fault fixtures; everything made is torn down after the test."""

    def __init__(self, farm):
        self.farm = farm
        self._stack: list = []

    def _enter(self, cm):
        obj = cm.__enter__()
        self._stack.append(cm)
        return obj

    def server(self, mode: str) -> faults_mod.FakeServer:
        return self._enter(faults_mod.FakeServer(mode))

    def blackhole(self, address: str | list[str], port: int | None = None):
        self._need_nft()
        return self._enter(faults_mod.Blackhole(address, port))

    def partition(self, address: str, port: int):
        self._need_nft()
        return self._enter(faults_mod.Partition(address, port))

    def other_sshd(self, **kw) -> faults_mod.OtherSshd:
        return self._enter(faults_mod.OtherSshd(self.farm, **kw))

    def add(self, cm):
        """Register any context manager for teardown (enters it)."""
        return self._enter(cm)

    @staticmethod
    def _need_nft() -> None:
        if not faults_mod.nft_available():
            pytest.skip("nftables (nft) not usable here: needs root/CAP_NET_ADMIN and package nftables")

    def close(self) -> None:
        while self._stack:
            cm = self._stack.pop()
            try:
                cm.__exit__(None, None, None)
            except Exception as e:  # keep tearing down the rest
                print(f"teardown of {cm!r} failed: {e}", file=sys.stderr)


@pytest.fixture
def agent(tmp_path):
    """A private ssh-agent (foreground, killed by PID at teardown); yields its socket path."""
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        # It prints its SSH_AUTH_SOCK line once the socket listens (or ends, if it cannot).
        # The socket's file alone is not that: it exists from bind(), and a connection
        # before listen() is refused (ssh-add failed so once under ASan in CI).
        ready, _, _ = select.select([proc.stdout], [], [], 10)
        line = proc.stdout.readline() if ready else b""
        if not line.startswith(b"SSH_AUTH_SOCK="):
            pytest.fail(f"ssh-agent -D -a {sock} did not start within 10 s (exit {proc.poll()}, said {line!r})")
        yield sock
    finally:
        proc.stdout.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def ssh_add(sock, key):
    env = dict(os.environ, SSH_AUTH_SOCK=str(sock))
    subprocess.run(["ssh-add", "-q", str(key)], env=env, check=True, timeout=30,
                   stdin=subprocess.DEVNULL, capture_output=True)


@pytest.fixture
def faults(farm):
    f = Faults(farm)
    try:
        yield f
    finally:
        f.close()


def fingerprint(pubkey_file: Path) -> str:
    """SHA256:... fingerprint of a public key file (ssh-keygen -lf)."""
    out = subprocess.run(["ssh-keygen", "-lf", str(pubkey_file)], capture_output=True, text=True,
                         check=True, timeout=30).stdout
    return out.split()[1]


# ---------------------------------------------------------------------------
# Reach: jump hosts, workers only a jump host reaches, ProxyCommands, and IAP / OS Login
# through the stand-in gcloud (tests/farm/jump.py, proxycmd.py, fake_gcloud.py, relay.py)

import jump as jump_mod  # noqa: E402
from fake_gcloud import FakeGcloud  # noqa: E402
from proxycmd import Relay  # noqa: E402


@pytest.fixture
def bastion(farm):
    """A jump host (jump.Bastion) on its own loopback address in front of the farm; works
    for any user.  The workers stay reachable directly too, so a test proves its traffic
    went through the bastion with the bastion's log: bastion.sessions() counts accepted
    logins, bastion.channels() direct-tcpip channels, bastion.log.targets() where each
    channel went (`m = bastion.mark()` then `since=m` for counts after a point).
    bastion.add_to_known_hosts(file) trusts it; bastion.jump(USER) is a -J value;
    bastion.kill_sessions() drops every connection it carries.  Stopped after the test."""
    b = jump_mod.Bastion(farm.authorized_keys)
    try:
        b.start()
        yield b
    finally:
        b.stop()


@pytest.fixture
def bastions(farm):
    """Factory for more bastions, e.g. ones that fail on purpose:
    bastions(fault="wrong_host_key" | "refuse_auth" | "no_forwarding") -> started
    jump.Bastion in front of the farm.  Every one is stopped after the test."""
    made: list = []

    def make(fault=None, **kw):
        b = jump_mod.Bastion(farm.authorized_keys, fault=fault, **kw)
        made.append(b)
        return b.start()
    try:
        yield make
    finally:
        for b in made:
            b.stop()


@pytest.fixture(scope="session")
def hidden_farm(farm):
    """FARM_WORKERS workers that only a bastion reaches (jump.HiddenFarm): their sshd and
    the bastion run in a network namespace made for this session; from here only
    hidden_farm.bastion.host answers.  hidden_farm.hosts are the workers' 127.0.1.k:PORT
    (as the bastion sees them), hidden_farm.known_hosts trusts workers and bastion,
    hidden_farm.ssh_config(key, USER) is an OpenSSH config (Host bastion, Host w0..).
    Shared by the session: count bastion traffic from a mark().  Needs root (a network
    namespace and a veth need CAP_SYS_ADMIN/CAP_NET_ADMIN): skipped otherwise; the
    `bastion` fixture covers non-root runs."""
    ok, reason = jump_mod.netns_available()
    if not ok:
        pytest.skip(f"hidden farm: {reason}")
    hf = jump_mod.HiddenFarm(farm, FARM_WORKERS)
    try:
        hf.start()
        yield hf
    finally:
        hf.stop()


@pytest.fixture(autouse=True)
def _kill_leftover_hidden_sessions(request):
    """After each test that used the hidden farm, drop the connections it left to the
    hidden workers and the bastion (both keep listening for the next test)."""
    yield
    hf = request.node.funcargs.get("hidden_farm")  # absent when it was skipped or failed
    if hf is not None:
        hf.kill_sessions()


@pytest.fixture
def relay(tmp_path):
    """tests/farm/relay.py as a ProxyCommand (proxycmd.Relay): relay.command() is
    'relay.py --log FILE %h %p', with fail=/hang=/die_after=/connect_delay= faults;
    relay.log counts invocations (started(), connected(), targets()).  Relays still
    running after the test are killed by PID."""
    r = Relay(tmp_path / "relay")
    try:
        yield r
    finally:
        r.kill_leftovers()


@pytest.fixture
def fake_gcloud(tmp_path):
    """A private fixture dir for the stand-in gcloud (fake_gcloud.FakeGcloud): tpu(...)
    writes a TPU whose workers are given addresses and named t1v-n-...-w-K in its guest
    attributes, env(iap_port=farm.port) runs it, proxy_command(name) is the IAP
    ProxyCommand gcloud builds, os_login_profile(USER) the OS Login profile.  Tunnels
    still running after the test are killed by PID."""
    g = FakeGcloud(tmp_path / "gcloud")
    try:
        yield g
    finally:
        g.kill_leftovers()
