#!/usr/bin/python3
"""A userspace delay line for the latency scenario (this kernel has no netem).

Listens on 0.0.0.0:LISTEN_PORT; a connection accepted on local address A is relayed to
A:TARGET_PORT (the farm's sshd), so every worker address keeps its identity.  Every chunk
read in either direction is held DELAY seconds (from the moment it was read) before it is
written on: 2 x DELAY of round-trip time, pipelined (bandwidth is not limited).
Prints "ready" on stdout once listening.  Traffic stays on loopback.
"""

import argparse
import asyncio
import socket
import sys
import time


async def pump(reader, writer, delay):
    q: asyncio.Queue = asyncio.Queue()

    async def read_side():
        try:
            while True:
                data = await reader.read(65536)
                q.put_nowait((time.monotonic() + delay, data))
                if not data:
                    return
        except (ConnectionError, OSError):
            q.put_nowait((time.monotonic() + delay, b""))

    async def write_side():
        try:
            while True:
                due, data = await q.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass

    await asyncio.gather(read_side(), write_side())


async def handle(creader, cwriter, target_port, delay):
    addr = cwriter.get_extra_info("sockname")[0]
    try:
        sreader, swriter = await asyncio.open_connection(addr, target_port)
    except OSError:
        cwriter.close()
        return
    for w in (cwriter, swriter):
        s = w.get_extra_info("socket")
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        await asyncio.gather(pump(creader, swriter, delay), pump(sreader, cwriter, delay))
    finally:
        for w in (cwriter, swriter):
            try:
                w.close()
            except Exception:
                pass


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen-port", type=int, required=True)
    ap.add_argument("--target-port", type=int, required=True)
    ap.add_argument("--delay", type=float, default=0.025)
    a = ap.parse_args()
    server = await asyncio.start_server(lambda r, w: handle(r, w, a.target_port, a.delay),
                                        "0.0.0.0", a.listen_port, backlog=4096)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
