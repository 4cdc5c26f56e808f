#!/usr/bin/python3
"""How long until a shell on one worker answers (issue 38's shell targets).

    /usr/bin/python3 bench/shell_prompt.py [--samples 9] [--out bench/results-shell.json]

One bench farm of 2 workers and a stand-in gcloud (tests/farm/gcloud, which costs what
gcloud's start costs, then runs ssh as `gcloud compute tpus tpu-vm ssh` does) whose TPU
`bench-tpu` is those workers. Each sample spawns a tool at a pseudo-terminal (pexpect),
types `echo tpush-$((6*7))` at once, and times the spawn until `tpush-42` comes back: the
login, the pty, the login shell's start and one command, as a user typing at once sees it.
Tools, worker 0 each time:

    ssh            ssh -t to the worker (an ssh_config like the anchors')
    tpush          tpush -w HOST shell (a fresh session; no persist master)
    tpush-tpu      tpush -t bench-tpu shell (the TPU's workers from tpush's cache)
    tpush-kept     tpush -w HOST shell through a persist master's kept session
    gcloud         gcloud compute tpus tpu-vm ssh bench-tpu --worker=0 (the stand-in)

Medians (and the spread) are printed and written to --out; targets: tpush at most 1.2x
ssh and at most 0.3x gcloud; tpush-kept at most 0.5x ssh.

The login shells run in the login user's home, whatever its ~/.bashrc does (on the
machines the numbers were taken on, root's runs `pyenv init`: ~105 ms of every tool's
time on 2026-11-28, 0.6 s on 2026-11-29's). With --fresh-home (root, unshare -m) the whole bench runs in a mount
namespace of its own where that home is a copy of /etc/skel, as a new user's on a TPU VM
is; its results go to bench/results-shell-fresh-home.json unless --out says otherwise.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pexpect

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

sys.path.insert(0, str(bench.ROOT / "tests" / "farm"))
from fake_gcloud import FakeGcloud  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--samples", type=int, default=9)
ap.add_argument("--tpush", default=os.environ.get("TPUSH_BIN", str(bench.ROOT / "build" / "tpush")))
ap.add_argument("--dir", default="/tmp/tpush-bench-shell")
ap.add_argument("--out", default=None)
ap.add_argument("--fresh-home", action="store_true",
                help="log in to a home made from /etc/skel (a mount namespace of the bench's own)")
a = ap.parse_args()
a.out = a.out or str(Path(__file__).with_name("results-shell-fresh-home.json" if a.fresh_home
                                               else "results-shell.json"))
INNER = "TPUSH_BENCH_FRESH_HOME"
if a.fresh_home and os.environ.get(INNER) is None:
    # Run again in a mount namespace where the login user's home is a copy of /etc/skel.
    import pwd
    import tempfile
    home = pwd.getpwuid(os.getuid()).pw_dir
    skel = Path(tempfile.mkdtemp(prefix="tpush-bench-home-"))
    subprocess.run(["cp", "-a", "/etc/skel/.", str(skel)], check=True)
    skel.chmod(0o700)
    argv = [sys.executable, *sys.argv, "--out", a.out]
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                           'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", str(skel), home, *argv],
                          env={**os.environ, INNER: home})
    shutil.rmtree(skel, ignore_errors=True)
    sys.exit(done.returncode)

work = Path(a.dir)
shutil.rmtree(work, ignore_errors=True)
work.mkdir(parents=True)
rt = work / "rt"
rt.mkdir(mode=0o700)
f = bench.start_farm(work / "farm", 2)
try:
    shutil.copy(f.key("id_ed25519"), f.home / ".ssh" / "google_compute_engine")
    g = FakeGcloud(work / "gcloud")
    g.tpu("bench-tpu", f.addresses[:2], external=True)
    cfg = bench.ssh_config(f, f.port, "ssh_config")
    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "TPUSH_PERSIST")}
    env.update(HOME=str(f.home), XDG_RUNTIME_DIR=str(rt), TERM="xterm", TPUSH_PERSIST="0")
    env = g.env(env)
    env["TPUSH_FAKE_SSH_PORT"] = str(f.port)
    host = f.hosts[0]
    cm = str(rt / "cm")
    tp = a.tpush
    where = ["--project", g.project, "--zone", g.zone]
    tools = {
        "ssh": (["ssh", "-t", "-F", str(cfg), f.addresses[0]], env),
        "tpush": ([tp, "-w", host, "shell"], env),
        "tpush-tpu": ([tp, "-t", "bench-tpu", *where, "-p", str(f.port), "shell"], env),
        "tpush-kept": ([tp, "-w", host, "shell"], {**env, "TPUSH_PERSIST": "10m"}),
        "ssh-kept": (["ssh", "-t", "-F", str(cfg), "-o", f"ControlPath={cm}", f.addresses[0]], env),
        "gcloud": (["gcloud", "compute", "tpus", "tpu-vm", "ssh", "bench-tpu", "--worker=0", *where], env),
    }
    # Warm what a user has warm: the TPU in tpush's cache, the kept session's master.
    for argv, environment in (([tp, "-t", "bench-tpu", *where, "-p", str(f.port), "true"], env),
                              ([tp, "-w", host, "true"], {**env, "TPUSH_PERSIST": "10m"}),
                              (["ssh", "-F", str(cfg), "-o", "ControlMaster=yes", "-o", f"ControlPath={cm}",
                                "-o", "ControlPersist=10m", "-f", "-N", f.addresses[0]], env)):
        done = subprocess.run(argv, env=environment, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")

    def sample(argv, environment) -> float:
        t0 = time.monotonic()
        child = pexpect.spawn(argv[0], argv[1:], env=environment, encoding="utf-8", codec_errors="replace",
                              dimensions=(30, 100), timeout=60)
        child.send("echo tpush-$((6*7))\r")
        child.expect_exact("tpush-42")
        took = time.monotonic() - t0
        child.send("exit\r")
        child.expect(pexpect.EOF)
        child.close()
        return took

    results = {}
    for round_ in range(a.samples):  # tools interleaved, so drift hits each alike
        for name, (argv, environment) in tools.items():
            results.setdefault(name, []).append(sample(argv, environment))
    table = {name: {"median": statistics.median(v), "min": min(v), "max": max(v), "samples": v}
             for name, v in results.items()}
    ssh_s, gcloud_s = table["ssh"]["median"], table["gcloud"]["median"]
    for name, row in table.items():
        print(f"{name:11s} {row['median'] * 1000:7.1f} ms  ({row['min'] * 1000:.1f}-{row['max'] * 1000:.1f})"
              f"  {row['median'] / ssh_s:5.2f}x ssh  {row['median'] / gcloud_s:5.2f}x gcloud")
    home = "a copy of /etc/skel" if a.fresh_home else "the login user's own"
    Path(a.out).write_text(json.dumps({"samples": a.samples, "ncpu": os.cpu_count(), "home": home, "tools": table},
                                      indent=1) + "\n")
finally:
    subprocess.run(["ssh", "-o", f"ControlPath={rt / 'cm'}", "-O", "exit", "x"], capture_output=True,
                   stdin=subprocess.DEVNULL)
    subprocess.run([a.tpush, "-w", f.hosts[0], "disconnect"], capture_output=True, stdin=subprocess.DEVNULL,
                   env={**os.environ, "HOME": str(f.home), "XDG_RUNTIME_DIR": str(rt)})
    f.stop()
