"""The soak's farm: tests/farm's Farm plus more sshds, and what the soak does to them.

    SoakFarm(dir, workers, sshds)   farm.Farm (sshd 0, client HOME, keys) and sshds-1
                                    more farm.Sshd on ports of their own, all with the
                                    farm's host keys; worker i is served by sshd i % sshds
                                    (hosts: 127.0.x.y:PORT_k, known_hosts for all of them)
    SoakFarm.restart(k, down, hard) restart sshd k: soft as `systemctl restart ssh` (the
                                    listener only, sessions live on), hard as a crash
                                    (the listener and every session it serves killed)
    server_processes(ports)         sshd processes (not listeners) holding a connection on
                                    one of `ports`, with the worker address each serves
    NftTable(name)                  one nft table of ours; rules added one by one while a
                                    round runs, each with a counter, deleted by name

Everything is found and killed by PID after checking what it is; nothing by name.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path

import farm as farm_mod
from farm import Farm, Sshd, alive, cmdline, free_port, kill_pids, known_hosts_lines, \
    marked_processes, worker_address


class SoakFarm(farm_mod.StartStop):
    def __init__(self, directory, workers: int, sshds: int, nice: int = 0):
        if sshds < 1 or sshds > workers:
            raise ValueError("need 1 <= sshds <= workers")
        self.dir = Path(directory).resolve()
        self.workers, self.count = workers, sshds
        self.farm = Farm(self.dir, workers)
        self.sshds: list[Sshd] = []
        self.hosts_file = self.dir / "soak-hosts"
        self.restarts: list[dict] = []
        self.nice = nice  # each sshd's niceness; its sessions inherit it

    # -- facts -------------------------------------------------------------------------
    @property
    def home(self) -> Path:
        return self.farm.home

    @property
    def ports(self) -> list[int]:
        return [s.port for s in self.sshds]

    def sshd_of(self, worker: int) -> int:
        return worker % self.count

    def address(self, worker: int) -> str:
        return worker_address(worker)

    def host(self, worker: int) -> str:
        return f"{worker_address(worker)}:{self.sshds[self.sshd_of(worker)].port}"

    @property
    def hosts(self) -> list[str]:
        return [self.host(i) for i in range(self.workers)]

    @property
    def markers(self) -> list[str]:
        return [s.marker for s in self.sshds]

    def listener_pids(self) -> set[int]:
        return {s.pid for s in self.sshds if s.pid is not None}

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> "SoakFarm":
        self.farm.start()
        self.sshds = [self.farm.sshd]
        self._renice(self.farm.sshd)
        for k in range(1, self.count):
            d = self.dir / f"sshd{k}"
            d.mkdir(parents=True, exist_ok=True)
            for key in self.farm.host_key_files:  # same host keys: one known_hosts format
                for src in (key, key.with_name(key.name + ".pub")):
                    shutil.copy2(src, d / src.name)
            self.sshds.append(self._start_sshd(d))
        # Every worker at its own sshd's port; the farm wrote sshd 0's entries only.
        text = "".join(known_hosts_lines([self.address(i)], self.sshds[self.sshd_of(i)].port,
                                         self.farm.host_key_files) for i in range(self.workers))
        self.farm.known_hosts.write_text(text)
        self.hosts_file.write_text("".join(h + "\n" for h in self.hosts))
        return self

    def _start_sshd(self, d: Path) -> Sshd:
        last: Exception | None = None
        for _ in range(5):  # someone may take the free port before sshd binds it
            s = Sshd(d, "0.0.0.0", free_port(), self.farm.authorized_keys)
            try:
                return self._renice(s.start(worker_address(0)))
            except (RuntimeError, TimeoutError) as e:
                last = e
                if "Address already in use" not in str(e):
                    raise
        raise RuntimeError(f"could not start sshd in {d}: {last}")

    def restart(self, k: int, down: float, hard: bool = False) -> dict:
        """Restart sshd k on the same port after `down` seconds of outage.

        soft: the listener only (SIGTERM), as `systemctl restart ssh` does: its sessions
              live on, connects during the outage are refused.
        hard: as a crash or reboot of that server: the listener is frozen, then it and
              every process serving a connection on its port (and their remote commands)
              are SIGKILLed. Returns what happened."""
        s = self.sshds[k]
        old = s.pid
        t0 = time.monotonic()
        if old is None or not alive(old) or str(s.config) not in cmdline(old):
            raise RuntimeError(f"sshd {k} (pid {old}) is not running")
        killed = 0
        if hard:
            os.kill(old, signal.SIGSTOP)  # no new sessions while we collect them
            victims = [p for p in server_processes([s.port], {old})]
            victims += [p for p in marked_processes(s.marker) if p not in victims]
            kill_pids(victims + [old])
            killed = len(victims)
        else:
            os.kill(old, signal.SIGTERM)
        try:
            s.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"sshd {k} (pid {old}) did not exit")
        stopped = time.monotonic()
        if s.log.exists():  # start() truncates the log: keep the old one
            s.log.rename(s.log.with_name(f"sshd.log.{len(self.restarts)}"))
        time.sleep(down)  # the deliberate outage: connects now are refused
        self._relaunch(s)
        info = {"sshd": k, "mode": "hard" if hard else "soft", "port": s.port, "old_pid": old,
                "new_pid": s.pid, "sessions_killed": killed,
                "down_seconds": round(time.monotonic() - stopped, 2),
                "took_seconds": round(time.monotonic() - t0, 2)}
        self.restarts.append(info)
        return info

    def _relaunch(self, s: Sshd, timeout: float = 120) -> None:
        """Start a stopped sshd again with its unchanged config. Ready when its port
        listens: a loaded machine may take seconds to fork the first banner, longer than
        farm.wait_for_banner's one-second tries, and a failed Sshd.start() would kill
        every session the new sshd already serves."""
        s.proc = subprocess.Popen(
            farm_mod.sshd_command(s.config, s.log),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=farm_mod._raise_nofile)
        s.pid = s.proc.pid
        self._renice(s)
        end = time.monotonic() + timeout
        while s.port not in _listening_ports():
            if s.proc.poll() is not None:
                raise RuntimeError(f"sshd exited with {s.proc.returncode}: {farm_mod.tail(s.log)}")
            if time.monotonic() > end:
                raise TimeoutError(f"sshd on port {s.port} not listening after {timeout:.0f}s")
            time.sleep(0.05)

    def _renice(self, s: Sshd) -> Sshd:
        if self.nice:
            os.setpriority(os.PRIO_PROCESS, s.pid, self.nice)
        return s

    def leftovers(self) -> dict[int, str | None]:
        """Server-side processes still alive: sessions by port, and remote commands by
        marker, each with its worker's address (from the session it runs under, else
        from its $SSH_CONNECTION)."""
        found: dict[int, str | None] = server_processes(self.ports, self.listener_pids())
        sessions = dict(found)
        for m in self.markers:
            for p in marked_processes(m):
                found.setdefault(p, _session_address(p, sessions) or _connection_address(p))
        return found

    def kill_leftovers(self) -> int:
        found = self.leftovers()
        pids = [p for p in found if _is_ours(p, self)]
        for p in pids:  # a stopped process dies of SIGKILL too; CONT for good measure
            try:
                os.kill(p, signal.SIGCONT)
            except ProcessLookupError:
                pass
        kill_pids(pids)
        return len(pids)

    def stop(self) -> None:
        try:
            self.kill_leftovers()
        except OSError:
            pass
        for s in self.sshds[1:]:
            s.stop()
        self.farm.stop()


def _session_address(pid: int, sessions: dict[int, str | None]) -> str | None:
    """The worker address of the first ancestor of `pid` that is one of `sessions`."""
    for _ in range(64):
        if pid in sessions:
            return sessions[pid]
        st = farm_mod._proc_stat(pid)
        if st is None or st[1] <= 1:
            return None
        pid = st[1]
    return None


def _connection_address(pid: int) -> str | None:
    """The worker address in a remote process's $SSH_CONNECTION (kept by processes whose
    session parent is gone, such as tpush's remote watchdog)."""
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    for item in env:
        if item.startswith(b"SSH_CONNECTION="):
            f = item.split(b"=", 1)[1].split()
            return f[2].decode() if len(f) == 4 else None
    return None


def _is_ours(pid: int, sf: SoakFarm) -> bool:
    """A last check before SIGKILL: an sshd child on our ports or a marked remote command."""
    cl = cmdline(pid)
    if cl.startswith("sshd") and pid not in sf.listener_pids():
        return True
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return any((m.encode() + b"\0") in env or env.endswith(m.encode()) for m in sf.markers)


# ---------------------------------------------------------------------------
# Which sshd process holds which connection: /proc/net/tcp, then each sshd's fds.

def _tcp_sockets(ports: set[int]) -> dict[int, str]:
    """inode -> local IPv4 address of every non-listening TCP socket on one of `ports`."""
    out: dict[int, str] = {}
    try:
        rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return out
    for row in rows:
        f = row.split()
        ip_hex, port_hex = f[1].split(":")
        if int(port_hex, 16) not in ports or f[3] == "0A":  # 0A: LISTEN
            continue
        ip = socket.inet_ntoa(struct.pack("<I", int(ip_hex, 16)))
        out[int(f[9])] = ip
    return out


def _listening_ports() -> set[int]:
    ports = set()
    try:
        rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return ports
    for row in rows:
        f = row.split()
        if f[3] == "0A":
            ports.add(int(f[1].split(":")[1], 16))
    return ports


def server_processes(ports, exclude=()) -> dict[int, str | None]:
    """pid -> worker address for every `sshd...` process (other than `exclude`) that holds
    a connection accepted on one of `ports`."""
    inodes = _tcp_sockets(set(ports))
    found: dict[int, str | None] = {}
    if not inodes:
        return found
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in exclude:
            continue
        pid = int(entry)
        if not cmdline(pid).startswith("sshd"):
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                addr = inodes.get(int(target[8:-1]))
                if addr is not None:
                    found[pid] = addr
                    break
    return found


def serves(pid: int, addr: str, port: int) -> bool:
    """True if process `pid` holds the TCP connection accepted on addr:port (a session's
    pid read from a worker's output is checked this way before it is signalled)."""
    inodes = {i for i, a in _tcp_sockets({port}).items() if a == addr}
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and int(target[8:-1]) in inodes:
            return True
    return False


def proc_state(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2:].split()[0]


# ---------------------------------------------------------------------------
# nftables: one table per soak process, rules added while tpush streams.

_live_tables: set[str] = set()


def _nft(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["nft", *args], check=check, capture_output=True, text=True, timeout=20)


class NftTable:
    """An inet table of ours with an input chain; add(rule) returns the rule's handle.
    Rules carry `counter`, so counters() tells whether each one matched anything."""

    def __init__(self, name: str):
        self.name = name
        self.rules: list[str] = []

    def create(self) -> "NftTable":
        _nft("add", "table", "inet", self.name)
        _live_tables.add(self.name)
        _nft("add", "chain", "inet", self.name, "input",
             "{ type filter hook input priority 0; policy accept; }")
        return self

    def add(self, *rules: str) -> None:
        """Add `rules` in one transaction: they take effect together."""
        script = "".join(f"add rule inet {self.name} input {r}\n" for r in rules)
        subprocess.run(["nft", "-f", "-"], input=script, check=True, capture_output=True, text=True,
                       timeout=60)
        self.rules += rules

    def counters(self) -> list[tuple[str, int]]:
        """(rule text, packets matched) for every rule, in order."""
        r = _nft("-j", "list", "table", "inet", self.name, check=False)
        if r.returncode != 0:
            return []
        out = []
        for item in json.loads(r.stdout).get("nftables", []):
            rule = item.get("rule")
            if not rule:
                continue
            packets = 0
            for e in rule.get("expr", []):
                if "counter" in e:
                    packets = e["counter"].get("packets", 0)
            out.append((rule.get("comment", ""), packets))
        return out

    def delete(self) -> None:
        if self.name in _live_tables:
            _nft("delete", "table", "inet", self.name, check=False)
            _live_tables.discard(self.name)


def tables_named(prefix: str) -> list[str]:
    r = _nft("list", "tables", check=False)
    return [l.split()[-1] for l in r.stdout.splitlines() if l.split() and l.split()[-1].startswith(prefix)]


@atexit.register
def _cleanup_tables() -> None:
    for t in list(_live_tables):
        _nft("delete", "table", "inet", t, check=False)
        _live_tables.discard(t)
