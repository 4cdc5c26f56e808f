#!/usr/bin/python3
"""A test farm of many SSH "hosts" served by one unprivileged-port OpenSSH sshd.

One sshd binds 0.0.0.0:PORT (a free high port picked at start), so every
loopback address 127.0.1.1, 127.0.1.2, ... is a distinct worker with nothing
configured.  Logins are only accepted from 127.0.0.0/8.  Everything lives in
one directory:

    DIR/sshd_config, DIR/ssh_host_*_key   the server and its own host keys
    DIR/sshd.pid, DIR/sshd.log            PidFile and -E log
    DIR/run/                              the sessions' XDG_RUNTIME_DIR
    DIR/home/.ssh/                        a fake HOME for the client:
        id_ed25519                        default key (authorized)
        test_ecdsa, test_rsa              extra keys, authorized, not default names
                                          (test_rsa is OpenSSH-format like gcloud's)
        wrong_ed25519                     a key that is NOT authorized
        authorized_keys                   the authorized public keys (sshd reads it)
        known_hosts                       every worker's host keys as [127.0.1.k]:PORT
    DIR/hosts                             one 127.0.1.k:PORT per line
    DIR/env                               shell-sourceable HOME=... TPUSH_FARM_PORT=...
    DIR/farm.json                         state for `stop` and for other processes

Command line (always run with /usr/bin/python3):

    farm.py start DIR [--workers N]     start (DIR is created if needed)
    farm.py stop DIR                    stop; idempotent
    farm.py env DIR                     print the env file

As a library:

    with Farm(DIR, workers=64) as farm:     # or Farm(...).start() / .stop()
        farm.hosts, farm.port, farm.home, farm.env()

Every sshd started here is stopped by PID (verified against its command line),
together with its per-connection children.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"  # sshd insists on an absolute path (it re-execs itself)
SSH_KEYGEN = "ssh-keygen"

# Host key types the farm's sshd offers (like a stock Debian sshd offers several).
HOST_KEY_TYPES = ("ed25519", "ecdsa")

# Client keys created in DIR/home/.ssh: file name -> (ssh-keygen args, authorized?)
CLIENT_KEYS = {
    "id_ed25519": (["-t", "ed25519"], True),
    "test_ecdsa": (["-t", "ecdsa", "-b", "256"], True),
    "test_rsa": (["-t", "rsa", "-b", "3072"], True),  # OpenSSH format (ssh-keygen default)
    "wrong_ed25519": (["-t", "ed25519"], False),
}


# OpenSSH's sshd re-executes itself for every connection it accepts: its default, what a
# worker's sshd does, and what bench/ measures. The integration tests turn it off (sshd
# -r, tests/integration/conftest.py): each connection is then served by a fork of the
# listener, with the configuration and host keys it loaded at start. A client cannot tell
# the two apart; on this VM, where starting a program is dear, a handshake costs the
# server about a fifth less CPU, and the suite 7% less (1,000 s against 1,072). Host keys
# rewritten under a running sshd are not read again: a test that needs other keys starts
# another sshd, as the fault servers do.
REEXEC = True


def sshd_command(config: Path, log: Path) -> list[str]:
    """The command line of a farm sshd in the foreground, logging to `log`."""
    return [SSHD, "-D", *(() if REEXEC else ("-r",)), "-f", str(config), "-E", str(log)]


def sshd_available() -> bool:
    """True when the OpenSSH server and ssh-keygen are installed."""
    return os.access(SSHD, os.X_OK) and shutil.which(SSH_KEYGEN) is not None


def worker_address(index: int) -> str:
    """Loopback address of worker `index` (0-based): 127.0.1.1 ... 127.0.1.254, 127.0.2.1 ..."""
    return f"127.0.{1 + index // 254}.{1 + index % 254}"


def free_port(address: str = "0.0.0.0") -> int:
    """A currently free TCP port on `address` (bind port 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def keygen(path: Path, args: list[str], comment: str) -> None:
    """Create a passphrase-less key pair at `path` / `path`.pub."""
    for p in (path, path.with_name(path.name + ".pub")):
        p.unlink(missing_ok=True)
    subprocess.run([SSH_KEYGEN, "-q", *args, "-N", "", "-C", comment, "-f", str(path)],
                   check=True, timeout=60, stdin=subprocess.DEVNULL)


def public_key(path: Path) -> str:
    """'type base64' of the public key next to private key `path` (comment dropped)."""
    fields = path.with_name(path.name + ".pub").read_text().split()
    return f"{fields[0]} {fields[1]}"


def known_hosts_lines(addresses, port: int, host_key_files) -> str:
    """known_hosts text: one `[addr]:port type key` line per address and host key."""
    keys = [public_key(Path(k)) for k in host_key_files]
    return "".join(f"[{a}]:{port} {k}\n" for a in addresses for k in keys)


def wait_for_banner(address: str, port: int, deadline: float, proc=None, log: Path | None = None) -> None:
    """Poll until `address:port` accepts a connection and sends an SSH-2.0 banner."""
    last = "never tried"
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"sshd exited with {proc.returncode}: {tail(log)}")
        try:
            with socket.create_connection((address, port), timeout=1) as s:
                s.settimeout(1)
                data = b""
                while b"\n" not in data and len(data) < 256:
                    chunk = s.recv(256)
                    if not chunk:
                        break
                    data += chunk
                if data.startswith(b"SSH-2.0-"):
                    return
                last = f"unexpected banner {data[:80]!r}"
        except OSError as e:
            last = str(e)
        time.sleep(0.02)  # poll interval, not a readiness guess
    raise TimeoutError(f"sshd on {address}:{port} not ready ({last}): {tail(log)}")


def tail(log: Path | None, n: int = 20) -> str:
    if log is None or not log.exists():
        return ""
    return "".join(log.read_text(errors="replace").splitlines(keepends=True)[-n:])


# ---------------------------------------------------------------------------
# Process helpers: find and kill a process tree by PID, safely.

def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of `pid`, or None if it does not exist."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    """True if `pid` exists and is not a zombie."""
    st = _proc_stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def descendants(pid: int) -> list[int]:
    """All current descendants of `pid` (children first, depth-first order not guaranteed)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _proc_stat(int(entry))
            if st is not None:
                children.setdefault(st[1], []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def marked_processes(marker: str) -> list[int]:
    """PIDs whose environment holds `marker` (a NAME=value string): every process a farm
    session started, even after its session ended and it was reparented to init."""
    needle = marker.encode() + b"\0"
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                env = Path(f"/proc/{entry}/environ").read_bytes()
            except OSError:
                continue
            if env.startswith(needle) or b"\0" + needle in env:
                out.append(int(entry))
    return out


def kill_pids(pids) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def kill_tree(pid: int, must_contain: str, popen=None, timeout: float = 10) -> None:
    """Stop process `pid` (only if its command line contains `must_contain`) and its descendants.

    The root is frozen first (SIGSTOP) so it cannot fork while its tree is collected;
    then every descendant and the root get SIGKILL.  Idempotent."""
    if not alive(pid) or must_contain not in cmdline(pid):
        return
    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        return
    end = time.monotonic() + 2
    while time.monotonic() < end:  # wait until it is really stopped (or gone)
        st = _proc_stat(pid)
        if st is None or st[0] in ("T", "t", "Z", "X"):
            break
        time.sleep(0.005)
    for p in descendants(pid) + [pid]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if popen is not None:
        try:
            popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
    end = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.01)


def _raise_nofile() -> None:
    """preexec: raise the open-file soft limit to the hard limit (1000+ sessions)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# ---------------------------------------------------------------------------

class StartStop:
    """`with X(...) as x:` starts x and stops it on leaving; a start() that fails half-way
    is stopped too, so nothing it made is left behind. Subclasses give start() (returning
    self) and an idempotent stop()."""

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()


class Sshd:
    """One OpenSSH sshd in its own directory, with its own host keys.

    Used by Farm (listening on 0.0.0.0) and by faults.OtherSshd (one address,
    other host keys).  `authorized_keys` is an absolute path shared with the farm."""

    def __init__(self, directory: Path, listen: str, port: int, authorized_keys: Path,
                 host_key_types=HOST_KEY_TYPES, allow_from: str = "127.0.0.0/8",
                 extra_config: str = ""):
        self.dir = Path(directory).resolve()
        self.listen, self.port = listen, port
        self.authorized_keys = Path(authorized_keys).resolve()
        self.host_key_types = tuple(host_key_types)
        self.allow_from = allow_from
        self.extra_config = extra_config
        self.config = self.dir / "sshd_config"
        self.pidfile = self.dir / "sshd.pid"
        self.log = self.dir / "sshd.log"
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None
        # Set in every session's environment, so leftover remote commands can be found.
        self.marker = f"TPUSH_FARM_ID={secrets.token_hex(8)}"

    @property
    def host_key_files(self) -> list[Path]:
        return [self.dir / f"ssh_host_{t}_key" for t in self.host_key_types]

    def make_host_keys(self) -> None:
        for t, path in zip(self.host_key_types, self.host_key_files):
            if not path.exists():
                keygen(path, ["-t", t], f"tpush-farm-host-{t}")

    @property
    def runtime_dir(self) -> Path:
        return self.dir / "run"

    @property
    def bash_env(self) -> Path:
        """$BASH_ENV of every session: the startup file the login shell (bash, below the
        top shell level) reads. Absent unless a test writes it."""
        return self.dir / "bash_env"

    def write_config(self) -> None:
        import getpass
        self.runtime_dir.mkdir(mode=0o700, exist_ok=True)
        user = getpass.getuser()
        lines = [
            f"ListenAddress {self.listen}:{self.port}",
            *(f"HostKey {k}" for k in self.host_key_files),
            f"PidFile {self.pidfile}",
            f"AuthorizedKeysFile {self.authorized_keys}",
            f"AllowUsers {user}@{self.allow_from}",
            "PermitRootLogin yes",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "HostbasedAuthentication no",
            "UsePAM no",
            "StrictModes no",
            "UseDNS no",
            "MaxStartups 4096",
            "MaxSessions 256",
            "MaxAuthTries 30",       # tests try several keys; the failing case is the key, not the count
            "LoginGraceTime 120",
            "ClientAliveInterval 0",
            "TCPKeepAlive yes",
            "PrintMotd no",
            "PrintLastLog no",
            "X11Forwarding no",
            "PermitUserEnvironment no",
            # SHLVL: Debian bash skips root's (pyenv) .bashrc, and reads BASH_ENV instead.
            # XDG_RUNTIME_DIR: the hang-up guardians of kept sessions keep their
            # directories in the farm's, not in /tmp.
            f"SetEnv SHLVL=1 {self.marker} XDG_RUNTIME_DIR={self.runtime_dir} BASH_ENV={self.bash_env}",
            "Subsystem sftp internal-sftp",
            "LogLevel VERBOSE",
        ]
        if self.extra_config:
            lines.append(self.extra_config)
        self.config.write_text("\n".join(lines) + "\n")

    def start(self, ready_address: str, timeout: float = 30) -> "Sshd":
        """Write config, check it with `sshd -t`, launch sshd -D and wait for its banner."""
        self.dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:  # root's sshd needs its privilege-separation dir; a user's does not
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        self.make_host_keys()
        self.write_config()
        subprocess.run([SSHD, "-t", "-f", str(self.config)], check=True, timeout=30,
                       stdin=subprocess.DEVNULL, capture_output=True)
        self.log.unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            sshd_command(self.config, self.log),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=_raise_nofile)
        self.pid = self.proc.pid
        try:
            wait_for_banner(ready_address, self.port, time.monotonic() + timeout, self.proc, self.log)
        except BaseException:
            self.stop()
            raise
        return self

    def sessions(self) -> list[int]:
        """Live per-connection session processes (`sshd: USER@notty`)."""
        if self.pid is None:
            return []
        return [p for p in descendants(self.pid) if cmdline(p).startswith("sshd: ") and "@" in cmdline(p)]

    def kill_sessions(self) -> None:
        """Kill every session and every process started by one (found by the marker in
        its environment, also once orphaned); the listener keeps running."""
        for s in self.sessions():
            kill_pids(descendants(s) + [s])
        kill_pids(marked_processes(self.marker))

    def stop(self) -> None:
        """Kill sshd, every per-connection child and every leftover remote command. Idempotent."""
        pid = self.pid
        if pid is None and self.pidfile.exists():
            try:
                pid = int(self.pidfile.read_text().split()[0])
            except (ValueError, IndexError):
                pid = None
        if pid is not None:
            kill_tree(pid, str(self.config), self.proc)
        kill_pids(marked_processes(self.marker))
        self.pid, self.proc = None, None
        self.pidfile.unlink(missing_ok=True)


class Farm:
    """Many loopback workers behind one sshd, plus a fake client HOME. See module docstring."""

    def __init__(self, directory, workers: int = 64, extra_config: str = ""):
        """`extra_config`: sshd_config lines after the farm's own (e.g. a `Match
        LocalAddress A` block that makes one worker behave differently)."""
        if not 1 <= workers <= 254 * 200:
            raise ValueError("workers must be between 1 and 50800")
        self.dir = Path(directory).resolve()
        self.workers = workers
        self.extra_config = extra_config
        self.home = self.dir / "home"
        self.ssh_dir = self.home / ".ssh"
        self.known_hosts = self.ssh_dir / "known_hosts"
        self.authorized_keys = self.ssh_dir / "authorized_keys"
        self.hosts_file = self.dir / "hosts"
        self.env_file = self.dir / "env"
        self.state_file = self.dir / "farm.json"
        self.port: int | None = None
        self.sshd: Sshd | None = None

    # -- derived facts -----------------------------------------------------
    @property
    def addresses(self) -> list[str]:
        return [worker_address(i) for i in range(self.workers)]

    @property
    def hosts(self) -> list[str]:
        """`addr:port` of every worker, in order."""
        return [f"{a}:{self.port}" for a in self.addresses]

    def key(self, name: str) -> Path:
        """Path of a client key: id_ed25519, test_ecdsa, test_rsa, wrong_ed25519."""
        return self.ssh_dir / name

    @property
    def host_key_files(self) -> list[Path]:
        return self.sshd.host_key_files

    def kill_sessions(self) -> None:
        """Kill all sessions and remote commands; the farm keeps serving."""
        self.sshd.kill_sessions()

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "TPUSH_FARM_PORT": str(self.port),
                "TPUSH_FARM_HOSTS": str(self.hosts_file), "TPUSH_FARM_DIR": str(self.dir)}

    def copy_home(self, dest) -> Path:
        """A private copy of the fake HOME (tests that edit known_hosts or keys use one)."""
        dest = Path(dest)
        shutil.copytree(self.home, dest, symlinks=True)
        return dest

    # -- lifecycle -------------------------------------------------------------
    def _make_client_files(self) -> None:
        self.ssh_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.ssh_dir, 0o700)
        authorized = []
        for name, (args, ok) in CLIENT_KEYS.items():
            path = self.key(name)
            if not path.exists():
                keygen(path, args, f"tpush-farm-{name}")
            if ok:
                authorized.append(public_key(path) + f" tpush-farm-{name}\n")
        self.authorized_keys.write_text("".join(authorized))

    def start(self, timeout: float = 30) -> "Farm":
        if not sshd_available():
            raise RuntimeError(f"{SSHD} or ssh-keygen not installed (apt-get install openssh-server)")
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.state_file.exists():
            state = json.loads(self.state_file.read_text())
            if alive(state["pid"]) and state["config"] in cmdline(state["pid"]):
                raise RuntimeError(f"a farm is already running in {self.dir} (sshd pid {state['pid']}); "
                                   f"stop it first: farm.py stop {self.dir}")
        self._make_client_files()
        last_error: Exception | None = None
        for _ in range(5):  # retry if someone grabs the free port before sshd binds it
            self.port = free_port()
            self.sshd = Sshd(self.dir, "0.0.0.0", self.port, self.authorized_keys,
                             extra_config=self.extra_config)
            try:
                self.sshd.start(worker_address(0), timeout)
                break
            except (RuntimeError, TimeoutError) as e:
                last_error = e
                if "Address already in use" not in str(e):
                    raise
        else:
            raise RuntimeError(f"could not start sshd: {last_error}")
        self.known_hosts.write_text(known_hosts_lines(self.addresses, self.port, self.host_key_files))
        self.hosts_file.write_text("".join(h + "\n" for h in self.hosts))
        self.env_file.write_text("".join(f"export {k}={shlex.quote(v)}\n" for k, v in self.env().items()))
        self.state_file.write_text(json.dumps({
            "port": self.port, "workers": self.workers, "pid": self.sshd.pid,
            "marker": self.sshd.marker,
            "config": str(self.sshd.config)}, indent=1) + "\n")
        return self

    def stop(self) -> None:
        """Stop the sshd (by PID, verified) and its sessions. Idempotent; files stay."""
        if self.sshd is not None:
            self.sshd.stop()
        elif self.state_file.exists():
            state = json.loads(self.state_file.read_text())
            kill_tree(state["pid"], state["config"])
            kill_pids(marked_processes(state["marker"]))
            (self.dir / "sshd.pid").unlink(missing_ok=True)

    def __enter__(self) -> "Farm":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @classmethod
    def attach(cls, directory) -> "Farm":
        """A Farm object for a farm started elsewhere (e.g. by the CLI)."""
        d = Path(directory).resolve()
        state = json.loads((d / "farm.json").read_text())
        farm = cls(d, state["workers"])
        farm.port = state["port"]
        farm.sshd = Sshd(d, "0.0.0.0", farm.port, farm.authorized_keys)
        farm.sshd.pid = state["pid"]
        farm.sshd.marker = state["marker"]
        return farm


def farm_fixture(workers: int = 64, extra_config: str = ""):
    """Generator for a pytest fixture: `yield from farm_fixture(64)` gives a started Farm
    in a fresh temp dir and always stops it.  The dir is kept when KEEP_FARM is set."""
    directory = tempfile.mkdtemp(prefix="tpush-farm-")
    farm = Farm(directory, workers, extra_config)
    try:
        farm.start()
        yield farm
    finally:
        farm.stop()
        if not os.environ.get("KEEP_FARM"):
            shutil.rmtree(directory, ignore_errors=True)


# ---------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Loopback OpenSSH test farm for tpush.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("start", help="start a farm in DIR")
    p.add_argument("dir")
    p.add_argument("--workers", type=int, default=64)
    p = sub.add_parser("stop", help="stop the farm in DIR (idempotent)")
    p.add_argument("dir")
    p = sub.add_parser("env", help="print DIR/env (source it in a shell)")
    p.add_argument("dir")
    args = ap.parse_args(argv)

    if args.cmd == "start":
        try:
            farm = Farm(args.dir, args.workers).start()
        except (RuntimeError, TimeoutError, ValueError, subprocess.CalledProcessError) as e:
            print(f"farm: error: {e}", file=sys.stderr)
            return 1
        print(f"farm: {farm.workers} workers on port {farm.port} "
              f"({farm.hosts[0]} .. {farm.hosts[-1]}), sshd pid {farm.sshd.pid}", file=sys.stderr)
        print(f"farm: hosts file {farm.hosts_file}; source {farm.env_file}", file=sys.stderr)
    elif args.cmd == "stop":
        d = Path(args.dir)
        if (d / "farm.json").exists():
            Farm.attach(d).stop()
    elif args.cmd == "env":
        sys.stdout.write(Path(args.dir, "env").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
