#!/usr/bin/python3
"""What the live view (--live) costs the client: N workers printing steadily, tpush with and
without --live, on a bench farm (bench.py's: kex pinned, quiet sshd).

    /usr/bin/python3 bench/live.py [--n 1024] [--seconds 10] [--interval-ms 10] [--runs 1]
                                   [--rows 50] [--cols 200] [--term xterm-256color]

Every worker runs a bash loop that prints `tick K from W` every --interval-ms for --seconds
(bash's `read -t` on a pipe that never speaks is the pause: no process per line). Modes:

    plain   tpush -H hosts -p PORT -f N CMD, stdout and stderr to /dev/null
    live    tpush --live ... in a pty of --rows x --cols (TERM=--term) whose bytes the bench
            reads and drops; when the header says the run ended, the bench types q

Per run: wall (spawn to the run's end), tpush's user and system CPU (wait4's rusage: tpush and
anything it reaped), whether the summary says every worker is ok, and, for live, the bytes
written to the terminal and their rate over the run. All workers share this machine's 2 CPUs with sshd, so
the loop's rate is what the machine sustains, the same for both modes; the figure that
matters is the difference in tpush's CPU.
"""
from __future__ import annotations

import argparse
import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench as benchmod  # noqa: E402  (its farm: kex pinned, LogLevel ERROR)

SUMMARY = re.compile(rb"tpush: (\d+) workers?: (\d+) ok, (\d+) failed")


def worker_command(seconds: float, interval_ms: int) -> str:
    count = int(seconds * 1000 / interval_ms)
    pause = f"{interval_ms / 1000:.3f}"
    # The sleep holds the pipe's write end (and nothing of the session's), killed at the end.
    return (f"exec 9< <(exec sleep {int(seconds) + 60} 2>/dev/null); p=$!; "
            f"for ((i = 0; i < {count}; i++)); do echo \"tick $i from $TPUSH_WORKER\"; read -t {pause} -u 9; done; "
            f"kill $p")


def rusage_cpu(pid: int) -> tuple[int, float, float]:
    _, status, ru = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_utime, ru.ru_stime


def run_plain(argv: list[str], env: dict[str, str]) -> dict:
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    err = proc.stderr.read()
    code, user, system = rusage_cpu(proc.pid)
    proc.returncode = code
    wall = time.monotonic() - t0
    return {"mode": "plain", "exit": code, "wall": wall, "user": user, "sys": system, "summary": err}


def run_live(argv: list[str], env: dict[str, str], rows: int, cols: int) -> dict:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def controlling_tty():
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    t0 = time.monotonic()
    proc = subprocess.Popen([argv[0], "--live", *argv[1:]], env=env, stdin=slave, stdout=slave,
                            stderr=slave, start_new_session=True, preexec_fn=controlling_tty)
    os.close(slave)
    total, ended_at, tail, seen = 0, None, b"", bytearray()
    while True:
        r, _, _ = select.select([master], [], [], 1.0)
        if not r:
            continue
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: the pty's last holder is gone
            break
        if not data:
            break
        if ended_at is None:
            total += len(data)
            if b"ended" in tail + data:  # the header's ", ended": the run is over
                ended_at = time.monotonic()
                os.write(master, b"q")
        else:
            seen += data  # after q: the summary
        tail = data[-16:]
    code, user, system = rusage_cpu(proc.pid)
    os.close(master)
    wall = (ended_at or time.monotonic()) - t0
    return {"mode": "live", "exit": code, "wall": wall, "user": user, "sys": system, "summary": bytes(seen),
            "tty_bytes": total, "tty_bytes_per_s": total / wall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--interval-ms", type=int, default=10)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--rows", type=int, default=50)
    ap.add_argument("--cols", type=int, default=200)
    ap.add_argument("--term", default="xterm-256color")
    ap.add_argument("--workdir", default="/tmp/tpush-bench-live")
    a = ap.parse_args()
    tpush = os.environ.get("TPUSH_BIN", str(HERE.parent / "build" / "tpush"))
    farm = benchmod.start_farm(Path(a.workdir) / f"farm{a.n}", a.n)
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "TPUSH_CONFIG")}
        env.update(HOME=str(farm.home), TPUSH_PERSIST="0", LC_ALL="C.UTF-8", TERM=a.term)
        argv = [tpush, "-H", str(farm.dir / "hosts-plain"), "-p", str(farm.port), "-f", str(a.n),
                "--connect-timeout", "60", worker_command(a.seconds, a.interval_ms)]
        lines = a.n * int(a.seconds * 1000 / a.interval_ms)
        print(f"N={a.n}: {lines} lines in all, one per {a.interval_ms} ms per worker for {a.seconds:g} s; "
              f"terminal {a.rows}x{a.cols} {a.term}", flush=True)
        for run in range(a.runs):
            for mode in ("plain", "live"):
                benchmod.wait_sessions_gone(farm)
                res = run_plain(argv, env) if mode == "plain" else run_live(argv, env, a.rows, a.cols)
                m = SUMMARY.search(res["summary"])
                ok = m is not None and int(m.group(2)) == a.n
                cpu = res["user"] + res["sys"]
                extra = (f", terminal {res['tty_bytes'] / 1e6:.2f} MB = {res['tty_bytes_per_s'] / 1e3:.1f} kB/s"
                         if mode == "live" else "")
                print(f"run {run + 1} {mode:5}: exit {res['exit']}, {'all ok' if ok else 'NOT all ok'}, "
                      f"wall {res['wall']:.1f} s, CPU {cpu:.2f} s (user {res['user']:.2f}, sys {res['sys']:.2f}), "
                      f"{cpu / res['wall'] * 100:.0f}% of a CPU{extra}", flush=True)
    finally:
        farm.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
