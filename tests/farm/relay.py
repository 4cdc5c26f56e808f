#!/usr/bin/python3 -S
"""A ProxyCommand for tests: connect to HOST:PORT and copy bytes both ways.

    ProxyCommand /path/to/relay.py [options] %h %p

stdin goes to the socket and the socket goes to stdout, until either side
closes: EOF on stdin half-closes the socket (shutdown SHUT_WR) and the relay
keeps copying until the server closes; EOF from the server ends the relay.
This is what `ssh -W` and `nc -N` do, and what OpenSSH and tpush expect of a
ProxyCommand.  Standard library only; started with -S (no site import) so 64
of them start quickly.

Options (each also settable by an environment variable, for tests that can
only change the environment of the program that runs the ProxyCommand):

    --log FILE           TPUSH_RELAY_LOG      append one JSON line per event
                                              ("start", "connected", "end", "fault")
                                              with pid, host, port, byte counts;
                                              one write() per line, so concurrent
                                              relays never interleave
    --fail-at-once MSG   TPUSH_RELAY_FAIL     print MSG to stderr, exit 1 at once
    --hang               TPUSH_RELAY_HANG=1   never connect; read and drop stdin
                                              until it closes (then exit 1)
    --die-after N        TPUSH_RELAY_DIE_AFTER  relay N bytes (both directions
                                              together), then exit 1 abruptly,
                                              without flushing or half-closing
    --connect-delay S    TPUSH_RELAY_DELAY    wait S seconds before connecting
    --latency S          TPUSH_RELAY_LATENCY  hold every chunk S seconds in each
                                              direction (pipelined: a far server,
                                              2*S of round trip, no bandwidth cap)

SIGHUP (how OpenSSH ends its ProxyCommand), SIGTERM and SIGINT log an "end" event
with the byte counts and the signal's name, then exit 128+signal.  SIGUSR1 makes
the relay deaf: from then on what the server sends is read and dropped (a "fault"
event "deaf" is logged), while what the client sends still goes through, as when
a network loses the packets of one direction only.

Connection errors print `relay: connect to HOST:PORT failed: REASON` and exit 1.

tests/farm/gcloud imports run() for `start-iap-tunnel --listen-on-stdin`.
"""

import errno
import json
import os
import select
import signal
import socket
import sys
import time

CHUNK = 65536


class Log:
    """Optional JSON-lines event log; every line is written with a single write()."""

    def __init__(self, path, host, port):
        self.path, self.host, self.port = path, host, port

    def event(self, kind, **fields):
        if not self.path:
            return
        record = {"event": kind, "pid": os.getpid(), "host": self.host, "port": self.port,
                  "time": round(time.time(), 6), **fields}
        line = (json.dumps(record, sort_keys=True) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def hang(log):
    """Never connect: read and discard stdin until EOF (the client gave up)."""
    log.event("fault", fault="hang")
    while True:
        try:
            if not os.read(0, CHUNK):
                return 1
        except InterruptedError:
            continue
        except OSError:
            return 1


class Counts:
    """Bytes relayed so far (read by the signal handler, too)."""
    up = 0    # stdin -> socket
    down = 0  # socket -> stdout
    deaf = False  # SIGUSR1: the server's bytes are dropped


def _ready(readers, timeout=None):
    """select() on `readers`, again when a signal cut it short."""
    while True:
        try:
            return select.select(readers, [], [], timeout)[0]
        except InterruptedError:
            continue


def _recv(sock):
    """What the server sent; b"" once it closed or reset the connection."""
    try:
        return sock.recv(CHUNK)
    except ConnectionResetError:
        return b""


def pump(sock, counts, die_after=None):
    """Copy stdin -> sock and sock -> stdout until the server closes; True if it stopped
    because die_after bytes were relayed."""
    stdin_open = True
    sock.setblocking(True)
    while True:
        ready = _ready([sock] + ([0] if stdin_open else []))
        if 0 in ready:
            data = os.read(0, CHUNK)
            if not data:
                stdin_open = False
                try:
                    sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
            else:
                died = die_after is not None and counts.up + counts.down + len(data) >= die_after
                if died:
                    data = data[:max(0, die_after - counts.up - counts.down)]
                sock.sendall(data)
                counts.up += len(data)
                if died:
                    return True
        if sock in ready:
            data = _recv(sock)
            if not data:
                return False
            if counts.deaf:
                continue
            died = die_after is not None and counts.up + counts.down + len(data) >= die_after
            if died:
                data = data[:max(0, die_after - counts.up - counts.down)]
            _write_all(1, data)
            counts.down += len(data)
            if died:
                return True


def pump_late(sock, counts, latency):
    """Like pump(), every chunk held `latency` seconds before it is passed on."""
    import collections
    stdin_open, server_open = True, True
    up, down = collections.deque(), collections.deque()  # (due, bytes)
    sock.setblocking(True)
    while server_open or down:
        now = time.monotonic()
        while up and up[0][0] <= now:
            data = up.popleft()[1]
            if data is None:
                try:
                    sock.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
            else:
                sock.sendall(data)
                counts.up += len(data)
        while down and down[0][0] <= now:
            data = down.popleft()[1]
            _write_all(1, data)
            counts.down += len(data)
        due = [q[0][0] for q in (up, down) if q]
        timeout = max(0.0, min(due) - now) if due else None
        ready = _ready(([sock] if server_open else []) + ([0] if stdin_open else []), timeout)
        if 0 in ready:
            data = os.read(0, CHUNK)
            if not data:
                stdin_open = False
            up.append((time.monotonic() + latency, data or None))
        if sock in ready:
            data = _recv(sock)
            if not data:
                server_open = False
            else:
                down.append((time.monotonic() + latency, data))
    return False


def run(host, port, log_path=None, fail=None, hang_mode=False, die_after=None, connect_delay=0.0,
        name="relay", connect_error=None, latency=0.0):
    """Relay stdin/stdout to host:port; returns the exit status.

    `connect_error(reason)` is called (and its return value returned) when the
    connection fails; by default a `NAME: connect to HOST:PORT failed` line."""
    log = Log(log_path, host, port)
    log.event("start")
    if fail is not None:
        log.event("fault", fault="fail")
        sys.stderr.write(fail if fail.endswith("\n") else fail + "\n")
        sys.stderr.flush()
        return 1
    if hang_mode:
        return hang(log)
    if connect_delay:
        time.sleep(connect_delay)
    try:
        sock = socket.create_connection((host, int(port)), timeout=30)
    except OSError as e:
        reason = e.strerror or str(e)
        log.event("end", error=reason, up=0, down=0)
        if connect_error is not None:
            return connect_error(reason)
        sys.stderr.write(f"{name}: connect to {host}:{port} failed: {reason}\n")
        return 1
    sock.settimeout(None)
    log.event("connected")
    counts = Counts()

    def on_signal(signum, _frame):
        # OpenSSH ends its ProxyCommand with SIGHUP; log what was relayed, then go.
        log.event("end", up=counts.up, down=counts.down, signal=signal.Signals(signum).name)
        os._exit(128 + signum)
    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)

    def on_deaf(_signum, _frame):
        counts.deaf = True
        log.event("fault", fault="deaf", up=counts.up, down=counts.down)
    signal.signal(signal.SIGUSR1, on_deaf)
    try:
        died = pump_late(sock, counts, latency) if latency else pump(sock, counts, die_after)
    except OSError as e:
        if e.errno not in (errno.EPIPE, errno.ECONNRESET):
            raise
        log.event("end", up=counts.up, down=counts.down, error=str(e))
        return 1
    if died:
        log.event("fault", fault="die_after", up=counts.up, down=counts.down)
        sys.stderr.write(f"{name}: dying after {counts.up + counts.down} bytes (fault injection)\n")
        sys.stderr.flush()
        os._exit(1)  # abrupt: no shutdown, the peer sees the connection drop
    log.event("end", up=counts.up, down=counts.down)
    sock.close()
    return 0


def _options(argv):
    """Parse options by hand (argparse costs startup time); env vars give defaults."""
    env = os.environ
    opts = {"log_path": env.get("TPUSH_RELAY_LOG") or None,
            "fail": env.get("TPUSH_RELAY_FAIL") or None,
            "hang_mode": env.get("TPUSH_RELAY_HANG", "") not in ("", "0"),
            "die_after": int(env["TPUSH_RELAY_DIE_AFTER"]) if env.get("TPUSH_RELAY_DIE_AFTER") else None,
            "connect_delay": float(env.get("TPUSH_RELAY_DELAY") or 0),
            "latency": float(env.get("TPUSH_RELAY_LATENCY") or 0)}
    positional = []
    i = 0
    takes = {"--log": ("log_path", str), "--fail-at-once": ("fail", str),
             "--die-after": ("die_after", int), "--connect-delay": ("connect_delay", float),
             "--latency": ("latency", float)}
    while i < len(argv):
        a = argv[i]
        key, _, inline = a.partition("=")
        if key in takes:
            if not inline:
                i += 1
                if i >= len(argv):
                    raise ValueError(f"{a} needs a value")
                inline = argv[i]
            name, conv = takes[key]
            opts[name] = conv(inline)
        elif a == "--hang":
            opts["hang_mode"] = True
        elif a.startswith("--"):
            raise ValueError(f"unknown option {a}")
        else:
            positional.append(a)
        i += 1
    if len(positional) != 2:
        raise ValueError("usage: relay.py [--log FILE] [--fail-at-once MSG] [--hang] "
                         "[--die-after N] [--connect-delay S] [--latency S] HOST PORT")
    return positional[0], positional[1], opts


def main(argv):
    try:
        host, port, opts = _options(argv)
    except ValueError as e:
        sys.stderr.write(f"relay: {e}\n")
        return 2
    return run(host, port, **opts)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
