#!/usr/bin/python3
"""Jump hosts (bastions) and workers reachable only through one, for tpush's reach tests.

    SshdLog(path)          reads an sshd -E log written at LogLevel DEBUG1 and counts
                           accepted sessions (`Accepted publickey for`), forwarded
                           channels (`server_input_channel_open: ctype direct-tcpip`),
                           refused ones, and the host:port each channel was opened to
    Bastion(authorized_keys, ...)
                           a second sshd made from the farm's Sshd (tests/farm/farm.py):
                           AllowTcpForwarding yes, LogLevel DEBUG1, its own host key,
                           the farm's authorized_keys, one address:port.  fault= makes
                           it fail on purpose:
                             "wrong_host_key"  its known_hosts lines carry a key it
                                               does not have (host key changed)
                             "refuse_auth"     no key is authorized (Permission denied)
                             "no_forwarding"   AllowTcpForwarding no: logins work, every
                                               channel open fails "administratively
                                               prohibited"
                           and kill_sessions() kills every connection it serves
                           (the bastion "dies mid-run"; the listener stays).
    HiddenFarm(farm, workers)
                           root only: a network namespace of its own (tpush-hidden-PID-N)
                           holding the workers' sshd (the farm's config, on 127.0.1.k
                           inside the namespace, a port free in both namespaces) and a
                           Bastion on the namespace end of a veth pair (10.x.y.2/30, a
                           /30 checked to be unused here).  From this namespace only the
                           bastion's address:port answers: an nft table inside the
                           namespace rejects every other TCP port on the veth, and the
                           workers' 127.0.1.k are the namespace's own loopback.
    ssh_defaults(...)      `Host *` lines for OpenSSH in tests (the farm's key only,
                           a given known_hosts, no prompts)

Everything is torn down by PID (sshd, verified by its command line) or by name
(`ip netns del`, which takes the veth and the nft table with it), also at exit
and, for namespaces left by a test run that was killed, by reap_stale_namespaces()
(a tpush-hidden-PID-* namespace whose PID is gone: the sshds in it are killed,
then the namespace is deleted).

Command line (always run with /usr/bin/python3):

    jump.py reap        delete namespaces left behind by dead test processes
"""

from __future__ import annotations

import atexit
import ipaddress
import itertools
import json
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:  # works both as tests/farm/jump.py on sys.path and as a package module
    from farm import (SSHD, Sshd, StartStop, _raise_nofile, alive, cmdline, descendants, free_port,
                      keygen, kill_pids, known_hosts_lines, sshd_command, tail, wait_for_banner, worker_address)
    from faults import fault_address
except ImportError:  # pragma: no cover
    from .farm import (SSHD, Sshd, StartStop, _raise_nofile, alive, cmdline, descendants, free_port,
                       keygen, kill_pids, known_hosts_lines, sshd_command, tail, wait_for_banner, worker_address)
    from .faults import fault_address

IP = "ip"
NFT = "nft"
NETNS_PREFIX = "tpush-hidden-"


# ---------------------------------------------------------------------------
# Reading a DEBUG1 sshd log

class SshdLog:
    """Counts in an sshd -E log written at LogLevel DEBUG1 (the bastion's).

    Every count takes `since`, a byte offset from mark(), so one long-lived bastion
    can serve several checks: `m = log.mark(); ...; log.channels(since=m)`.
    Lines are written by the session processes as things happen: a count read right
    after the client exits is complete, but use wait_for() while clients still run."""

    ACCEPTED = re.compile(r"^Accepted publickey for (\S+) from (\S+) port (\d+)", re.M)
    CHANNEL = re.compile(r"server_input_channel_open: ctype direct-tcpip ")
    CONFIRMED = re.compile(r"server_input_channel_open: confirm direct-tcpip")
    REFUSED = re.compile(r"server_input_channel_open: failure direct-tcpip")
    TARGET = re.compile(r"server_request_direct_tcpip: originator \S+ port \d+, target (\S+) port (\d+)")

    def __init__(self, path):
        self.path = Path(path)

    def mark(self) -> int:
        """The log's current size: counts with since=mark() see only later lines."""
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def text(self, since: int = 0) -> str:
        try:
            with open(self.path, "rb") as f:
                f.seek(since)
                return f.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def sessions(self, since: int = 0) -> int:
        """Accepted logins (one per SSH connection that authenticated)."""
        return len(self.ACCEPTED.findall(self.text(since)))

    def logins(self, since: int = 0) -> list[tuple[str, str, int]]:
        """(user, client address, client port) of each accepted login."""
        return [(u, a, int(p)) for u, a, p in self.ACCEPTED.findall(self.text(since))]

    def channels(self, since: int = 0) -> int:
        """direct-tcpip channel opens requested (ProxyJump/-W/forwarded workers)."""
        return len(self.CHANNEL.findall(self.text(since)))

    def confirmed_channels(self, since: int = 0) -> int:
        return len(self.CONFIRMED.findall(self.text(since)))

    def refused_channels(self, since: int = 0) -> int:
        """Channel opens the server refused (AllowTcpForwarding no, or target down)."""
        return len(self.REFUSED.findall(self.text(since)))

    def targets(self, since: int = 0) -> list[tuple[str, int]]:
        """(host, port) each channel asked for, in order."""
        return [(h, int(p)) for h, p in self.TARGET.findall(self.text(since))]

    def counts(self, since: int = 0) -> dict[str, int]:
        return {"sessions": self.sessions(since), "channels": self.channels(since),
                "confirmed": self.confirmed_channels(since), "refused": self.refused_channels(since)}

    def wait_for(self, since: int = 0, timeout: float = 30, **at_least) -> dict[str, int]:
        """Poll until every count named in `at_least` (sessions=, channels=, confirmed=,
        refused=) reaches its value; returns the counts, raises TimeoutError."""
        end = time.monotonic() + timeout
        while True:
            counts = self.counts(since)
            if all(counts[k] >= v for k, v in at_least.items()):
                return counts
            if time.monotonic() > end:
                raise TimeoutError(f"{self.path}: wanted {at_least}, have {counts}")
            time.sleep(0.02)  # poll interval


# ---------------------------------------------------------------------------
# An sshd with extra leading options, optionally inside a network namespace

class ReachSshd(Sshd):
    """The farm's Sshd with options put in front of its config (sshd keeps the first value
    of a keyword, so these win over the farm's), optionally run inside a network
    namespace with `ip netns exec` (which execs sshd: the PID stays sshd's)."""

    def __init__(self, *args, leading_config: str = "", netns: str | None = None, **kw):
        super().__init__(*args, **kw)
        self.leading_config = leading_config
        self.netns = netns

    def write_config(self) -> None:
        super().write_config()
        if self.leading_config:
            self.config.write_text(self.leading_config.rstrip("\n") + "\n" + self.config.read_text())

    def start(self, ready_address: str | None = None, timeout: float = 30) -> "ReachSshd":
        """Like Sshd.start; readiness is the banner on `ready_address`, or, when that is
        None (an address only reachable inside the namespace), sshd's own
        `Server listening on` log line, written after listen()."""
        if self.netns is None and ready_address is not None:
            super().start(ready_address, timeout)
            return self
        self.dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        self.make_host_keys()
        self.write_config()
        subprocess.run([SSHD, "-t", "-f", str(self.config)], check=True, timeout=30,
                       stdin=subprocess.DEVNULL, capture_output=True)
        self.log.unlink(missing_ok=True)
        prefix = [IP, "netns", "exec", self.netns] if self.netns else []
        self.proc = subprocess.Popen(
            [*prefix, *sshd_command(self.config, self.log)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=_raise_nofile)
        self.pid = self.proc.pid
        try:
            deadline = time.monotonic() + timeout
            if ready_address is not None:
                wait_for_banner(ready_address, self.port, deadline, self.proc, self.log)
            else:
                self._wait_for_listening(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_for_listening(self, deadline: float) -> None:
        needle = f" port {self.port}."
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited with {self.proc.returncode}: {tail(self.log)}")
            if self.log.exists() and any(l.startswith("Server listening on") and l.endswith(needle)
                                         for l in self.log.read_text(errors="replace").splitlines()):
                return
            time.sleep(0.02)  # poll interval
        raise TimeoutError(f"sshd in {self.netns} not listening on port {self.port}: {tail(self.log)}")

    def connection_pids(self) -> list[int]:
        """Every per-connection process (pre-auth, privsep monitor and session alike)."""
        return descendants(self.pid) if self.pid is not None and alive(self.pid) else []


# ---------------------------------------------------------------------------

def ssh_defaults(identity, known_hosts, user: str | None = None, connect_timeout: int = 10) -> str:
    """`Host *` lines for OpenSSH in tests: only `identity`, only `known_hosts`, strict host
    key checking, no prompts.  OpenSSH reads ~ from the passwd entry, not $HOME, and a
    ProxyJump's inner ssh gets only `-F FILE`, so tests give every setting in a file."""
    lines = ["Host *",
             f"  IdentityFile {identity}",
             "  IdentitiesOnly yes",
             f"  UserKnownHostsFile {known_hosts}",
             "  GlobalKnownHostsFile /dev/null",
             "  StrictHostKeyChecking yes",
             "  UpdateHostKeys no",
             "  BatchMode yes",
             f"  ConnectTimeout {connect_timeout}",
             "  ControlMaster no",
             "  ControlPath none"]
    if user:
        lines.append(f"  User {user}")
    return "\n".join(lines) + "\n"


class Bastion(StartStop):
    """A jump host: the farm's sshd config plus AllowTcpForwarding and LogLevel DEBUG1.

    `address` defaults to a fresh loopback address (127.0.2xx.y, as for fault servers);
    the port is picked free.  `log` is an SshdLog of its -E log.  See the module
    docstring for `fault`."""

    FAULTS = (None, "wrong_host_key", "refuse_auth", "no_forwarding")

    def __init__(self, authorized_keys, address: str | None = None, port: int | None = None,
                 fault: str | None = None, directory=None, allow_from: str = "127.0.0.0/8",
                 netns: str | None = None, host_key_types=("ed25519",)):
        if fault not in self.FAULTS:
            raise ValueError(f"unknown bastion fault {fault!r}; one of {self.FAULTS}")
        self.fault = fault
        self.address = address or fault_address()
        self._own_dir = directory is None
        self.dir = Path(directory or tempfile.mkdtemp(prefix="tpush-bastion-")).resolve()
        self.dir.mkdir(parents=True, exist_ok=True)
        keys = Path(authorized_keys)
        if fault == "refuse_auth":
            keys = self.dir / "authorized_keys.empty"
            keys.write_text("")
        leading = [f"AllowTcpForwarding {'no' if fault == 'no_forwarding' else 'yes'}",
                   "LogLevel DEBUG1"]
        self.netns = netns
        if netns and not port:
            raise ValueError("a bastion inside a namespace needs a port (pick it inside)")
        self.sshd = ReachSshd(self.dir, self.address, port or free_port(self.address),
                              keys, host_key_types=host_key_types, allow_from=allow_from,
                              leading_config="\n".join(leading), netns=netns)
        self.log = SshdLog(self.sshd.log)

    # -- facts ------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self.sshd.port

    @property
    def host(self) -> str:
        """address:port, as tpush's host lists and -J want it."""
        return f"{self.address}:{self.port}"

    def jump(self, user: str) -> str:
        """An OpenSSH -J / ProxyJump value: user@address:port."""
        return f"{user}@{self.address}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.sshd.pid

    def known_hosts_lines(self) -> str:
        """known_hosts lines for this bastion.  For fault="wrong_host_key" they carry a
        key the bastion does not hold, so a checking client refuses it."""
        files = self.sshd.host_key_files
        if self.fault == "wrong_host_key":
            decoy = self.dir / "decoy_host_ed25519_key"
            if not decoy.exists():
                keygen(decoy, ["-t", "ed25519"], "tpush-bastion-decoy")
            files = [decoy]
        return known_hosts_lines([self.address], self.port, files)

    def add_to_known_hosts(self, path) -> None:
        """Append known_hosts_lines() to the file `path` (a test's private known_hosts)."""
        with open(path, "a") as f:
            f.write(self.known_hosts_lines())

    def ssh_config_entry(self, alias: str = "bastion", user: str | None = None) -> str:
        """A `Host ALIAS` block for this bastion (HostName, Port, User)."""
        lines = [f"Host {alias}", f"  HostName {self.address}", f"  Port {self.port}"]
        if user:
            lines.append(f"  User {user}")
        return "\n".join(lines) + "\n"

    # -- counting (see SshdLog) ----------------------------------------------------
    def mark(self) -> int:
        return self.log.mark()

    def sessions(self, since: int = 0) -> int:
        """Accepted SSH logins to the bastion."""
        return self.log.sessions(since)

    def channels(self, since: int = 0) -> int:
        """direct-tcpip channels opened through the bastion (one per worker reached)."""
        return self.log.channels(since)

    def counts(self, since: int = 0) -> dict[str, int]:
        return self.log.counts(since)

    # -- faults mid-run ------------------------------------------------------------
    def connection_pids(self) -> list[int]:
        """Live per-connection processes (each carries one client's jump session)."""
        return self.sshd.connection_pids()

    def kill_sessions(self, sig: int = signal.SIGKILL) -> int:
        """Kill every connection the bastion serves (the listener keeps running): every
        channel through it drops at once.  Returns how many processes were signalled."""
        pids = self.connection_pids()
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        return len(pids)

    # -- lifecycle -----------------------------------------------------------------
    def start(self, timeout: float = 30) -> "Bastion":
        ready = self.address  # the bastion's address is reachable from here, also in netns mode
        last = None
        for _ in range(5):  # retry if someone grabbed the port before sshd bound it
            try:
                self.sshd.start(ready, timeout)
                return self
            except (RuntimeError, TimeoutError) as e:
                last = e
                if "Address already in use" not in str(e) or self.netns:
                    raise
                self.sshd.port = free_port(self.address)
                self.sshd.write_config()
        raise RuntimeError(f"could not start the bastion: {last}")

    def stop(self) -> None:
        """Kill the sshd and its connections by PID. Idempotent; removes its own temp dir
        unless KEEP_FARM is set."""
        self.sshd.stop()
        if self._own_dir and not os.environ.get("KEEP_FARM"):
            shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------
# Network namespaces

def netns_available() -> tuple[bool, str]:
    """(usable, reason): creating namespaces and veths needs root (CAP_SYS_ADMIN and
    CAP_NET_ADMIN), iproute2's `ip` and `nft`."""
    if os.geteuid() != 0:
        return False, ("needs root: creating a network namespace and a veth pair takes "
                       "CAP_SYS_ADMIN/CAP_NET_ADMIN (the loopback bastion covers non-root runs)")
    for tool in (IP, NFT):
        if shutil.which(tool) is None:
            return False, f"`{tool}` is not installed (apt-get install iproute2 nftables)"
    return True, ""


def _run(*argv, check=True, timeout=30) -> subprocess.CompletedProcess:
    r = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


def _ns_exec(ns: str, *argv, check=True) -> subprocess.CompletedProcess:
    return _run(IP, "netns", "exec", ns, *argv, check=check)


def list_namespaces() -> list[str]:
    out = _run(IP, "-j", "netns", "list", check=False).stdout.strip()
    if not out:
        return []
    return [entry["name"] for entry in json.loads(out)]


def _used_networks() -> list[ipaddress.IPv4Network]:
    """Every IPv4 prefix on an interface or in a route here (all tables)."""
    nets = []
    for entry in json.loads(_run(IP, "-4", "-j", "addr", "show").stdout or "[]"):
        for a in entry.get("addr_info", []):
            nets.append(ipaddress.ip_network(f"{a['local']}/{a['prefixlen']}", strict=False))
    for route in json.loads(_run(IP, "-4", "-j", "route", "show", "table", "all").stdout or "[]"):
        dst = route.get("dst", "")
        if dst and dst != "default":
            try:
                nets.append(ipaddress.ip_network(dst if "/" in dst else dst + "/32", strict=False))
            except ValueError:
                pass
    return nets


def free_subnet(tries: int = 200) -> ipaddress.IPv4Network:
    """A /30 in 10.200.0.0 - 10.254.255.255 that overlaps no address or route here."""
    used = _used_networks()
    rng = random.Random(secrets.randbits(64))
    for _ in range(tries):
        net = ipaddress.ip_network(f"10.{rng.randint(200, 254)}.{rng.randint(0, 255)}.{4 * rng.randint(0, 63)}/30")
        if not any(net.overlaps(u) for u in used):
            return net
    raise RuntimeError("no unused 10.200-254.x.y/30 found")


def _link_exists(name: str) -> bool:
    return _run(IP, "link", "show", name, check=False).returncode == 0


def _ns_owner(name: str) -> int | None:
    m = re.fullmatch(re.escape(NETNS_PREFIX) + r"(\d+)-\d+", name)
    return int(m.group(1)) if m else None


def _kill_namespace_processes(ns: str) -> None:
    """Kill every process inside `ns` (all of them are a hidden farm's sshds)."""
    for _ in range(3):
        pids = [int(p) for p in _run(IP, "netns", "pids", ns, check=False).stdout.split()]
        if not pids:
            return
        kill_pids(pids)
        end = time.monotonic() + 5
        while any(alive(p) for p in pids) and time.monotonic() < end:
            time.sleep(0.01)


def delete_namespace(ns: str) -> None:
    """Kill what runs in `ns`, then delete it (its veth end and nft table go with it)."""
    if ns not in list_namespaces():
        return
    _kill_namespace_processes(ns)
    _run(IP, "netns", "del", ns, check=False)


def reap_stale_namespaces() -> list[str]:
    """Delete tpush-hidden-PID-N namespaces whose creating process is gone."""
    reaped = []
    for ns in list_namespaces():
        owner = _ns_owner(ns)
        if owner is not None and owner != os.getpid() and not alive(owner):
            delete_namespace(ns)
            reaped.append(ns)
    return reaped


_ns_counter = itertools.count()
_live_hidden: set["HiddenFarm"] = set()


@atexit.register
def _cleanup_hidden() -> None:
    for hf in list(_live_hidden):
        hf.stop()


class HiddenFarm:
    """Workers reachable only through a bastion, inside a network namespace (root only).

        hf.namespace         the namespace's name (tpush-hidden-PID-N)
        hf.hosts             "127.0.1.k:PORT" per worker, as tpush takes them
        hf.addresses, hf.port  the workers' addresses (inside the namespace) and port
        hf.bastion           the Bastion, on hf.bastion.address (the namespace end of
                             the veth, 10.x.y.2) : hf.bastion.port
        hf.client_address    this side of the veth (10.x.y.1)
        hf.known_hosts       a file with every worker's and the bastion's host keys
        hf.sshd              the workers' sshd (farm config, listening on 0.0.0.0 inside)
        hf.ssh_config(...)   an OpenSSH config: Host bastion, Host w0..wN-1 via ProxyJump
        hf.netns_argv(argv)  argv run inside the namespace

    The farm passed in provides the client keys (its authorized_keys is used by both
    sshds) and nothing else; the hidden workers have their own host keys."""

    def __init__(self, farm, workers: int = 64, directory=None):
        if not 1 <= workers <= 254 * 4:
            raise ValueError("workers must be between 1 and 1016")
        self.farm = farm
        self.workers = workers
        self._own_dir = directory is None
        self.dir = Path(directory or tempfile.mkdtemp(prefix="tpush-hidden-")).resolve()
        self.namespace = f"{NETNS_PREFIX}{os.getpid()}-{next(_ns_counter)}"
        token = secrets.token_hex(3)
        self.veth_host, self.veth_ns = f"tpv{token}h", f"tpv{token}n"
        self.subnet: ipaddress.IPv4Network | None = None
        self.client_address: str | None = None
        self.port: int | None = None
        self.sshd: ReachSshd | None = None
        self.bastion: Bastion | None = None
        self.known_hosts = self.dir / "known_hosts"
        self._created_ns = False

    # -- facts ---------------------------------------------------------------------
    @property
    def addresses(self) -> list[str]:
        return [worker_address(i) for i in range(self.workers)]

    @property
    def hosts(self) -> list[str]:
        return [f"{a}:{self.port}" for a in self.addresses]

    def netns_argv(self, argv) -> list[str]:
        return [IP, "netns", "exec", self.namespace, *map(str, argv)]

    def ssh_config(self, identity, user: str, prefix: str = "w", known_hosts=None) -> str:
        """OpenSSH config text: `Host bastion` and `Host {prefix}K` (HostName 127.0.1.k+1,
        Port, ProxyJump bastion) for every worker, then ssh_defaults()."""
        blocks = [self.bastion.ssh_config_entry("bastion", user)]
        for i, a in enumerate(self.addresses):
            blocks.append(f"Host {prefix}{i}\n  HostName {a}\n  Port {self.port}\n  ProxyJump bastion\n")
        blocks.append(ssh_defaults(identity, known_hosts or self.known_hosts, user))
        return "".join(blocks)

    def kill_sessions(self) -> None:
        """Kill every connection to the workers and to the bastion; both keep listening."""
        self.bastion.kill_sessions()
        self.sshd.kill_sessions()

    # -- lifecycle -----------------------------------------------------------------
    def start(self, timeout: float = 30) -> "HiddenFarm":
        ok, reason = netns_available()
        if not ok:
            raise RuntimeError(reason)
        reap_stale_namespaces()
        self.dir.mkdir(parents=True, exist_ok=True)
        _live_hidden.add(self)
        try:
            self._make_network()
            self._start_sshds(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _make_network(self) -> None:
        ns = self.namespace
        _run(IP, "netns", "add", ns)
        self._created_ns = True
        _run(IP, "-n", ns, "link", "set", "lo", "up")
        if _link_exists(self.veth_host):
            raise RuntimeError(f"interface {self.veth_host} exists already")
        self.subnet = free_subnet()
        host_ip, ns_ip = [str(h) for h in self.subnet.hosts()]
        self.client_address = host_ip
        _run(IP, "link", "add", self.veth_host, "type", "veth", "peer", "name", self.veth_ns, "netns", ns)
        _run(IP, "addr", "add", f"{host_ip}/30", "dev", self.veth_host)
        _run(IP, "link", "set", self.veth_host, "up")
        _run(IP, "-n", ns, "addr", "add", f"{ns_ip}/30", "dev", self.veth_ns)
        _run(IP, "-n", ns, "link", "set", self.veth_ns, "up")
        self._ns_address = ns_ip

    def _free_port_in_namespace(self, avoid=()) -> int:
        """A port free here (so 127.0.1.k:PORT from here reaches nothing, not some other
        sshd) and not in `avoid`; the namespace is new, so nothing listens in it but us."""
        for _ in range(20):
            port = free_port()
            if port not in avoid:
                return port
        raise RuntimeError("no free port")

    def _start_sshds(self, timeout: float) -> None:
        farm_port = getattr(self.farm, "port", None)
        self.port = self._free_port_in_namespace(avoid={farm_port})
        bastion_port = self._free_port_in_namespace(avoid={farm_port, self.port})
        # Only the bastion's port answers on the veth; everything else is refused at once.
        ruleset = ("table inet tpush_hidden {\n"
                   "  chain input {\n"
                   "    type filter hook input priority 0; policy accept;\n"
                   f"    iifname \"{self.veth_ns}\" tcp dport != {bastion_port} reject with tcp reset\n"
                   "  }\n}\n")
        (self.dir / "nft.rules").write_text(ruleset)
        _ns_exec(self.namespace, NFT, "-f", str(self.dir / "nft.rules"))
        self.sshd = ReachSshd(self.dir / "workers", "0.0.0.0", self.port, self.farm.authorized_keys,
                              netns=self.namespace)
        self.sshd.start(None, timeout)
        self.bastion = Bastion(self.farm.authorized_keys, address=self._ns_address, port=bastion_port,
                               directory=self.dir / "bastion", allow_from=str(self.subnet),
                               netns=self.namespace)
        self.bastion.start(timeout)
        self.known_hosts.write_text(known_hosts_lines(self.addresses, self.port, self.sshd.host_key_files)
                                    + self.bastion.known_hosts_lines())

    def stop(self) -> None:
        """Kill both sshds by PID, then every process left in the namespace, then delete
        the namespace (the veth pair and the nft table go with it). Idempotent."""
        if self.bastion is not None:
            self.bastion.stop()
        if self.sshd is not None:
            self.sshd.stop()
        if self._created_ns:
            delete_namespace(self.namespace)
            self._created_ns = False
        if _link_exists(self.veth_host):  # only if the namespace was never made whole
            _run(IP, "link", "del", self.veth_host, check=False)
        _live_hidden.discard(self)
        if self._own_dir and not os.environ.get("KEEP_FARM"):
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "HiddenFarm":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# ---------------------------------------------------------------------------

def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["reap"]:
        for ns in reap_stale_namespaces():
            print(f"jump: deleted stale namespace {ns}", file=sys.stderr)
        return 0
    print("usage: jump.py reap", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
