#!/usr/bin/python3
"""Where a repeat run's first output goes (the `repeat` scenario's first-output target).

    /usr/bin/python3 bench/first_output.py [--n 64] [--sizes 1,8,64] [--fanouts 0] [--samples 7]
                                           [--tools tpush-persist,pdsh-cp] [--delay-ms 25]

One bench farm of N workers (kex pinned, like bench.py), plus the delay relay of the latency
scenario. For each tool, each worker count S of --sizes (the first S workers) and each network
(loopback, then --delay-ms each way): one run of `true` starts the tool's masters (tpush
--persist 10m; pdsh with ControlMaster/ControlPersist), then --samples runs of
`date +%s.%N` through them. Every process is on this machine, so the remote timestamps and
the bench's clock are the same clock; per sample:

    remote start  spawn -> the earliest remote command start (tpush: 0.5 RTT + local work)
    first byte    spawn -> the first byte on the tool's stdout (a pipe)
    last start    spawn -> the latest remote command start
    exit          spawn -> the tool's exit

medians printed. --fanouts lists -f values to try for tpush (0: -f S, full fan-out), e.g.
`--sizes 64 --fanouts 0,16,8,4` shows whether the first byte waits for the CPU that the
other workers' remote commands take at the same moment.
"""
import argparse
import os
import select
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

fm = bench.farmmod
ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, default=64)
ap.add_argument("--sizes", default="1,8,64")
ap.add_argument("--fanouts", default="0")
ap.add_argument("--samples", type=int, default=7)
ap.add_argument("--tools", default="tpush-persist,pdsh-cp")
ap.add_argument("--delay-ms", type=float, default=25.0)
ap.add_argument("--tpush", default=os.environ.get("TPUSH_BIN", str(bench.ROOT / "build" / "tpush")))
ap.add_argument("--dir", default="/tmp/tpush-bench-fo")
a = ap.parse_args()

work = Path(a.dir)
work.mkdir(parents=True, exist_ok=True)
rt = Path(f"/tmp/tpb-fo-rt-{os.getpid()}")
cpdir = Path(f"/tmp/tpb-fo-cm-{os.getpid()}")
for d in (rt, cpdir):
    d.mkdir(mode=0o700)
is_master = lambda c: ("--persist-master" in c and str(rt) + "/" in c) or (c.startswith("ssh") and str(cpdir) + "/" in c)
f = bench.start_farm(work / "farm", a.n)
relay = None
env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "TPUSH_PERSIST")}
env.update(HOME=str(f.home), XDG_RUNTIME_DIR=str(rt))


def sample(argv, env):
    t0 = time.time()
    p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    select.select([p.stdout.fileno()], [], [], 120)
    t1 = time.time()
    out, _ = p.communicate()
    t2 = time.time()
    ts = sorted(float(ln.split()[-1]) for ln in out.decode(errors="replace").splitlines() if ln.strip())
    if not ts:
        return None
    return [1000 * (ts[0] - t0), 1000 * (t1 - t0), 1000 * (ts[-1] - t0), 1000 * (t2 - t0), len(ts)]


try:
    rport = fm.free_port()
    relay = bench.start_relay(rport, f.port, a.delay_ms / 1000, work / "relay.log")
    with open(f.known_hosts, "a") as kh:
        kh.write(fm.known_hosts_lines(f.addresses, rport, f.host_key_files))
    for tool in [t for t in a.tools.split(",") if t]:
        for s in (int(x) for x in a.sizes.split(",") if x):
            hosts = work / f"hosts{s}"
            hosts.write_text("".join(x + "\n" for x in f.addresses[:s]))
            for port, label in ((f.port, "loopback"), (rport, f"{2 * a.delay_ms:.0f} ms RTT")):
                e = dict(env)
                if tool == "tpush-persist":
                    base = lambda fan: [a.tpush, "-H", str(hosts), "-p", str(port), "-f", str(fan or s),
                                        "--persist", "10m"]
                    fans = [int(x) for x in a.fanouts.split(",") if x]
                elif tool == "pdsh-cp":
                    cfg = bench.control_master_config(f, port, cpdir, f"ssh_config_fo_{port}")
                    e["PDSH_SSH_ARGS_APPEND"] = f"-F {cfg}"
                    base = lambda fan: ["pdsh", "-R", "ssh", "-S", "-w", "^" + str(hosts), "-f", str(fan or s)]
                    fans = [0]
                else:
                    raise SystemExit(f"unknown tool {tool}")
                subprocess.run(base(0) + ["true"], env=e, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                bench.wait_sshd_settled(f, None)
                for fan in fans:
                    xs = [x for x in (sample(base(fan) + ["date +%s.%N"], e) for _ in range(a.samples)) if x]
                    col = lambda i: statistics.median(x[i] for x in xs)
                    print(f"{tool:13} S={s:<4} -f {fan or s:<4} {label:10} remote start {col(0):7.1f} ms  "
                          f"first byte {col(1):7.1f} ms  last start {col(2):7.1f} ms  exit {col(3):7.1f} ms  "
                          f"({len(xs)} samples, {xs[0][4] if xs else 0} lines)", flush=True)
                if tool == "tpush-persist":
                    subprocess.run([a.tpush, "-H", str(hosts), "-p", str(port), "disconnect"], env=e,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                bench.end_masters(is_master)
                bench.wait_sessions_gone(f)
finally:
    bench.end_masters(is_master)
    if relay is not None:
        fm.kill_tree(relay.pid, "delayrelay.py", relay)
    f.stop()
    shutil.rmtree(rt, ignore_errors=True)
    shutil.rmtree(cpdir, ignore_errors=True)
