#!/usr/bin/python3
"""Profile one tpush run against a bench farm (kex pinned, like bench.py) with perf.

    /usr/bin/python3 bench/profile.py [--n 64] [--tpush build/tpush] [--dir /tmp/tpush-bench-prof] [-- CMD]

Records `perf record --call-graph dwarf` of `tpush -H hosts -p PORT -q CMD` (default `true`)
into DIR/perf.data and prints the inclusive (children) profile's top entries.
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=64)
ap.add_argument("--tpush", default=os.environ.get("TPUSH_BIN", str(bench.ROOT / "build" / "tpush")))
ap.add_argument("--dir", default="/tmp/tpush-bench-prof")
ap.add_argument("cmd", nargs="*", default=["true"])
a = ap.parse_args()
f = bench.start_farm(Path(a.dir), a.n)
try:
    env = dict(os.environ, HOME=str(f.home))
    env.pop("SSH_AUTH_SOCK", None)
    data = str(Path(a.dir) / "perf.data")
    subprocess.run(["perf", "record", "-q", "-F", "4000", "--call-graph", "dwarf,16384", "-o", data,
                    a.tpush, "-H", str(f.dir / "hosts-plain"), "-p", str(f.port), "-q", *a.cmd],
                   env=env, check=False)
finally:
    f.stop()
rep = subprocess.run(["perf", "report", "-i", data, "--children", "--sort", "sym", "--stdio", "-g", "none"],
                     capture_output=True, text=True).stdout
print("\n".join([ln for ln in rep.splitlines() if "%" in ln][:60]))
