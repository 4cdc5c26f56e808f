"""tpush behind a slow link (tests/farm/slow_link.py): the client in a network
namespace of its own whose veth is rate limited, the workers islands with
filesystems of their own that reach each other at full speed. The bytes that
leave the client are counted on the link, as the issue's bench counts them."""

from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path

import pytest

from conftest import Tpush, farm_mod
from islands import Islands, have_unshare

# Relayed copies run one after another, in one test process (pytest-xdist's loadgroup):
# each is measured on the link alone.
pytestmark = pytest.mark.xdist_group("relay")
import slow_link

WORKERS = 16
MIB = 1 << 20


@pytest.fixture(scope="module")
def link():
    if not have_unshare() or not slow_link.available():
        pytest.skip("needs root, unshare -m, ip netns and tc for a rate-limited client namespace")
    ln = slow_link.SlowLink(f"tpt{os.getpid()}", WORKERS, "200mbit", net=196)
    try:
        yield ln
    finally:
        ln.close()


@pytest.fixture(scope="module")
def islands(farm, link):
    isl = Islands(farm, WORKERS, address_of=link.address, common=dict(allow_from="*"))
    try:
        yield isl
    finally:
        isl.stop()


@pytest.fixture
def tp(tpush_bin, home, islands, link, tmp_path):
    """tpush run as the client, inside the namespace."""
    with open(home / ".ssh" / "known_hosts", "a") as f:
        f.write(islands.known_hosts())
    wrapper = tmp_path / "tpush-in-netns"
    wrapper.write_text(f'#!/bin/sh\nexec {" ".join(link.argv([tpush_bin]))} "$@"\n')
    wrapper.chmod(0o755)
    return Tpush(wrapper, home)


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_a_relayed_copy_leaves_the_client_once(tp, farm, islands, link, tmp_path):
    src = tmp_path / "f"
    src.write_bytes(os.urandom(8 * MIB))
    env = tp.env()
    hosts = ["-p", str(islands.port), "-w", ",".join(i.address for i in islands.islands)]

    before = link.sent()
    r = tp(*hosts, "cp", "--relay", src, f"{islands.data}/once/f", env=env, timeout=120)
    relayed = link.sent() - before
    assert r.returncode == 0, r
    assert "tpush sent the bytes 1 time; 15 of 16 workers got them from another worker" in r.err, r.err
    for i in islands.islands:
        assert sha(i.path("once/f")) == sha(src), i.address
    # One copy, plus 16 handshakes, the relay's setup and SSH's framing.
    assert relayed <= 1.1 * 8 * MIB, relayed

    before = link.sent()
    r = tp(*hosts, "cp", "--no-relay", src, f"{islands.data}/each/f", env=env, timeout=120)
    direct = link.sent() - before
    assert r.returncode == 0, r
    assert direct >= WORKERS * 8 * MIB, direct
    for i in islands.islands:
        assert sha(i.path("each/f")) == sha(src), i.address


def test_a_command_that_stops_reading_stdin_ends_with_its_status(tp, islands, tmp_path):
    # Over a slow link a stdin write is often left half sent: tpush must finish
    # it before it closes the channel, or every later packet of the session
    # waits behind it (tpush spun, and reported the worker lost).
    data = os.urandom(24 * MIB)
    w = islands.islands[0].address
    r = tp("-p", str(islands.port), "-w", f"{w},{islands.islands[1].address}",
           "head -c 1 > /dev/null; exit 7", input=data, timeout=120)
    assert r.returncode != 0, r
    assert f"{w}: exit 7" in r.err, r.err
    assert "lost" not in r.err, r.err


def test_a_link_cut_mid_copy_leaves_nothing_on_the_workers_within_a_minute(tp, farm, islands, link, tmp_path):
    """The client's network goes silent mid-copy (no FIN reaches the workers, whose sshds
    wait on): each worker's control script hears no "-" from tpush, ends by itself, stops
    the feeds and hops of the copy and removes everything, within 60 s of the cut. (Last in
    this file: the link is mended after it.)"""
    src = tmp_path / "f"
    with open(src, "wb") as f:
        for _ in range(160):
            f.write(os.urandom(MIB))
    env = tp.env()
    hosts = ["-p", str(islands.port), "-w", ",".join(i.address for i in islands.islands)]
    s = tp.stream(*hosts, "cp", "--relay", src, f"{islands.data}/cut/f", env=env)

    def receiving() -> bool:
        for i in islands.islands:
            d = i.path("cut")
            if d.is_dir() and any(p.name.startswith(".f.tpush-") and p.stat().st_size > 0 for p in d.iterdir()):
                return True
        return False

    def left() -> list[str]:
        found = [f"{i.address}: process {p}: {farm_mod.cmdline(p)[:120]}" for i in islands.islands
                 for p in farm_mod.marked_processes(i.marker)]
        found += [str(p) for i in islands.islands for p in i.tmp.glob("tpush-relay*")]
        found += [f"{i.address}: {p.name}" for i in islands.islands if i.path("cut").is_dir()
                  for p in i.path("cut").iterdir() if p.name.startswith(".")]
        return found

    try:
        deadline = time.monotonic() + 60
        while not receiving():
            assert time.monotonic() < deadline and s.proc.poll() is None, "the copy never started"
            time.sleep(0.01)
        link.cut()
        cut_at = time.monotonic()
        while (still := left()) and time.monotonic() < cut_at + 60:
            time.sleep(0.2)
        assert still == [], f"{time.monotonic() - cut_at:.0f}s after the cut"
    finally:
        try:
            os.killpg(s.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        s.finish(30)
        link.mend()
