#!/usr/bin/python3
"""A delay line at the IP layer, for benches that need round trips TCP itself sees.

bench/delayrelay.py delays a TCP stream's bytes, but its own kernel answers the client's
connect at once, so a handshake's first round trip is missing and the client cannot measure
the round trip from it. This one moves IP packets between two TUN devices, holding each
DELAY seconds: put one device in a network namespace of the bench's own (bench/tunfarm.sh)
and every packet between the two sides, SYNs included, arrives 2 x DELAY after its answer's
question. Prints "ready" on stdout once both devices exist. Traffic stays between the two
devices; root only (TUNSETIFF).
"""

import argparse
import fcntl
import heapq
import os
import select
import struct
import time

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000


def open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, required=True, help="one-way delay, seconds")
    ap.add_argument("--near", default="tpdelay0", help="the device left in this namespace")
    ap.add_argument("--far", default="tpdelay1", help="the device to move into the far namespace")
    a = ap.parse_args()
    near, far = open_tun(a.near), open_tun(a.far)
    other = {near: far, far: near}
    print("ready", flush=True)
    held: list[tuple[float, int, int, bytes]] = []  # (due, order, to, packet)
    order = 0
    while True:
        timeout = max(0.0, held[0][0] - time.monotonic()) if held else None
        readable, _, _ = select.select([near, far], [], [], timeout)
        now = time.monotonic()
        for fd in readable:
            while True:
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                order += 1
                heapq.heappush(held, (now + a.delay, order, other[fd], packet))
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, _, to, packet = heapq.heappop(held)
            try:
                os.write(to, packet)
            except OSError:
                pass  # a full device queue drops the packet, as a link would


if __name__ == "__main__":
    main()
