"""Workers given by host name or by IPv6 address.  Names are looked up off the event loop:
a slow DNS server holds up only its own worker, and Ctrl-C still works while it answers
nothing.

For names, tpush runs in a private mount namespace (`unshare -m`) whose /etc/hosts and
/etc/resolv.conf are the test's own; the DNS server is a small one of the test's, on
127.0.9.53:53, that answers only when the test releases it.  For IPv6, a second sshd of
the farm's listens on [::1]."""

import errno
import os
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import Streaming, Summary, farm_mod, host_args, output_lines

# DNS servers listen on port 53 (resolv.conf names no port), each test's on a loopback
# address of its own in 127.53.0.0/16: tests run side by side.
DNS_NET = "127.53"


def _have_unshare() -> bool:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    return r.returncode == 0


needs_unshare = pytest.mark.skipif(not _have_unshare(),
                                   reason="needs root and unshare -m to give tpush its own /etc/hosts")


def in_namespace(binds: dict[str, Path], argv: list) -> list[str]:
    """argv run in a private mount namespace with each bind (target -> our file) mounted."""
    mounts = " && ".join(f'mount --bind "{src}" "{target}"' for target, src in binds.items())
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", f'{mounts} && exec "$@"', "sh",
            *map(str, argv)]


def ok_cmd():
    return 'set -- $SSH_CONNECTION; echo "ok $3"'


class HeldDns:
    """A DNS server for `names` (name -> IPv4 address) that keeps every query for them
    unanswered until release(); other names get NXDOMAIN at once."""

    def __init__(self, names: dict[str, str]):
        self.names = names
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.address = self._bind_free_address()
        self.sock.settimeout(0.1)
        self.released = threading.Event()
        self.stopped = threading.Event()
        self.asked: list[str] = []
        self.held: list[tuple[bytes, tuple]] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _bind_free_address(self) -> str:
        start = os.getpid() % 60000
        for n in range(start, start + 512):
            address = f"{DNS_NET}.{1 + n // 250 % 240}.{1 + n % 250}"
            try:
                self.sock.bind((address, 53))
                return address
            except OSError as e:
                if e.errno != errno.EADDRINUSE:
                    raise
        raise RuntimeError(f"no free address in {DNS_NET}.0.0/16 for a DNS server on port 53")

    @staticmethod
    def _question(query: bytes) -> tuple[str, int, int]:
        labels, i = [], 12
        while query[i]:
            labels.append(query[i + 1:i + 1 + query[i]].decode("ascii", "replace"))
            i += 1 + query[i]
        qtype = struct.unpack(">H", query[i + 1:i + 3])[0]
        return ".".join(labels).lower(), qtype, i + 5

    def _answer(self, query: bytes) -> bytes:
        name, qtype, end = self._question(query)
        address = self.names.get(name)
        answers = b""
        if address and qtype == 1:  # A
            answers = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(address)
        flags = 0x8180 if address else 0x8183  # response, recursion; NXDOMAIN for others
        header = query[:2] + struct.pack(">HHHHH", flags, 1, 1 if answers else 0, 0, 0)
        return header + query[12:end] + answers

    def _serve(self):
        while not self.stopped.is_set():
            if self.released.is_set():
                for query, peer in self.held:
                    self.sock.sendto(self._answer(query), peer)
                self.held = []
            try:
                query, peer = self.sock.recvfrom(512)
            except socket.timeout:
                continue
            name = self._question(query)[0]
            self.asked.append(name)
            if name in self.names and not self.released.is_set():
                self.held.append((query, peer))
            else:
                self.sock.sendto(self._answer(query), peer)

    def release(self):
        self.released.set()

    def close(self):
        self.stopped.set()
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def held_dns(farm):
    dns = HeldDns({"slow.tpush.test": farm.addresses[8]})
    yield dns
    dns.close()


@pytest.fixture
def resolver_files(tmp_path, held_dns) -> dict[str, Path]:
    hosts = tmp_path / "etc-hosts"
    hosts.write_text("127.0.0.1 localhost\n")
    resolv = tmp_path / "resolv.conf"
    resolv.write_text(f"nameserver {held_dns.address}\noptions timeout:30 attempts:1\n")
    return {"/etc/hosts": hosts, "/etc/resolv.conf": resolv}


@needs_unshare
def test_workers_by_host_name(farm, tpush, tpush_bin, tmp_path):
    """Sixteen workers named in /etc/hosts: each is looked up and reached, and prints from
    its own address."""
    names = [f"w{i}.tpush.test" for i in range(16)]
    etc_hosts = tmp_path / "etc-hosts"
    etc_hosts.write_text("127.0.0.1 localhost\n" +
                         "".join(f"{farm.addresses[i]} {n}\n" for i, n in enumerate(names)))
    labels = [f"{n}:{farm.port}" for n in names]
    argv = in_namespace({"/etc/hosts": etc_hosts}, [tpush_bin, *host_args(labels), ok_cmd()])
    r = subprocess.run(argv, env=tpush.env(), capture_output=True, timeout=120)
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 0, f"exit {r.returncode}\nstdout:\n{out}\nstderr:\n{err}"
    lines = output_lines(out, labels)
    for i, label in enumerate(labels):
        assert lines[label] == [f"ok {farm.addresses[i]}"], f"{label}: {lines[label]}\n{out}\n{err}"


@needs_unshare
def test_slow_name_lookup_does_not_hold_up_others(farm, tpush_bin, tpush, held_dns, resolver_files):
    """While the DNS server sits on one worker's name, the eight other workers run and print;
    once it answers, that worker runs too and the run succeeds."""
    fast = farm.hosts[:8]
    slow = f"slow.tpush.test:{farm.port}"
    st = Streaming(in_namespace(resolver_files, [tpush_bin, *host_args(fast + [slow]), ok_cmd()]),
                   tpush.env())
    endings = tuple(f"ok {h.split(':')[0]}" for h in fast)
    st.wait_for(lambda ls: sum(l.rstrip().endswith(endings) for l in ls) == len(fast),
                40, "the other workers' output while the name lookup is held")
    assert "slow.tpush.test" in held_dns.asked, f"the DNS server was never asked: {held_dns.asked}"
    held_dns.release()
    r = st.finish(timeout=60)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, fast + [slow])
    assert lines[slow] == [f"ok {farm.addresses[8]}"], str(r)


@needs_unshare
def test_interrupt_during_name_lookup(farm, tpush_bin, tpush, held_dns, resolver_files):
    """Ctrl-C twice while the only worker's name is still being looked up: tpush exits 130
    at once and lists the worker as interrupted (the lookup is left to finish on its own)."""
    slow = f"slow.tpush.test:{farm.port}"
    st = Streaming(in_namespace(resolver_files, [tpush_bin, *host_args([slow]), "true"]), tpush.env())
    for _ in range(300):
        if "slow.tpush.test" in held_dns.asked or st.proc.poll() is not None:
            break
        time.sleep(0.1)
    assert "slow.tpush.test" in held_dns.asked, f"the DNS server was never asked\n{st.result()}"
    st.proc.send_signal(signal.SIGINT)
    # The first is seen when tpush says so, or ends the run by itself (a worker still
    # connecting is not started): only then the second.
    with st.cond:
        seen = st.cond.wait_for(lambda: st.proc.poll() is not None or any(
            b"interrupt sent" in l for _, l in st.lines["err"]), timeout=10)
    assert seen, f"the first SIGINT was not acted on\n{st.result()}"
    if st.proc.poll() is None:
        st.proc.send_signal(signal.SIGINT)
    r = st.finish(timeout=10)
    assert r.returncode == 130, str(r)
    s = Summary.parse(r.err)
    assert s.interrupted == 1 and list(s.reasons) == [slow], str(r)


def _free_ipv6_loopback_port() -> int | None:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
            return sock.getsockname()[1]
    except OSError:
        return None


def test_ipv6_worker(farm, tpush, tmp_path):
    """A worker at [::1]:PORT, given with -w and as a hosts-file line with -p: tpush connects
    over IPv6, records its host key and runs the command."""
    port = _free_ipv6_loopback_port()
    if port is None:
        pytest.skip("no IPv6 loopback address (::1) on this machine")
    sshd = farm_mod.Sshd(tmp_path / "sshd6", "[::1]", port, farm.authorized_keys, allow_from="::1")
    sshd.start("::1")
    try:
        label = f"[::1]:{port}"
        r = tpush("-w", label, 'set -- $SSH_CONNECTION; echo "from $1 to $3"')
        assert r.returncode == 0, str(r)
        assert output_lines(r.out, [label])[label] == ["from ::1 to ::1"], str(r)
        hosts = tmp_path / "hosts"
        hosts.write_text("::1\n")
        # the key recorded under [::1]:PORT above is found again: no unknown key allowed now
        r = tpush("--host-key-check", "yes", "-H", hosts, "-p", port, "echo again")
        assert r.returncode == 0, str(r)
        assert output_lines(r.out, ["::1"])["::1"] == ["again"], str(r)
    finally:
        sshd.stop()
