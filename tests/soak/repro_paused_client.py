#!/usr/bin/python3
"""Reproduction: tpush declares every worker lost after tpush ITSELF was paused.

Found by the soak (tests/soak/README.md, "Findings"). Four healthy workers stream a line
every 100 ms; tpush runs with --alive-interval 2 (lost after 3 x 2 s of silence). The
soak then stops tpush itself (SIGSTOP, as Ctrl-Z in a shell does, or as a starved or
suspended machine does) for --pause seconds and continues it (SIGCONT, as `fg` does).
The workers never stopped talking: their lines wait in tpush's socket buffers. A
correct tpush reads them and every worker ends ok. Today the first tick after the pause
ends every worker with `connection lost (no response for 8s)` and exit 255.

    tests/soak/repro_paused_client.py [--tpush build/tpush] [--pause 8] [--alive 2]
    tests/soak/repro_paused_client.py --during connect     # the connect deadline instead:
        tpush --connect-timeout 3, stopped 0.2 s after it started, for 6 s: the servers'
        handshake replies wait in its sockets; every worker ends `connect timed out`

Exit 0: every worker ok (fixed); 1: some worker was not ok (reproduced); 2: setup problem.
Runs as any user (no nft, no root).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "farm"))
import farm as farm_mod  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpush", default=os.environ.get("TPUSH_BIN", str(REPO / "build" / "tpush")))
    ap.add_argument("--pause", type=float, default=None,
                    help="seconds tpush is stopped (default 8; 6 with --during connect)")
    ap.add_argument("--alive", type=int, default=2, help="tpush --alive-interval")
    ap.add_argument("--during", choices=("stream", "connect"), default="stream",
                    help="stop tpush while the workers stream (default) or while it connects")
    a = ap.parse_args()
    if not farm_mod.sshd_available() or not os.access(a.tpush, os.X_OK):
        print("repro: needs /usr/sbin/sshd and a built tpush", file=sys.stderr)
        return 2
    d = tempfile.mkdtemp(prefix="tpush-repro-")
    try:
        with farm_mod.Farm(d, 4) as fm:
            env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
            env.update(HOME=str(fm.home), LC_ALL="C.UTF-8")
            cmd = "i=0; while [ $i -lt 150 ]; do echo line $i; i=$((i+1)); sleep 0.1; done"
            argv = [a.tpush, "-n", "--alive-interval", str(a.alive), "-w", ",".join(fm.hosts), cmd]
            if a.during == "connect":
                argv[1:1] = ["--connect-timeout", "3"]
            if a.pause is None:
                a.pause = 8 if a.during == "stream" else 6
            print("repro: " + " ".join(argv[:-1]) + f" '{cmd}'")
            p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
            time.sleep(3 if a.during == "stream" else 0.2)
            print(f"repro: kill -STOP {p.pid}; sleep {a.pause}; kill -CONT {p.pid}")
            os.kill(p.pid, signal.SIGSTOP)
            time.sleep(a.pause)
            os.kill(p.pid, signal.SIGCONT)
            try:
                out, err = p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, err = p.communicate()
            fm.kill_sessions()
    finally:
        shutil.rmtree(d, ignore_errors=True)
    text = err.decode(errors="replace")
    lines = out.count(b"\n")
    print(f"repro: exit {p.returncode}, {lines} lines on stdout\n{text}", end="")
    if p.returncode == 0:
        print("repro: every worker ok: NOT reproduced (fixed)")
        return 0
    print("repro: REPRODUCED: healthy workers failed because tpush itself was paused")
    return 1


if __name__ == "__main__":
    sys.exit(main())
