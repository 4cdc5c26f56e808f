#!/usr/bin/python3
"""tpush benchmark: tpush vs pdsh -R ssh, parallel-ssh and clush on a loopback farm.

Run through bench/run.sh (see bench/README.md).  One farm (tests/farm/farm.py, one sshd
on many 127.0.x.y addresses, key exchange pinned to curve25519-sha256) per N.  Each run:

  * the tool is started by this script; it joins a fresh memory cgroup (cgroup v1
    memory.max_usage_in_bytes = peak of all its processes together) before exec;
  * stdout goes through a pipe to `cat` running OUTSIDE the cgroup (so page cache for the
    output file is not charged to the tool);
  * wall = monotonic time from spawn to wait4(); client CPU = wait4's rusage
    (user+sys of the tool and every descendant it reaped);
  * sshd CPU = delta of utime+stime+cutime+cstime of the farm's listening sshd (its
    per-connection children and the remote commands are reaped inside its tree), read
    after every session of the run has exited;
  * success is checked from the output (every worker's lines whole and attributed) and
    the exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "farm"))
import farm as farmmod  # noqa: E402

LINES = 1000
COPY_MIB = 100
COPY_DEST = "/dst"  # inside each worker's chroot
CLK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------- farm

class BenchSshd(farmmod.Sshd):
    """The farm's sshd with the key exchange pinned and quiet logging.  For the copy
    scenario, `chroots` maps each worker address to its own root directory, so that N
    workers on one machine get N separate file systems to write into (SFTP only)."""

    chroots: dict[str, Path] = {}

    def write_config(self) -> None:
        super().write_config()
        text = self.config.read_text().replace("LogLevel VERBOSE", "LogLevel ERROR")
        text += "KexAlgorithms curve25519-sha256\n"
        for address, root in self.chroots.items():
            text += f"Match LocalAddress {address}\n  ChrootDirectory {root}\n"
        self.config.write_text(text)


farmmod.Sshd = BenchSshd  # Farm.start() builds its sshd through the module global


def start_farm(directory: Path, workers: int) -> farmmod.Farm:
    directory.mkdir(parents=True, exist_ok=True)
    f = farmmod.Farm(directory, workers).start()
    (f.dir / "hosts-plain").write_text("".join(a + "\n" for a in f.addresses))
    return f


def ssh_config(f: farmmod.Farm, port: int, name: str) -> Path:
    """A private ssh_config (used with -F) for the OpenSSH-based anchors."""
    cfg = f.dir / name
    cfg.write_text(f"""Host *
  Port {port}
  User {os.environ.get('USER') or 'root'}
  IdentityFile {f.key('id_ed25519')}
  IdentitiesOnly yes
  UserKnownHostsFile {f.known_hosts}
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  UpdateHostKeys no
  BatchMode yes
  ControlMaster no
  ControlPath none
  LogLevel ERROR
""")
    return cfg


def sshd_cpu(pid: int) -> float:
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2:].split()
    # fields[11..14] = utime stime cutime cstime (man 5 proc: 14..17, 1-based from pid)
    return sum(int(x) for x in fields[11:15]) / CLK


def wait_sessions_gone(f: farmmod.Farm, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not farmmod.descendants(f.sshd.pid):
            return
        time.sleep(0.05)


# --------------------------------------------------------------------------- cgroup

def memory_cgroup_base() -> Path | None:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        if "memory" in ctrls.split(","):
            base = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
            return base if (base / "memory.max_usage_in_bytes").exists() else None
    return None


class MemCgroup:
    def __init__(self, tag: str):
        base = memory_cgroup_base()
        self.path = None
        if base is not None:
            p = base / f"tpush-bench-{os.getpid()}-{tag}"
            try:
                p.mkdir()
                self.path = p
            except OSError:
                self.path = None

    def join_fn(self):
        path = self.path

        def fn():
            if path is not None:
                (path / "cgroup.procs").write_text(str(os.getpid()))
            os.setsid()
        return fn

    def peak(self) -> int | None:
        if self.path is None:
            return None
        return int((self.path / "memory.max_usage_in_bytes").read_text())

    def remove(self) -> None:
        if self.path is None:
            return
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.05)


# --------------------------------------------------------------------------- tools

def remote_command(scenario: str) -> str:
    if scenario == "true":
        return "true"
    # every line carries the worker's own address (3rd field of SSH_CONNECTION)
    return f'set -- $SSH_CONNECTION; seq -f "$3 %g" {LINES}'


def copy_argv(tool: str, fan: int | None, f: farmmod.Farm, port: int, cfg: Path, src: Path,
              tpush_bin: str) -> list[str]:
    """Push `src` into COPY_DEST/ on every worker."""
    hosts = str(f.dir / "hosts-plain")
    if tool == "tpush":
        return [tpush_bin, "-H", hosts, "-p", str(port), *(["-f", str(fan)] if fan else []),
                "cp", str(src), COPY_DEST + "/"]
    if tool == "pscp":
        return ["parallel-scp", "-h", hosts, "-t", "0", "-x", f"-F {cfg}",
                *(["-p", str(fan)] if fan else []), str(src), COPY_DEST + "/"]
    if tool == "scp":
        # pdcp-style: one scp per worker, `fan` at a time (xargs -P), as people script it
        return ["sh", "-c", f'xargs -P {fan or 32} -I@ scp -q -F "$1" "$2" @:{COPY_DEST}/ < "$3"',
                "scp-fanout", str(cfg), str(src), hosts]
    if tool == "clush":
        return ["clush", "--hostfile", hosts, "-o", f"-F {cfg}", *(["-f", str(fan)] if fan else []),
                "--copy", str(src), "--dest", COPY_DEST + "/"]
    raise ValueError(tool)


def tool_argv(tool: str, fan: int | None, f: farmmod.Farm, port: int, cfg: Path, cmd: str,
              tpush_bin: str, jump: str | None = None) -> tuple[list[str], dict[str, str]]:
    hosts = str(f.dir / "hosts-plain")
    env: dict[str, str] = {}
    if tool in ("tpush", "tpush-ct60"):
        argv = [tpush_bin, "-H", hosts, "-p", str(port)] + (["-J", jump] if jump else [])
        if tool == "tpush-ct60":
            # the default 10 s handshake deadline is shorter than the one farm sshd needs to
            # serve 256+ handshakes at once on 2 busy cores (OpenSSH's ssh has no such deadline)
            argv += ["--connect-timeout", "60"]
        if fan:
            argv += ["-f", str(fan)]
        argv += [cmd]
    elif tool == "pdsh":
        argv = ["pdsh", "-R", "ssh", "-S", "-w", "^" + hosts]
        if fan:
            argv += ["-f", str(fan)]
        argv += [cmd]
        env["PDSH_SSH_ARGS_APPEND"] = f"-F {cfg}"
    elif tool == "pssh":
        # -t 0: no per-host timeout (its default 60 s would cut the slow anchors at N=1024)
        argv = ["parallel-ssh", "-h", hosts, "-t", "0", "-x", f"-F {cfg}", "-i"]
        if fan:
            argv += ["-p", str(fan)]
        argv += [cmd]
    elif tool == "clush":
        argv = ["clush", "-S", "--hostfile", hosts, "-o", f"-F {cfg}"]
        if fan:
            argv += ["-f", str(fan)]
        argv += [cmd]
    else:
        raise ValueError(tool)
    return argv, env


DEFAULT_FANOUT = {"tpush": "all", "tpush-ct60": "all", "pdsh": "32", "pssh": "32", "clush": "64",
                  "pscp": "32", "scp": "32"}
COPY_TOOLS = ("tpush", "pscp", "scp", "clush")


def variants(tools: list[str], n: int) -> list[tuple[str, int | None]]:
    out = []
    for t in tools:
        out.append((t, n))                # full fan-out
        if not t.startswith("tpush"):     # tpush's default fan-out is all workers (= N)
            out.append((t, None))
    return out


# --------------------------------------------------------------------------- verification

LINE_RE = re.compile(r"^([0-9.]+)(?::\d+)?:\s+([0-9.]+) (\d+)$")
PSSH_HDR = re.compile(r"^\[\d+\] \S+ \[(SUCCESS|FAILURE)\] ([0-9.]+)(?::\d+)?(.*)$")


def verify(tool: str, scenario: str, out: str, rc: int, addresses: list[str]) -> tuple[bool, str]:
    """(ok, note): every worker succeeded; for `lines`, every line whole and attributed."""
    want = set(addresses)
    lines = out.splitlines()
    if tool == "pssh":
        ok_hosts, bodies, cur = set(), {}, None
        for ln in lines:
            m = PSSH_HDR.match(ln)
            if m:
                cur = m.group(2)
                if m.group(1) == "SUCCESS":
                    ok_hosts.add(cur)
                bodies.setdefault(cur, [])
            elif ln.startswith("Stderr:"):
                cur = None
            elif cur is not None:
                bodies[cur].append(ln)
        if ok_hosts != want:
            return False, f"{len(want - ok_hosts)} workers not SUCCESS"
        if scenario == "true":
            return rc == 0, "" if rc == 0 else f"exit {rc}"
        bad = 0
        for a in addresses:
            body = bodies.get(a, [])
            exp = [f"{a} {i}" for i in range(1, LINES + 1)]
            if body != exp:
                bad += 1
        return (bad == 0 and rc == 0), (f"{bad} workers with wrong lines" if bad else "")
    if rc != 0:
        return False, f"exit {rc}"
    if scenario == "true":
        return True, ""
    per: dict[str, list[int]] = {}
    junk = 0
    for ln in lines:
        m = LINE_RE.match(ln)
        if not m or m.group(1) != m.group(2):
            junk += 1
            continue
        per.setdefault(m.group(1), []).append(int(m.group(3)))
    exp = list(range(1, LINES + 1))
    bad = sum(1 for a in addresses if per.get(a) != exp)
    extra = set(per) - want
    ok = junk == 0 and bad == 0 and not extra
    note = []
    if junk:
        note.append(f"{junk} malformed/misattributed lines")
    if bad:
        note.append(f"{bad} workers incomplete")
    return ok, "; ".join(note)


def verify_copy(roots: list[Path], src: Path, rc: int) -> tuple[bool, str]:
    """Every worker's copy is there, whole: same size, same first and last MiB."""
    size = src.stat().st_size
    with open(src, "rb") as fh:
        head = fh.read(1 << 20)
        fh.seek(max(0, size - (1 << 20)))
        tail = fh.read()
    bad = 0
    for root in roots:
        dest = root / COPY_DEST.lstrip("/") / src.name
        try:
            if dest.stat().st_size != size:
                bad += 1
                continue
            with open(dest, "rb") as fh:
                if fh.read(1 << 20) != head:
                    bad += 1
                    continue
                fh.seek(max(0, size - (1 << 20)))
                if fh.read() != tail:
                    bad += 1
        except OSError:
            bad += 1
    note = "; ".join(x for x in (f"exit {rc}" if rc else "", f"{bad} workers without a whole copy" if bad else "") if x)
    return rc == 0 and bad == 0, note


def clear_copies(roots: list[Path]) -> None:
    for root in roots:
        d = root / COPY_DEST.lstrip("/")
        for p in d.iterdir():
            p.unlink()


def opens_of(argv: list[str], env: dict[str, str], src: Path, f: farmmod.Farm) -> int:
    """How many times the tool (and everything it starts) opens the source file: one
    extra, untimed run under strace."""
    log = f.dir / "strace-opens.log"
    # --seccomp-bpf: stop only on the traced calls, not on every read and write
    subprocess.run(["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=open,openat", "-o", str(log), *argv], env=env,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=600)
    wait_sessions_gone(f)
    return sum(1 for ln in log.read_text(errors="replace").splitlines()
               if f'"{src}"' in ln and "= -1" not in ln)


# --------------------------------------------------------------------------- one run

def run_once(tool: str, fan: int | None, scenario: str, f: farmmod.Farm, port: int, cfg: Path,
             tpush_bin: str, workdir: Path, tag: str, timeout: float, copy: tuple | None = None,
             bastion: "Bastion | None" = None) -> dict:
    if copy:
        src, roots = copy
        argv, extra_env = copy_argv(tool, fan, f, port, cfg, src, tpush_bin), {}
    else:
        argv, extra_env = tool_argv(tool, fan, f, port, cfg, remote_command(scenario), tpush_bin,
                                    jump=bastion.jump if bastion else None)
    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID")}
    env.update(extra_env)
    env["HOME"] = str(f.home)  # tpush reads $HOME/.ssh; OpenSSH gets everything from -F cfg
    out_path = workdir / f"{tag}.out"
    err_path = workdir / f"{tag}.err"
    wait_sessions_gone(f)
    if bastion:
        bastion.wait_sessions_gone()
    cg = MemCgroup(tag)
    s0 = sshd_cpu(f.sshd.pid) + (sshd_cpu(bastion.sshd.pid) if bastion else 0)
    logins0 = bastion.logins() if bastion else 0
    with open(out_path, "wb") as outf, open(err_path, "wb") as errf:
        cat = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=outf)
        t0 = time.monotonic()
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=cat.stdin,
                             stderr=errf, preexec_fn=cg.join_fn(), close_fds=True)
        cat.stdin.close()
        timed_out = False
        deadline = t0 + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                timed_out = True
                farmmod.kill_tree(p.pid, argv[0])
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.005)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        cat.wait()
    peak = cg.peak()
    cg.remove()
    wait_sessions_gone(f)
    if bastion:
        bastion.wait_sessions_gone()
    s1 = sshd_cpu(f.sshd.pid) + (sshd_cpu(bastion.sshd.pid) if bastion else 0)
    out = out_path.read_text(errors="replace")
    if copy:
        ok, note = verify_copy(copy[1], copy[0], p.returncode)
        clear_copies(copy[1])
    else:
        ok, note = verify(tool, scenario, out, p.returncode, f.addresses)
    if timed_out:
        ok, note = False, f"killed after {timeout:.0f}s"
    if ok:
        out_path.unlink()  # keep only failing outputs (large)
    res = {"tool": tool, "fan": fan, "scenario": scenario, "wall": wall,
           "cpu": ru.ru_utime + ru.ru_stime, "peak": peak, "sshd_cpu": s1 - s0,
           "rc": p.returncode, "ok": ok, "note": note,
           "err_tail": err_path.read_text(errors="replace")[-300:] if not ok else ""}
    if bastion:
        res["bastion_logins"] = bastion.logins() - logins0
    return res


def keep(res: dict, n: int, scenario: str, run: int, stamp: dict, results: list[dict], save) -> None:
    """Stamps one run's result (N, scenario, run, load now, commit and date), keeps it,
    reports it on stderr and saves everything so far."""
    res.update(n=n, scenario=scenario, run=run, load=float(Path("/proc/loadavg").read_text().split()[0]),
               **stamp)
    results.append(res)
    logins = f"bastion logins {res['bastion_logins']} " if "bastion_logins" in res else ""
    print(f"bench: N={n} {scenario:7} {res['tool']:5} f={res['fan'] or 'default':>7} run {run}: "
          f"wall {res['wall']:.2f}s cpu {res['cpu']:.2f}s peak {fmt_mib(res['peak'])} "
          f"sshd {res['sshd_cpu']:.2f}s {logins}{'ok' if res['ok'] else 'FAIL ' + res['note']}",
          file=sys.stderr, flush=True)
    save()


# --------------------------------------------------------------------------- jump host

class BastionSshd(BenchSshd):
    """The bench farm's sshd, forwarding allowed, logging each accepted login (VERBOSE)."""

    def write_config(self) -> None:
        super().write_config()
        text = self.config.read_text().replace("LogLevel ERROR", "LogLevel VERBOSE")
        self.config.write_text(text + "AllowTcpForwarding yes\n")


class Bastion:
    """A second sshd on its own address and port: the jump host every worker is reached
    through."""

    ADDRESS = "127.0.200.1"

    def __init__(self, f: farmmod.Farm, directory: Path):
        port = farmmod.free_port(self.ADDRESS)
        self.sshd = BastionSshd(directory, self.ADDRESS, port, f.authorized_keys)
        self.port = port
        self.user = os.environ.get("USER") or "root"
        self.jump = f"{self.user}@{self.ADDRESS}:{port}"

    def start(self, f: farmmod.Farm) -> "Bastion":
        self.sshd.start(self.ADDRESS)
        with open(f.known_hosts, "a") as kh:
            kh.write(farmmod.known_hosts_lines([self.ADDRESS], self.port, self.sshd.host_key_files))
        return self

    def logins(self) -> int:
        """Logins the bastion accepted so far (its log's "Accepted publickey" lines)."""
        try:
            return self.sshd.log.read_text(errors="replace").count("Accepted publickey")
        except FileNotFoundError:
            return 0

    def wait_sessions_gone(self, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while farmmod.descendants(self.sshd.pid) and time.monotonic() < end:
            time.sleep(0.05)

    def ssh_config(self, f: farmmod.Farm, port: int) -> Path:
        """The anchors' config: the bastion, then every worker through it (ProxyJump)."""
        cfg = f.dir / "ssh_config_jump"
        base = ssh_config(f, port, "ssh_config_jump_base").read_text()
        cfg.write_text(f"Host bastion\n  HostName {self.ADDRESS}\n  Port {self.port}\n  ProxyJump none\n"
                       f"Host *\n  ProxyJump bastion\n" + base.replace("Host *\n", "", 1))
        return cfg

    def stop(self) -> None:
        self.sshd.stop()


def run_jump(a, n: int, tools: list[str], work: Path, results: list[dict], save, stamp: dict) -> None:
    """The jump scenario: N workers behind one bastion, `true` on each: tpush -J (one
    bastion session carries every worker) vs the anchors with ProxyJump in their config."""
    f = start_farm(work / f"farm-jump-{n}", n)
    b = None
    try:
        b = Bastion(f, work / f"bastion-{n}").start(f)
        cfg = b.ssh_config(f, f.port)
        for r in range(a.runs):
            for tool, fan in variants(tools, n):
                tag = f"{n}-jump-{tool}-{fan or 'def'}-{r}"
                res = run_once(tool, fan, "true", f, f.port, cfg, a.tpush, work, tag, a.timeout, bastion=b)
                keep(res, n, "jump", r, stamp, results, save)
    finally:
        if b is not None:
            b.stop()
        f.stop()


# --------------------------------------------------------------------------- latency relay

def start_relay(listen_port: int, target_port: int, delay: float, log: Path) -> subprocess.Popen:
    p = subprocess.Popen(["/usr/bin/python3", str(HERE / "delayrelay.py"), "--listen-port",
                          str(listen_port), "--target-port", str(target_port), "--delay", str(delay)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=open(log, "wb"),
                         start_new_session=True, preexec_fn=farmmod._raise_nofile)
    line = p.stdout.readline()  # "ready"
    if not line.startswith(b"ready"):
        raise RuntimeError(f"delay relay did not start: {log.read_text()[-500:]}")
    return p


# --------------------------------------------------------------------------- main

def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="64,256,1024")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scenarios", default="true,lines,latency,copy,jump")
    ap.add_argument("--tools", default="tpush,tpush-ct60,pdsh,pssh,clush")
    ap.add_argument("--latency-n", default="64,256")
    ap.add_argument("--copy-n", default="64")
    ap.add_argument("--copy-tools", default=",".join(COPY_TOOLS))
    ap.add_argument("--jump-n", default="256")
    ap.add_argument("--delay-ms", type=float, default=25.0)
    ap.add_argument("--tpush", default=os.environ.get("TPUSH_BIN", str(ROOT / "build" / "tpush")))
    ap.add_argument("--workdir", default="/tmp/tpush-bench")
    ap.add_argument("--json", default=str(HERE / "results.json"))
    ap.add_argument("--results", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--command-line", default="")
    ap.add_argument("--append", action="store_true",
                    help="add to the runs already in --json instead of starting over")
    ap.add_argument("--replace", action="store_true",
                    help="like --append, but first drop the earlier runs of the rows this run "
                         "measures (same N, scenario and tool), e.g. to remeasure tpush alone")
    a = ap.parse_args(argv)
    a.append = a.append or a.replace

    ns = [int(x) for x in a.n.split(",") if x]
    scen = [s for s in a.scenarios.split(",") if s]
    tools = [t for t in a.tools.split(",") if t]
    lat_ns = [int(x) for x in a.latency_n.split(",") if x]
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    results: list[dict] = []
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    loadavg_start = Path("/proc/loadavg").read_text().split()[:3]
    old_meta = None
    if a.append and Path(a.json).exists():
        old = json.loads(Path(a.json).read_text())
        results, old_meta = old["results"], old["meta"]
        for r in results:  # runs from before rows carried their own commit and date
            r.setdefault("commit", old_meta["commit"])
            r.setdefault("date", old_meta["started"])
        if a.replace:
            rows = planned_rows(a, ns, scen, tools, lat_ns)
            results[:] = [r for r in results if (r["n"], r["scenario"], r["tool"]) not in rows]
    stamp = {"commit": machine_meta(a, started, loadavg_start)["commit"], "date": started}

    def save():
        meta = machine_meta(a, started, loadavg_start)
        if old_meta:
            meta["started"], meta["loadavg_start"] = old_meta["started"], old_meta["loadavg_start"]
            meta["command"] = old_meta["command"] + " && " + meta["command"]
        Path(a.json).write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
        write_results(Path(a.results), meta, results)

    if "copy" in scen:
        for n in (int(x) for x in a.copy_n.split(",") if x):
            run_copy(a, n, [t for t in a.copy_tools.split(",") if t], work, results, save, stamp)
    if "jump" in scen:
        for n in (int(x) for x in a.jump_n.split(",") if x):
            run_jump(a, n, tools, work, results, save, stamp)

    all_ns = sorted(set(ns) | (set(lat_ns) if "latency" in scen else set()))
    for n in all_ns:
        fdir = work / f"farm-{n}"
        f = start_farm(fdir, n)
        relay = None
        try:
            cfg = ssh_config(f, f.port, "ssh_config")
            plan = []
            for s in ("true", "lines"):
                if s in scen and n in ns:
                    plan.append((s, f.port, cfg))
            if "latency" in scen and n in lat_ns:
                rport = farmmod.free_port()
                relay = start_relay(rport, f.port, a.delay_ms / 1000, work / f"relay-{n}.log")
                with open(f.known_hosts, "a") as kh:
                    kh.write(farmmod.known_hosts_lines(f.addresses, rport, f.host_key_files))
                plan.append(("latency", rport, ssh_config(f, rport, "ssh_config_latency")))
            for scenario, port, c in plan:
                vs = variants(tools, n)
                for r in range(a.runs):
                    # interleave tools within each repetition so machine noise spreads evenly
                    for tool, fan in vs:
                        tag = f"{n}-{scenario}-{tool}-{fan or 'def'}-{r}"
                        res = run_once(tool, fan, "true" if scenario == "latency" else scenario,
                                       f, port, c, a.tpush, work, tag, a.timeout)
                        keep(res, n, scenario, r, stamp, results, save)
        finally:
            if relay is not None:
                farmmod.kill_tree(relay.pid, "delayrelay.py", relay)
            f.stop()
    save()
    return 0


def planned_rows(a, ns: list[int], scen: list[str], tools: list[str], lat_ns: list[int]) -> set:
    """(N, scenario, tool) of every row this invocation measures."""
    rows = {(n, s, t) for s in ("true", "lines") if s in scen for n in ns for t in tools}
    if "latency" in scen:
        rows |= {(n, "latency", t) for n in lat_ns for t in tools}
    if "copy" in scen:
        rows |= {(int(n), "copy", t) for n in a.copy_n.split(",") if n for t in a.copy_tools.split(",") if t}
    if "jump" in scen:
        rows |= {(int(n), "jump", t) for n in a.jump_n.split(",") if n for t in tools}
    return rows


def run_copy(a, n: int, tools: list[str], work: Path, results: list[dict], save, stamp: dict) -> None:
    """The copy scenario: COPY_MIB MiB pushed to N workers, each an SFTP-only chroot of
    its own (on a tmpfs mounted for the run where possible, so the disk is not measured)."""
    base = Path(f"/run/tpush-bench-copy-{os.getpid()}")  # chroot paths must be root-owned
    base.mkdir(mode=0o755)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"mode=755,size={(n + 2) * COPY_MIB * 2}m",
                              "tpush-bench", str(base)], capture_output=True).returncode == 0
    src = work / f"copy-{COPY_MIB}MiB.bin"
    if not src.exists() or src.stat().st_size != COPY_MIB << 20:
        with open(src, "wb") as fh:
            for _ in range(COPY_MIB):
                fh.write(os.urandom(1 << 20))
    src.read_bytes()  # in the page cache before any run, charged to no tool's cgroup
    f = None
    try:
        roots = []
        for i, address in enumerate(farmmod.worker_address(i) for i in range(n)):
            root = base / f"w{i}"
            (root / COPY_DEST.lstrip("/")).mkdir(parents=True)
            root.chmod(0o755)
            BenchSshd.chroots[address] = root
            roots.append(root)
        f = start_farm(work / f"farm-copy-{n}", n)
        cfg = ssh_config(f, f.port, "ssh_config")
        opens = {}
        for r in range(a.runs):
            for tool, fan in variants(tools, n):
                tag = f"{n}-copy-{tool}-{fan or 'def'}-{r}"
                res = run_once(tool, fan, "copy", f, f.port, cfg, a.tpush, work, tag, a.timeout,
                               copy=(src, roots))
                keep(res, n, "copy", r, stamp, results, save)
        if shutil.which("strace"):
            env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID")}
            env["HOME"] = str(f.home)
            for tool, _ in variants(tools, n)[::1]:
                if tool not in opens:
                    opens[tool] = opens_of(copy_argv(tool, n, f, f.port, cfg, src, a.tpush), env, src, f)
                    clear_copies(roots)
            for res in results:
                if res["scenario"] == "copy" and res["n"] == n and res["tool"] in opens:
                    res["opens"] = opens[res["tool"]]
            save()
    finally:
        BenchSshd.chroots = {}
        if f is not None:
            f.stop()
        if mounted:
            subprocess.run(["umount", str(base)], check=False)
        shutil.rmtree(base, ignore_errors=True)


def fmt_mib(b):
    return "n/a" if b is None else f"{b / 2**20:.1f} MiB"


def machine_meta(a, started, loadavg_start) -> dict:
    cpu = "?"
    for ln in Path("/proc/cpuinfo").read_text().splitlines():
        if ln.startswith("model name"):
            cpu = ln.split(":", 1)[1].strip()
            break
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src", "include"],
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        commit, dirty = "?", ""
    ver = lambda c: (subprocess.run(c, capture_output=True, text=True).stdout.strip() or "?").splitlines()[0]
    return {
        "cpu": cpu, "ncpu": os.cpu_count(), "kernel": platform.release(),
        "started": started, "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "commit": commit + (" (src/ modified)" if dirty else ""),
        "command": a.command_line or "bash bench/run.sh",
        "loadavg_start": loadavg_start,
        "tpush": ver([a.tpush, "--version"]),
        "memory_method": "cgroup v1 memory.max_usage_in_bytes" if memory_cgroup_base() else "none",
        "delay_ms": a.delay_ms,
    }


def write_results(path: Path, meta: dict, results: list[dict]) -> None:
    import results_md
    path.write_text(results_md.render(meta, results))


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
