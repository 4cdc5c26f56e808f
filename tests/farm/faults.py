#!/usr/bin/python3
"""Hosts that misbehave for real, for tpush's integration tests.

Everything here is a context manager that removes what it created (sockets,
threads, nft tables, sshd processes), even when the test fails:

    FakeServer(mode)      a TCP listener on its own loopback address that speaks
                          bad SSH; modes in FakeServer.MODES (see below)
    Blackhole(addr, port) nftables rule dropping SYNs to addr[:port] -> connect timeout
                          (addr: one address or a list of them)
    Partition(addr, port) nftables rules dropping both directions of addr:port
                          (add while a stream is running -> a silent peer)
    FlippingRelay(a, p, at) a TCP relay to a:p that flips one bit of the server's
                          stream at byte `at`: SSH's MAC must catch it
    OtherSshd(farm)       a second sshd with other host keys on its own address;
                          .claim_farm_keys(known_hosts) makes it look like a worker
                          whose host key changed
    kill_session(pid, sig)  kill -9 / -STOP a per-connection `sshd: USER@notty`
                          process (the remote command's $PPID), checked by name

nft tables are named tpush_test_<pid>_<n> and deleted by name; an atexit hook
deletes any this process still owns.
"""

from __future__ import annotations

import atexit
import itertools
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

try:  # works both as tests/farm/faults.py on sys.path and as a package module
    from farm import StartStop, Sshd, Farm, free_port, known_hosts_lines, cmdline, alive, descendants
except ImportError:  # pragma: no cover
    from .farm import StartStop, Sshd, Farm, free_port, known_hosts_lines, cmdline, alive, descendants

# Fault servers and second sshds live on 127.0.2xx.y, far from the farm's 127.0.1.y.
_addr_counter = itertools.count()


def fault_address() -> str:
    """A fresh loopback address for one fault server (unique within this process)."""
    n = next(_addr_counter)
    return f"127.0.{200 + (os.getpid() + n // 254) % 50}.{1 + n % 254}"


def unused_address_port() -> tuple[str, int]:
    """An address:port where nothing listens (for `connect refused`)."""
    addr = fault_address()
    return addr, free_port(addr)


# ---------------------------------------------------------------------------

class FakeServer:
    """A listener that accepts TCP connections and misbehaves in one of these ways:

    silent               accept, then never send anything
    banner_then_silence  send `SSH-2.0-OpenSSH_9.2p1\\r\\n`, then nothing
    garbage              send bytes without any newline, then nothing
    junk_lines           send junk text lines forever (as fast as the client reads)
    ssh1                 send an SSH-1 banner (`SSH-1.5-...`), then nothing
    http                 send an HTTP 400 response and close
    rst                  accept and reset the connection at once (SO_LINGER 0)
    no_accept            listen with a tiny backlog and never accept()

    `accepted` counts connections accepted (0 for no_accept); `peers` lists their
    client addresses.  connections_before_now() tells whether anyone connected."""

    MODES = ("silent", "banner_then_silence", "garbage", "junk_lines", "ssh1", "http",
             "rst", "no_accept")
    BANNER = b"SSH-2.0-OpenSSH_9.2p1\r\n"

    def __init__(self, mode: str, address: str | None = None):
        if mode not in self.MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {self.MODES}")
        self.mode = mode
        self.address = address or fault_address()
        self.port: int | None = None
        self.accepted = 0
        self.peers: list[tuple[str, int]] = []  # client (addr, port) of each accepted connection
        self._probes: set[tuple[str, int]] = set()  # our own connections_before_now() probes
        self._listener: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = socket.socketpair()
        self._stopping = False

    @property
    def host(self) -> str:
        return f"{self.address}:{self.port}"

    def start(self) -> "FakeServer":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.address, 0))
        s.listen(1 if self.mode == "no_accept" else 128)
        s.setblocking(False)
        self._listener = s
        self.port = s.getsockname()[1]
        self._thread = threading.Thread(target=self._run, name=f"fake-{self.mode}", daemon=True)
        self._thread.start()
        return self

    def _first_bytes(self) -> bytes:
        return {
            "banner_then_silence": self.BANNER,
            "garbage": b"\x00\xffthis is not ssh at all, and it never ends a line",
            "ssh1": b"SSH-1.5-OpenSSH_1.2.3\r\n",
            "http": b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        }.get(self.mode, b"")

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        if self.mode != "no_accept":
            sel.register(self._listener, selectors.EVENT_READ, "listen")
        junk = b"".join(b"junk line %d: no banner here\r\n" % i for i in range(200))
        while not self._stopping:
            for key, events in sel.select(timeout=1):
                if key.data == "wake":
                    return
                if key.data == "listen":
                    try:
                        conn, peer = self._listener.accept()
                    except BlockingIOError:
                        continue
                    self.peers.append(peer)
                    self.accepted += 1
                    self._serve(conn, sel)
                elif events & selectors.EVENT_WRITE:  # junk_lines: keep pushing
                    try:
                        key.fileobj.send(junk)
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        sel.unregister(key.fileobj)
                elif events & selectors.EVENT_READ:  # drain what the client sends; notice EOF
                    try:
                        if not key.fileobj.recv(65536):
                            sel.unregister(key.fileobj)
                    except (BlockingIOError, InterruptedError):
                        pass
                    except OSError:
                        sel.unregister(key.fileobj)

    def _serve(self, conn: socket.socket, sel) -> None:
        self._conns.append(conn)
        if self.mode == "rst":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
            return
        first = self._first_bytes()
        if first:
            try:
                conn.sendall(first)
            except OSError:
                return
        if self.mode == "http":
            conn.close()
            return
        conn.setblocking(False)
        sel.register(conn, selectors.EVENT_WRITE if self.mode == "junk_lines" else selectors.EVENT_READ)

    def connections_before_now(self, timeout: float = 5) -> int:
        """How many connections were made before this call: connect a probe and wait until
        the server has accepted it (the accept queue is FIFO), then count the others."""
        if self.mode == "no_accept":
            raise ValueError("a no_accept server cannot count connections")
        with socket.create_connection((self.address, self.port), timeout=timeout) as probe:
            me = probe.getsockname()
            end = time.monotonic() + timeout
            while me not in self.peers:
                if time.monotonic() > end:
                    raise TimeoutError("fake server did not accept the probe connection")
                time.sleep(0.005)  # waiting for our own server thread
            earlier = self.peers[:self.peers.index(me)]
            count = sum(1 for p in earlier if p not in self._probes)
            self._probes.add(me)
            return count

    def stop(self) -> None:
        """Stop the thread and close every socket. Idempotent."""
        self._stopping = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        for c in self._conns:
            try:
                c.close()
            except OSError:
                pass
        self._conns.clear()
        for s in (self._listener, self._wake_r, self._wake_w):
            if s is not None:
                s.close()
        self._listener = None

    def __enter__(self) -> "FakeServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# ---------------------------------------------------------------------------
# nftables helpers

_table_counter = itertools.count()
_live_tables: set[str] = set()


def nft_available() -> bool:
    if shutil.which("nft") is None:
        return False
    r = subprocess.run(["nft", "list", "tables"], capture_output=True, timeout=10)
    return r.returncode == 0


class _NftRules(StartStop):
    """An nft table of our own with one input chain holding `rules`; deleted by name. The
    table, its chain and its rules are one `nft -f` transaction: one process (each nft
    start reads the whole ruleset, dear on a busy machine), and no half-made table."""

    def __init__(self, rules: list[str]):
        self.rules = rules
        self.table = f"tpush_test_{os.getpid()}_{next(_table_counter)}"

    def start(self):
        t = self.table
        script = (f"add table inet {t}\n"
                  f"add chain inet {t} input {{ type filter hook input priority 0; policy accept; }}\n" +
                  "".join(f"add rule inet {t} input {rule}\n" for rule in self.rules))
        _live_tables.add(t)
        subprocess.run(["nft", "-f", "-"], input=script, text=True, check=True, capture_output=True, timeout=10)
        return self

    def stop(self) -> None:
        if self.table in _live_tables:
            subprocess.run(["nft", "delete", "table", "inet", self.table],
                           capture_output=True, timeout=10)
            _live_tables.discard(self.table)


class Blackhole(_NftRules):
    """Drop every packet to `address` (and `port`, if given): connects time out. `address`
    may be a list: one rule drops them all."""

    def __init__(self, address: str | list[str], port: int | None = None):
        daddr = address if isinstance(address, str) else "{ " + ", ".join(address) + " }"
        rule = f"ip daddr {daddr}" + (f" tcp dport {port}" if port else "") + " drop"
        super().__init__([rule])
        self.address, self.port = address, port


class Partition(_NftRules):
    """Drop both directions of traffic to/from `address:port`.  Added mid-stream, the
    peer goes silent while the connection stays open (no RST, no FIN)."""

    def __init__(self, address: str, port: int):
        super().__init__([f"ip daddr {address} tcp dport {port} drop",
                          f"ip saddr {address} tcp sport {port} drop"])
        self.address, self.port = address, port


@atexit.register
def _cleanup_tables() -> None:
    for t in list(_live_tables):
        subprocess.run(["nft", "delete", "table", "inet", t], capture_output=True, timeout=10)
        _live_tables.discard(t)


# ---------------------------------------------------------------------------

class OtherSshd(StartStop):
    """A second sshd with its own (different) host keys on a fresh loopback address.

    It accepts the farm's client keys.  Call claim_farm_keys(known_hosts) to write
    the *farm's* host keys for this address into a known_hosts file: a client then
    sees a "host key changed" for `self.host`."""

    def __init__(self, farm: Farm, host_key_types=("ed25519",), extra_config: str = ""):
        """`extra_config`: sshd_config lines after its own (a `Match all` block overrides them)."""
        self.farm = farm
        self.address = fault_address()
        self.dir = Path(tempfile.mkdtemp(prefix="tpush-othersshd-"))
        self.sshd = Sshd(self.dir, self.address, free_port(self.address), farm.authorized_keys,
                         host_key_types=host_key_types, extra_config=extra_config)

    @property
    def port(self) -> int:
        return self.sshd.port

    @property
    def host(self) -> str:
        return f"{self.address}:{self.port}"

    def claim_farm_keys(self, known_hosts) -> None:
        """Append the farm's host keys for this address to `known_hosts`."""
        with open(known_hosts, "a") as f:
            f.write(known_hosts_lines([self.address], self.port, self.farm.host_key_files))

    def own_known_hosts_lines(self) -> str:
        return known_hosts_lines([self.address], self.port, self.sshd.host_key_files)

    def start(self) -> "OtherSshd":
        self.sshd.start(self.address)
        return self

    def stop(self) -> None:
        self.sshd.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------

class FlippingRelay(StartStop):
    """A TCP relay on its own loopback address to target_address:target_port that
    flips one bit of what the server sends, at byte `at` of each connection's server
    stream (and nothing else): a faulty link, or a tamperer, in the middle of an SSH
    connection. SSH's MAC (or AES-GCM's tag) must catch it."""

    def __init__(self, target_address: str, target_port: int, at: int):
        self.target = (target_address, target_port)
        self.at = at
        self.address = fault_address()
        self.port = free_port(self.address)
        self.flipped = threading.Event()
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []

    @property
    def host(self) -> str:
        return f"{self.address}:{self.port}"

    def start(self) -> "FlippingRelay":
        self._listener = socket.create_server((self.address, self.port))
        threading.Thread(target=self._accept, name="flipping-relay", daemon=True).start()
        return self

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
                server = socket.create_connection(self.target)
            except OSError:
                return
            self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, None), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, self.at), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, flip_at: int | None) -> None:
        seen = 0
        try:
            while data := src.recv(65536):
                if flip_at is not None and seen <= flip_at < seen + len(data):
                    i = flip_at - seen
                    data = data[:i] + bytes([data[i] ^ 0x10]) + data[i + 1:]
                    self.flipped.set()
                seen += len(data)
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self) -> None:
        for s in [self._listener, *self._sockets]:
            if s is not None:
                s.close()


# ---------------------------------------------------------------------------

def is_session_process(pid: int) -> bool:
    """True if `pid` is a per-connection `sshd: USER@notty` (or @pts) session process."""
    cl = cmdline(pid)
    return alive(pid) and cl.startswith("sshd: ") and "@" in cl


def kill_session(pid: int, sig: int = signal.SIGKILL) -> None:
    """Send `sig` (SIGKILL, SIGSTOP, ...) to a session sshd, after checking what it is.

    The remote command can print `$PPID` to name its session process."""
    if not is_session_process(pid):
        raise ValueError(f"pid {pid} is not an sshd session process: {cmdline(pid)!r}")
    os.kill(pid, sig)


def session_pids(farm: Farm) -> list[int]:
    """The farm's live session processes (`sshd: root@notty`)."""
    return [p for p in descendants(farm.sshd.pid) if is_session_process(p)]
