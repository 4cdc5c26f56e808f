#!/usr/bin/python3
"""One stream's throughput through a port forward: tpush forward beside ssh -L (issue 38).

    /usr/bin/python3 bench/forward.py [--mib 1024] [--runs 3] [--out bench/results-forward.json]

One bench farm worker; on its side (this machine) a sink that counts what arrives. Each run
starts the forward (tpush -w HOST forward L:127.0.0.1:SINK, or ssh -N -L L:127.0.0.1:SINK
HOST with an ssh_config like the anchors'), connects to L, writes --mib MiB and times the
first byte sent to the last byte counted by the sink. Each negotiates the cipher it prefers
(ssh: chacha20-poly1305; tpush: aes128-gcm, which its libssh2 hands to OpenSSL a packet at
a time); a third row runs ssh with tpush's cipher (-c aes128-gcm@openssh.com), like for
like. The client's CPU for the run is counted.
Target: tpush at least 0.8x ssh -L's MiB/s.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--mib", type=int, default=1024)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--tpush", default=os.environ.get("TPUSH_BIN", str(bench.ROOT / "build" / "tpush")))
ap.add_argument("--dir", default="/tmp/tpush-bench-forward")
ap.add_argument("--out", default=str(Path(__file__).with_name("results-forward.json")))
a = ap.parse_args()

CHUNK = b"\0" * (1 << 20)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sink:
    """Accepts one connection at a time and counts its bytes; done() when `want` came."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.got, self.want, self.finished = 0, 0, threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            conn, _ = self.sock.accept()
            with conn:
                while True:
                    data = conn.recv(1 << 20)
                    if not data:
                        break
                    self.got += len(data)
                    if self.got >= self.want:
                        self.finished.set()


def cpu_of(pids) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += bench.sshd_cpu(pid)  # utime+stime+children's, for any process
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def wait_listening(port: int, proc, deadline: float) -> None:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the forward exited ({proc.returncode}): {proc.stderr.read()!r}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the forward never listened")


work = Path(a.dir)
work.mkdir(parents=True, exist_ok=True)
f = bench.start_farm(work / "farm", 1)
sink = Sink()
results = []
try:
    cfg = bench.ssh_config(f, f.port, "ssh_config")
    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID")}
    env.update(HOME=str(f.home), TPUSH_PERSIST="0")
    for run in range(a.runs):
        for tool in ("ssh", "ssh-gcm", "tpush"):
            local = free_port()
            spec = f"{local}:127.0.0.1:{sink.port}"
            gcm = ["-c", "aes128-gcm@openssh.com"] if tool == "ssh-gcm" else []
            argv = (["ssh", "-F", str(cfg), *gcm, "-N", "-L", spec, f.addresses[0]] if tool.startswith("ssh")
                    else [a.tpush, "-w", f.hosts[0], "forward", spec])
            proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
            try:
                wait_listening(local, proc, time.monotonic() + 30)
                sink.got, sink.want = 0, 0
                sink.finished.clear()
                time.sleep(0.2)  # the probe connection's close reaches the sink first
                sink.got, sink.want = 0, a.mib << 20
                client_before = cpu_of([proc.pid])
                t0 = time.monotonic()
                with socket.create_connection(("127.0.0.1", local)) as c:
                    for _ in range(a.mib):
                        c.sendall(CHUNK)
                    if not sink.finished.wait(300):
                        raise RuntimeError(f"{tool}: the sink got {sink.got} of {sink.want} bytes")
                wall = time.monotonic() - t0
                row = {"tool": tool, "run": run, "mib": a.mib, "wall": wall, "mib_s": a.mib / wall,
                       "client_cpu": cpu_of([proc.pid]) - client_before}
                results.append(row)
                print(f"{tool:7s} run {run}: {row['mib_s']:7.1f} MiB/s  client {row['client_cpu']:.2f} s CPU",
                      flush=True)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    med = {t: statistics.median(r["mib_s"] for r in results if r["tool"] == t) for t in ("ssh", "ssh-gcm", "tpush")}
    print(f"median: ssh -L {med['ssh']:.0f} MiB/s (with aes128-gcm {med['ssh-gcm']:.0f}), tpush forward "
          f"{med['tpush']:.0f} MiB/s ({med['tpush'] / med['ssh']:.2f}x; target 0.8x)")
    Path(a.out).write_text(json.dumps({"runs": results, "median_mib_s": med}, indent=1) + "\n")
finally:
    f.stop()
