#!/usr/bin/python3
"""Copy once (issue 30): one file to N workers from a client behind a slow link.

    /usr/bin/python3 bench/relay.py [--workers 64] [--mib 200] [--rate 100mbit]
        [--tools one,tpush-relay,tpush-relay-kill,tpush,clush,pscp,scp] [--runs 1] [--dir DIR]

The client (the tool under test) runs in a network namespace of its own, joined to the
machine by a veth pair whose two ends are rate limited with tbf (--rate each way). The
workers are islands (tests/farm/islands.py): one sshd per address 10.198.0.K on the
machine's loopback device, each in a mount namespace with a directory of its own on the
copy's destination, so N copies are N files on disk. The workers reach each other over
loopback at full speed, as a slice's workers do over its network. This kernel has no
netem, so the link adds no delay of its own: a copy of this size is bound by the rate.

Per run: wall (spawn to exit), the bytes that left the client (the veth's counter on the
machine's side, so what the rate limit let through), client CPU (a cpuacct cgroup: every
process of the run) and peak memory (a memory cgroup), the workers' CPU (each island's
sshd with everything it reaped), and every worker's file checked by SHA-256 against the
source. `one` is tpush cp to the first worker alone: the one copy the targets are
measured against. `tpush-relay-kill` kills worker N/2 (its sshd and every session)
once a third of the file has left the client: the others must still end with a whole,
checked copy, and tpush must report the lost worker.

Rows go to bench/results-relay.json (--replace drops earlier rows of the tools run) and
bench/RESULTS.md is rendered again. Needs root (namespaces, tc) and unshare.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

fm = bench.farmmod
import islands as islands_mod  # noqa: E402  (tests/farm, on the path through bench)
import slow_link  # noqa: E402

TOOLS = ["one", "tpush-relay", "tpush-relay-kill", "tpush", "clush", "pscp", "scp"]
NAMES = {"one": "tpush cp to one worker (the one copy)", "tpush-relay": "tpush cp --relay",
         "tpush-relay-kill": "tpush cp --relay, worker N/2 killed mid-copy", "tpush": "tpush cp --no-relay",
         "clush": "clush --copy", "pscp": "parallel-scp", "scp": "scp fan-out (xargs -P 32)"}
RESULTS = bench.HERE / "results-relay.json"


def argv_of(tool: str, a, isl, cfg: Path, hosts: Path, src: Path) -> list[str]:
    dest = f"{isl.data}/"
    tp = [a.tpush, "-p", str(isl.port), *a.tpush_args.split()]
    if tool == "one":
        return tp + ["-w", isl.islands[0].address, "cp", str(src), dest]
    if tool in ("tpush-relay", "tpush-relay-kill"):
        return tp + ["-H", str(hosts), "cp", "--relay", str(src), dest]
    if tool == "tpush":
        return tp + ["-H", str(hosts), "cp", "--no-relay", str(src), dest]
    if tool == "clush":
        return ["clush", "--hostfile", str(hosts), "-o", f"-F {cfg}", "--copy", str(src), "--dest", dest]
    if tool == "pscp":
        return ["parallel-scp", "-h", str(hosts), "-t", "0", "-x", f"-F {cfg}", str(src), dest]
    if tool == "scp":
        return ["sh", "-c", f'xargs -P 32 -I@ scp -q -F "$1" "$2" @:{dest} < "$3"', "scp-fanout", str(cfg),
                str(src), str(hosts)]
    raise ValueError(tool)


def sha256(p: Path) -> str | None:
    try:
        with open(p, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None


def kill_island(island) -> None:
    for p in fm.descendants(island.pid) + [island.pid]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def sessions_gone(isl, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(fm.descendants(i.pid) for i in isl.islands if fm.alive(i.pid)):
            return
        time.sleep(0.05)


def workers_cpu(isl) -> float:
    return sum(bench.sshd_cpu(i.pid) for i in isl.islands if fm.alive(i.pid))


def run_once(tool: str, a, isl, link: slow_link.SlowLink, cfg: Path, hosts: Path, src: Path, digest: str, disks: list[Path],
             env: dict, work: Path, run: int) -> dict:
    tag = f"relay-{tool}-{run}"
    argv = link.argv(argv_of(tool, a, isl, cfg, hosts, src))
    sessions_gone(isl)
    victim = len(isl.islands) // 2 if tool == "tpush-relay-kill" else None
    cg, ccg = bench.MemCgroup(tag), bench.CpuCgroup(tag)
    join_mem = cg.join_fn()

    def join() -> None:
        if ccg.path is not None:
            (ccg.path / "cgroup.procs").write_text(str(os.getpid()))
        join_mem()

    w0, sent0 = workers_cpu(isl), link.sent()
    err_path = work / f"{tag}.err"
    with open(err_path, "wb") as errf, open(work / f"{tag}.out", "wb") as outf:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=outf, stderr=errf,
                             preexec_fn=join, close_fds=True)
        killed_at = None
        while True:
            pid, status, _ = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            now = time.monotonic()
            if victim is not None and killed_at is None and link.sent() - sent0 > src.stat().st_size / 3:
                kill_island(isl.islands[victim])
                killed_at = now - t0
            if now - t0 > a.timeout:
                fm.kill_tree(p.pid, "ip")
                os.wait4(p.pid, 0)
                status = None
                break
            time.sleep(0.005)
        wall = time.monotonic() - t0
    rc = None if status is None else os.waitstatus_to_exitcode(status)
    sent = link.sent() - sent0
    peak, cpu = cg.peak(), ccg.usage_when_empty()
    cg.remove()
    ccg.remove()
    sessions_gone(isl)
    wcpu = workers_cpu(isl) - w0
    name = src.name
    targets = [k for k in range(len(disks)) if tool != "one" or k == 0]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        sums = list(pool.map(lambda k: sha256(disks[k] / name), targets))
    good = [k for k, s in zip(targets, sums) if s == digest]
    bad = [isl.islands[k].address for k in targets if k not in good and k != victim]
    err = err_path.read_text(errors="replace")
    note = []
    if rc is None:
        note.append(f"killed after {a.timeout:.0f} s")
    elif victim is None and rc != 0:
        note.append(f"exit {rc}")
    if bad:
        note.append(f"{len(bad)} workers without a checked copy ({', '.join(bad[:4])})")
    summary = next((ln for ln in err.splitlines() if ln.startswith("tpush: relay:")), "")
    if victim is not None:
        lost = isl.islands[victim].address
        reported = any(lost in ln and "ok" not in ln.split(lost, 1)[1][:40] for ln in err.splitlines())
        if killed_at is None:
            note.append("the copy ended before worker N/2 could be killed")
        elif not reported or rc == 0:
            note.append(f"the lost worker {lost} was not reported (exit {rc})")
    ok = not note
    if ok:
        (work / f"{tag}.out").unlink()
    res = {"tool": tool, "run": run, "workers": len(targets), "workers_total": len(disks), "mib": a.mib, "rate": a.rate, "wall": wall,
           "sent": sent, "cpu": cpu, "peak": peak, "workers_cpu": wcpu, "rc": rc, "ok": ok,
           "checked": len(good), "note": "; ".join(note), "relay_summary": summary,
           "killed_at": killed_at if victim is not None else None}
    for d in disks:
        for f in d.iterdir():
            f.unlink()
    if victim is not None:
        # What the killed worker could not clean up went with it (on a pod, its VM's /tmp).
        for d in Path("/tmp").glob(f"tpush-relay-*/{isl.islands[victim].address}"):
            shutil.rmtree(d, ignore_errors=True)
            if not any(d.parent.iterdir()):
                d.parent.rmdir()
        isl.islands[victim].start()
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--mib", type=int, default=200)
    ap.add_argument("--rate", default="100mbit")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--dir", default="/var/tmp/tpush-bench-relay")
    ap.add_argument("--replace", action="store_true", help="drop earlier rows of the tools run")
    ap.add_argument("--tpush-args", default="", help="more options for every tpush run (e.g. -v)")
    ap.add_argument("--tpush", default=os.environ.get("TPUSH_BIN", str(bench.ROOT / "build" / "tpush")))
    a = ap.parse_args()
    if not islands_mod.have_unshare() or not slow_link.available():
        print("bench/relay.py: needs root, unshare -m and tc (iproute2)", file=sys.stderr)
        return 1
    tools = [t for t in a.tools.split(",") if t]
    for t in tools:
        if t not in TOOLS:
            print(f"bench/relay.py: unknown tool '{t}' (one of {', '.join(TOOLS)})", file=sys.stderr)
            return 2
    work = Path(a.dir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    src = work / f"copy-{a.mib}MiB.bin"
    with open(src, "wb") as fh:
        for _ in range(a.mib):
            fh.write(os.urandom(1 << 20))
    digest = sha256(src)
    disks = [work / f"w{k}" for k in range(a.workers)]
    for d in disks:
        d.mkdir()
    farm = link = isl = None
    rows = []
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    try:
        farm = fm.Farm(work / "farm", workers=1).start()  # the keys, HOME and known_hosts
        link = slow_link.SlowLink(f"tpb{os.getpid()}", a.workers, a.rate)
        isl = islands_mod.Islands(farm, a.workers, address_of=link.address,
                                  common=dict(disk=lambda k: disks[k], allow_from="*"))
        with open(farm.known_hosts, "a") as fh:
            fh.write(isl.known_hosts())
        hosts = work / "hosts"
        hosts.write_text("".join(i.address + "\n" for i in isl.islands))
        cfg = bench.ssh_config(farm, isl.port, "ssh_config")
        env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "TPUSH_PERSIST")}
        env.update(HOME=str(farm.home))
        for r in range(a.runs):
            for tool in tools:
                res = run_once(tool, a, isl, link, cfg, hosts, src, digest, disks, env, work, r)
                res["date"] = started
                res["commit"] = bench_commit()
                rows.append(res)
                print(f"{tool:17} wall {res['wall']:7.1f} s  sent {res['sent'] / 2**20:9.1f} MiB  "
                      f"client CPU {res['cpu'] or 0:6.2f} s  peak {(res['peak'] or 0) / 2**20:6.1f} MiB  "
                      f"workers CPU {res['workers_cpu']:7.1f} s  checked {res['checked']}/{res['workers']}  "
                      f"{'ok' if res['ok'] else 'FAILED: ' + res['note']}", flush=True)
    finally:
        if isl is not None:
            isl.stop()
        if link is not None:
            link.close()
        if farm is not None:
            farm.stop()
    save(rows, tools, a, started)
    return 0 if all(r["ok"] for r in rows) else 1


def bench_commit() -> str:
    r = subprocess.run(["git", "-C", str(bench.ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def save(rows: list[dict], tools: list[str], a, started: str) -> None:
    old = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"runs": []}
    kept = [r for r in old["runs"] if not (a.replace and r["tool"] in tools and r["workers_total"] == a.workers)]
    old["runs"] = kept + rows
    old["setup"] = {"workers": a.workers, "mib": a.mib, "rate": a.rate, "cpu": bench.platform.processor() or "",
                    "ncpu": os.cpu_count(), "kernel": os.uname().release, "last": started}
    RESULTS.write_text(json.dumps(old, indent=1) + "\n")
    results = bench.HERE / "results.json"
    if results.exists():
        import results_md
        data = json.loads(results.read_text())
        (bench.HERE / "RESULTS.md").write_text(results_md.render(data["meta"], data["results"]))


if __name__ == "__main__":
    sys.exit(main())
