#!/usr/bin/python3
"""Expanding a large host list: `tpush workers -w EXPR` (text and --json) beside `nodeset -e EXPR`.

    /usr/bin/python3 bench/hostlist.py [--range 'node[000000-099999]'] [--runs 5]
                                       [--tpush build/tpush] [--baseline OLD_TPUSH] [--json FILE]

No farm, no network: `tpush workers` contacts no worker. It expands the list and plans how each
worker would be reached (ssh_config, flags, defaults: what a run does before it connects), then
prints one line per worker, or with --json one object per worker with every setting and its
origin. `nodeset -e` (ClusterShell) only expands. Each tool runs with stdout to /dev/null, in
a HOME of the bench's own (`~/.ssh/config` matters to tpush) of two kinds:

    config   a ~/.ssh/config with a few Host blocks, wildcards, a negation, a Match and a
             catch-all Host *: the shape of a real one
    empty    an empty ~/.ssh/config

(/etc/ssh/ssh_config is read too, as ssh reads it.) Per run: CPU (user + sys) and peak RSS
(maximum resident set size), as GNU time (/usr/bin/time, Debian's `time`) reports them. The runs of each row are interleaved with the others', so outside
load hits them alike; the table gives the median and the range. Before the timed runs every
tpush output is checked once: as many lines (text) or array elements (JSON) as hosts.
With --baseline, that binary gets rows of its own ("before").
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

SSH_CONFIG = """\
Host bastion
    HostName bastion.example.com
    User ops
    Port 2222

Host *.prod.example.com prod-*
    User deploy
    IdentityFile ~/.ssh/id_prod
    ProxyJump bastion

Match host gpu* user root
    Port 2200

Host node0001* !node00019
    User alice
    ServerAliveInterval 30

Host node*
    StrictHostKeyChecking accept-new
    ConnectTimeout 5

Host *
    ServerAliveInterval 60
    ServerAliveCountMax 3
    IdentityFile ~/.ssh/id_ed25519
    Compression no
"""


def make_home(root: Path, name: str, config: str) -> Path:
    home = root / name
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh").chmod(0o700)
    (home / ".ssh" / "config").write_text(config)
    (home / ".ssh" / "config").chmod(0o600)
    return home


def measure(argv: list[str], env: dict[str, str], scratch: Path) -> dict:
    """CPU and peak RSS as GNU time reports them from its wait4: a child forked from this
    Python process would count the bench's own pages in its peak until it runs the tool."""
    report = scratch / "time.out"
    t0 = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", str(report), *argv], env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit(f"hostlist: {' '.join(argv)} exited {proc.returncode}: "
                 f"{proc.stderr.decode(errors='replace')[-500:]}")
    user, system, kib = report.read_text().split()[-3:]
    return {"cpu": float(user) + float(system), "user": float(user), "sys": float(system),
            "peak_mib": int(kib) / 1024, "wall": wall}


def check(argv: list[str], env: dict[str, str], json_out: bool, hosts: int) -> None:
    """As many lines (text) or array elements (JSON: objects opened at the array's indent) as
    hosts. Read in pieces: the bench stays small, since a child forked from it counts the
    bench's own pages in its peak RSS until it runs the tool."""
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    count, tail = 0, b""
    marker = b"\n  {\n" if json_out else b"\n"  # the first element's comes after "["
    first = True
    while chunk := proc.stdout.read(1 << 20):
        if first and json_out and not chunk.startswith(b"[\n"):
            sys.exit(f"hostlist: {' '.join(argv)} does not print a JSON array")
        first = False
        data = tail + chunk
        count += data.count(marker)
        tail = data[-(len(marker) - 1):] if len(marker) > 1 else b""
    if proc.wait() != 0:
        sys.exit(f"hostlist: {' '.join(argv)} exited {proc.returncode}")
    if count != hosts:
        sys.exit(f"hostlist: {' '.join(argv)} gave {count} workers, not {hosts}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--range", default="node[000000-099999]")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tpush", default=os.environ.get("TPUSH_BIN", str(HERE.parent / "build" / "tpush")))
    ap.add_argument("--baseline", help="an older tpush binary measured the same way (rows 'before')")
    ap.add_argument("--json", dest="json_file", help="also write every run to this file")
    a = ap.parse_args()

    hosts = int(subprocess.run(["nodeset", "-c", a.range], capture_output=True, text=True, check=True).stdout)
    with tempfile.TemporaryDirectory(prefix="tpush-hostlist-") as tmp:
        homes = {"config": make_home(Path(tmp), "config", SSH_CONFIG), "empty": make_home(Path(tmp), "empty", "")}
        base_env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK" and not k.startswith("TPUSH_")}
        base_env["XDG_CONFIG_HOME"] = str(Path(tmp) / "xdg-config")  # no tpush config file of the user's
        base_env["XDG_STATE_HOME"] = str(Path(tmp) / "xdg-state")
        base_env["XDG_CACHE_HOME"] = str(Path(tmp) / "xdg-cache")
        rows: list[tuple[str, list[str], dict[str, str], bool]] = []
        binaries = [("", a.tpush)] + ([("before: ", a.baseline)] if a.baseline else [])
        for label, binary in binaries:
            for home_name, home in homes.items():
                env = dict(base_env, HOME=str(home))
                for json_out in (False, True):
                    argv = [binary, "workers", *(["--json"] if json_out else []), "-w", a.range]
                    name = f"{label}tpush workers{' --json' if json_out else ''}, {home_name} ~/.ssh/config"
                    rows.append((name, argv, env, json_out))
        rows.append(("nodeset -e", ["nodeset", "-e", a.range], dict(base_env), False))
        for name, argv, env, json_out in rows:
            if argv[0] != "nodeset":
                check(argv, env, json_out, hosts)
        runs: dict[str, list[dict]] = {name: [] for name, *_ in rows}
        for _ in range(a.runs):
            for name, argv, env, _json in rows:
                runs[name].append(measure(argv, env, Path(tmp)))

    nodeset_cpu = statistics.median(r["cpu"] for r in runs["nodeset -e"])
    version = subprocess.run([a.tpush, "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", str(HERE.parent), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    print(f"{hosts:,} hosts ({a.range}), {a.runs} runs per row, interleaved; {platform.node()}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} at the end; {version}, commit {commit}\n")
    print("| command | CPU s, median (min–max) | user / sys s | peak RSS MiB | CPU ÷ nodeset's |")
    print("|---|---|---|---|---|")
    for name, *_ in rows:
        rs = runs[name]
        cpu = [r["cpu"] for r in rs]
        print(f"| {name} | {statistics.median(cpu):.2f} ({min(cpu):.2f}–{max(cpu):.2f}) | "
              f"{statistics.median(r['user'] for r in rs):.2f} / {statistics.median(r['sys'] for r in rs):.2f} | "
              f"{statistics.median(r['peak_mib'] for r in rs):.1f} | {statistics.median(cpu) / nodeset_cpu:.2f} |")
    if a.json_file:
        Path(a.json_file).write_text(json.dumps({"range": a.range, "hosts": hosts, "commit": commit,
                                                 "version": version, "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
