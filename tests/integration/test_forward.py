"""`tpush forward SPEC...`: local ports carried to a worker's side over its session, as
ssh -L does, until Ctrl-C: an HTTP server on the worker side (the farm's workers are this
machine) answers through them, many connections at once; a refused port is reported per
connection and the forward goes on; a local port in use is a usage error."""

import concurrent.futures
import http.server
import os
import random
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.request

import pytest

from conftest import host_args


BIG = bytes(range(256)) * (256 * 1024)  # 64 MiB


def free_port(count: int = 1) -> int:
    """The first of `count` consecutive local ports free on 127.0.0.1, below the kernel's
    ephemeral range: there, the other tests' outgoing connections take ports at any time."""
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    for _ in range(1000):
        base = random.randrange(10000, low - count)
        socks = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {count} consecutive free ports below {low}")


@pytest.fixture
def server():
    """An HTTP server on 127.0.0.1 that answers every GET with its path."""

    class Echo(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = BIG if self.path == "/big" else f"hello {self.path}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def get(port: int, path: str = "/") -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
        return r.read().decode()


def forwarding(st) -> list[str]:
    """tpush's "forwarding PORT -> WORKER HOST:PORT" lines so far."""
    with st.cond:
        return [l.decode().rstrip("\n") for _, l in st.lines["err"] if b"tpush: forwarding " in l]


def start(tpush, *args, forwards: int):
    """tpush forward, returned once it says it forwards `forwards` ports (it listens before that)."""
    st = tpush.stream(*args)
    deadline = time.monotonic() + 60
    with st.cond:
        while len(forwarding(st)) < forwards:
            if st.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"tpush forward did not start {forwards} forwards:\n{st.result()}")
            st.cond.wait(0.5)
    return st


def test_a_port_reaches_the_worker_side_with_many_connections_at_once(farm, tpush, server):
    local = free_port()
    st = start(tpush, *host_args(farm.hosts[:1]), "forward", f"{local}:127.0.0.1:{server}", forwards=1)
    try:
        assert forwarding(st) == [f"tpush: forwarding 127.0.0.1:{local} -> {farm.hosts[0]} 127.0.0.1:{server}"]
        assert get(local, "/one") == "hello /one"
        with concurrent.futures.ThreadPoolExecutor(50) as pool:
            got = list(pool.map(lambda i: get(local, f"/{i}"), range(50)))
        assert got == [f"hello /{i}" for i in range(50)]
        # each closed connection left the forward as it was
        assert get(local, "/after") == "hello /after"
        # a long stream arrives whole (libssh2 queues what it read ahead: none of it waits)
        with urllib.request.urlopen(f"http://127.0.0.1:{local}/big", timeout=60) as r:
            assert r.read() == BIG
    finally:
        st.proc.send_signal(signal.SIGINT)
        r = st.finish(timeout=30)
    assert r.returncode == 0, str(r)
    with pytest.raises(OSError):  # the port is closed with it
        socket.create_connection(("127.0.0.1", local), timeout=5).close()


def test_a_refused_port_is_reported_per_connection_and_the_forward_goes_on(farm, tpush, server):
    good, bad, closed = free_port(), free_port(), free_port()
    st = start(tpush, *host_args(farm.hosts[:1]), "forward", f"{bad}:localhost:{closed}",
               f"{good}:127.0.0.1:{server}", forwards=2)
    try:
        with pytest.raises(OSError):
            get(bad)
        st.wait_for_stderr(f"forward 127.0.0.1:{bad}: the worker could not connect to localhost:{closed}", 30)
        assert get(good, "/still") == "hello /still"
    finally:
        st.proc.send_signal(signal.SIGINT)
        r = st.finish(timeout=30)
    assert r.returncode == 0, str(r)


def test_each_worker_gets_the_next_local_port(farm, tpush, server):
    base = free_port(3)
    st = start(tpush, "--label", "index", *host_args(farm.hosts[:3]), "forward", "--each",
               f"{base}:127.0.0.1:{server}", forwards=3)
    try:
        assert sorted(forwarding(st)) == [f"tpush: forwarding 127.0.0.1:{base + i} -> w{i} 127.0.0.1:{server}"
                                 for i in range(3)]
        assert [get(base + i, f"/w{i}") for i in range(3)] == [f"hello /w{i}" for i in range(3)]
    finally:
        st.proc.send_signal(signal.SIGINT)
        r = st.finish(timeout=30)
    assert r.returncode == 0, str(r)


def test_a_local_port_in_use_is_a_usage_error(farm, tpush):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = tpush(*host_args(farm.hosts[:1]), "forward", f"{port}:localhost:80")
    assert r.returncode == 2, str(r)
    assert re.search(rf"forward {port}:localhost:80: local port {port} is in use on 127\.0\.0\.1 "
                     rf"\(pick another local port", r.err), str(r)


def test_a_local_port_below_1024_without_the_right_is_a_usage_error(farm, tpush):
    """As a user without CAP_NET_BIND_SERVICE: tpush runs in a network namespace of its own
    (as root; otherwise in a user namespace too, whose root it is), where ports below 1024
    are privileged and the capability is dropped, so listening on port 80 fails as it does
    for a normal user. (Root needs no user namespace, which a chroot, as make fresh-test's,
    would refuse.)"""
    own = ["--net"] if os.geteuid() == 0 else ["--user", "--map-root-user", "--net"]
    argv = ["unshare", *own, "sh", "-c",
            'echo 1024 > /proc/sys/net/ipv4/ip_unprivileged_port_start && exec setpriv --bounding-set=-net_bind_service '
            '--inh-caps=-net_bind_service "$@"', "sh", str(tpush.binary), *host_args(farm.hosts[:1])]
    r = subprocess.run([*argv, "forward", "80:localhost:8080"], env=tpush.env(), stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr == (
        "tpush: error: forward 80:localhost:8080: local port 80 is below 1024, which only root may listen on "
        "(pick a port of 1024 or more)\n"), (r.returncode, r.stderr)


@pytest.mark.parametrize("spec, says", [
    ("http", "'http' is not a local port"),
    ("8080:localhost:0", "'0' is not a port"),
    ("1:2:3:4:5", "not a forward"),
])
def test_a_spec_that_is_not_one_is_a_usage_error(farm, tpush, spec, says):
    r = tpush(*host_args(farm.hosts[:1]), "forward", spec)
    assert r.returncode == 2 and f"forward {spec}: {says}" in r.err, str(r)
