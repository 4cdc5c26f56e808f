"""A client behind a slow link: a network namespace joined to the machine by a
veth pair whose two ends are rate limited with tbf, and worker addresses on the
machine's loopback device that the namespace reaches through the veth. What
leaves the client is counted on the machine's end of the veth. Needs root,
ip and tc (iproute2). This kernel has no netem: the link adds no delay.

Used by tests/integration/test_relay_link.py and bench/relay.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


def available() -> bool:
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("tc"):
        return False
    probe = f"tpl-probe-{os.getpid()}"
    ok = subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode == 0
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return ok


def _run(*argv: str) -> None:
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()}")


class SlowLink:
    """`net` is the second octet of 10.NET.0.0/16, the workers' addresses
    (10.NET.K/250.K%250+1); the veth pair takes 10.(NET+1).0.0/30."""

    def __init__(self, name: str, workers: int, rate: str, net: int = 198):
        self.ns, self.net = name, net
        self.host_side, self.client_side = f"{name[:10]}-h", f"{name[:10]}-c"
        self.host_addr, self.client_addr = f"10.{net + 1}.0.1", f"10.{net + 1}.0.2"
        self.addresses = [self.address(k) for k in range(workers)]
        self._added: list[str] = []
        try:
            self._build(rate)
        except BaseException:
            self.close()
            raise

    def address(self, k: int) -> str:
        return f"10.{self.net}.{k // 250}.{k % 250 + 1}"

    def _build(self, rate: str) -> None:
        _run("ip", "netns", "add", self.ns)
        _run("ip", "link", "add", self.host_side, "type", "veth", "peer", "name", self.client_side, "netns", self.ns)
        _run("ip", "addr", "add", f"{self.host_addr}/30", "dev", self.host_side)
        _run("ip", "link", "set", self.host_side, "up")
        _run("ip", "-n", self.ns, "addr", "add", f"{self.client_addr}/30", "dev", self.client_side)
        _run("ip", "-n", self.ns, "link", "set", self.client_side, "up")
        _run("ip", "-n", self.ns, "link", "set", "lo", "up")
        _run("ip", "-n", self.ns, "route", "add", f"10.{self.net}.0.0/16", "via", self.host_addr)
        # burst above the largest (GSO) packet the veth hands the qdisc
        tbf = ["root", "tbf", "rate", rate, "burst", "256kb", "latency", "100ms"]
        _run("tc", "qdisc", "add", "dev", self.host_side, *tbf)
        _run("ip", "netns", "exec", self.ns, "tc", "qdisc", "add", "dev", self.client_side, *tbf)
        for a in self.addresses:
            _run("ip", "addr", "add", f"{a}/32", "dev", "lo")
            self._added.append(a)

    def sent(self) -> int:
        """Bytes that have left the client (received by the machine's end of the veth)."""
        return int(Path(f"/sys/class/net/{self.host_side}/statistics/rx_bytes").read_text())

    def cut(self) -> None:
        """The link goes silent both ways, as a cut network does: no FIN, no RST, nothing
        (the client's end goes down; packets to it are dropped, its own go nowhere)."""
        _run("ip", "-n", self.ns, "link", "set", self.client_side, "down")

    def mend(self) -> None:
        """The link back, with the route that went down with it."""
        _run("ip", "-n", self.ns, "link", "set", self.client_side, "up")
        _run("ip", "-n", self.ns, "route", "replace", f"10.{self.net}.0.0/16", "via", self.host_addr)

    def argv(self, argv: list[str]) -> list[str]:
        """`argv` run as the client, inside the namespace."""
        return ["ip", "netns", "exec", self.ns, *map(str, argv)]

    def close(self) -> None:
        for a in self._added:
            subprocess.run(["ip", "addr", "del", f"{a}/32", "dev", "lo"], capture_output=True)
        self._added = []
        subprocess.run(["ip", "link", "del", self.host_side], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)
