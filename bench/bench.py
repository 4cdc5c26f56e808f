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
import ctypes
import json
import os
import platform
import re
import select
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

LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNET = 0x40000000
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

    # Every scenario: the listener is made a child subreaper, so a process a session leaves
    # behind (tpush's remote watchdog outlives the command it watches by a few ms) is
    # reparented to, and reaped by, the listener instead of init: its CPU stays in the
    # listener's cutime/cstime, in the sshd column (until 2026-11-27 only the repeat
    # scenario did this, and tpush's rows missed ~2.4 ms per worker there).  The repeat
    # scenario also puts the listener (with all it starts) in a cpuacct cgroup, a second
    # count of the same CPU that needs no process tree at all.
    # `netns`: a network namespace (its /run/netns path) the sshd runs in: the far side of
    # the IP delay line (DelayLine).
    subreaper = True
    cpu_cgroup: Path | None = None
    netns: str | None = None

    def start(self, ready_address: str, timeout: float = 30):
        if not self.subreaper and self.cpu_cgroup is None and self.netns is None:
            return super().start(ready_address, timeout)
        orig, cg, sub, ns = farmmod._raise_nofile, self.cpu_cgroup, self.subreaper, self.netns

        def preexec():  # Sshd.start's preexec_fn is the module's _raise_nofile, looked up at call time
            orig()
            if ns is not None:
                fd = os.open(ns, os.O_RDONLY)
                if LIBC.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns {ns}")
                os.close(fd)
            if sub:
                LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
            if cg is not None:
                (cg / "cgroup.procs").write_text(str(os.getpid()))
        farmmod._raise_nofile = preexec
        try:
            return super().start(ready_address, timeout)
        finally:
            farmmod._raise_nofile = orig


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

def cgroup_base(controller: str, probe: str) -> Path | None:
    """This process's cgroup v1 directory of `controller`, if it has the file `probe`."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        if controller in ctrls.split(","):
            base = Path("/sys/fs/cgroup") / controller / path.lstrip("/")
            return base if (base / probe).exists() else None
    return None


def memory_cgroup_base() -> Path | None:
    return cgroup_base("memory", "memory.max_usage_in_bytes")


class BenchCgroup:
    """A cgroup v1 group of `controller` made for one measurement (none where the
    controller is not mounted); a child process joins it through join_fn()."""

    def __init__(self, controller: str, probe: str, tag: str):
        base = cgroup_base(controller, probe)
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

    def remove(self, timeout: float = 10) -> None:
        if self.path is None:
            return
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)
        print(f"bench: cgroup {self.path} not removed (processes left in it)", file=sys.stderr)


class MemCgroup(BenchCgroup):
    def __init__(self, tag: str):
        super().__init__("memory", "memory.max_usage_in_bytes", tag)

    def peak(self) -> int | None:
        if self.path is None:
            return None
        return int((self.path / "memory.max_usage_in_bytes").read_text())


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
             bastion: "Bastion | None" = None, command: tuple | None = None, relay_pid: int | None = None) -> dict:
    """One timed run. `command`: (argv, env) given by the scenario instead of the tool's own;
    `relay_pid`: the delay relay the run goes through, whose CPU (on the same cores) is counted."""
    if copy:
        src, roots = copy
        argv, extra_env = copy_argv(tool, fan, f, port, cfg, src, tpush_bin), {}
    elif command:
        argv, extra_env = command
    else:
        argv, extra_env = tool_argv(tool, fan, f, port, cfg, remote_command(scenario), tpush_bin,
                                    jump=bastion.jump if bastion else None)
    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID")}
    env.update(extra_env)
    if command:
        env = dict(extra_env)
    env["HOME"] = str(f.home)  # tpush reads $HOME/.ssh; OpenSSH gets everything from -F cfg
    out_path = workdir / f"{tag}.out"
    err_path = workdir / f"{tag}.err"
    wait_sessions_gone(f)
    if bastion:
        bastion.wait_sessions_gone()
    cg = MemCgroup(tag)
    # Every client process's CPU, reaped by the tool or not: ssh leaves its ProxyCommand
    # (a gcloud start-iap-tunnel) to be reaped by init, out of the tool's rusage.
    ccg = CpuCgroup(tag)
    join_mem = cg.join_fn()

    def join() -> None:
        if ccg.path is not None:
            (ccg.path / "cgroup.procs").write_text(str(os.getpid()))
        join_mem()

    s0 = sshd_cpu(f.sshd.pid) + (sshd_cpu(bastion.sshd.pid) if bastion else 0)
    r0 = proc_cpu(relay_pid) if relay_pid else None
    logins0 = bastion.logins() if bastion else 0
    with open(out_path, "wb") as outf, open(err_path, "wb") as errf:
        cat = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=outf)
        t0 = time.monotonic()
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=cat.stdin,
                             stderr=errf, preexec_fn=join, close_fds=True)
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
    cpu_all = ccg.usage_when_empty()
    ccg.remove()
    wait_sessions_gone(f)
    if bastion:
        bastion.wait_sessions_gone()
    s1 = sshd_cpu(f.sshd.pid) + (sshd_cpu(bastion.sshd.pid) if bastion else 0)
    r1 = proc_cpu(relay_pid) if relay_pid else None
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
    cpu_reaped = ru.ru_utime + ru.ru_stime
    res = {"tool": tool, "fan": fan, "scenario": scenario, "wall": wall,
           "cpu": max(cpu_reaped, cpu_all or 0.0), "cpu_reaped": cpu_reaped, "peak": peak, "sshd_cpu": s1 - s0,
           "rc": p.returncode, "ok": ok, "note": note,
           "err_tail": err_path.read_text(errors="replace")[-300:] if not ok else ""}
    if bastion:
        res["bastion_logins"] = bastion.logins() - logins0
    if r0 is not None and r1 is not None:
        res["relay_cpu"] = r1 - r0
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


# --------------------------------------------------------------------------- IAP

IAP_TOOLS = ("tpush", "ssh", "pdsh")


def run_iap(a, n: int, tools: list[str], work: Path, results: list[dict], save, stamp: dict) -> None:
    """The iap scenario: `true` on the N workers of one TPU slice reached through IAP, with
    tests/farm/gcloud standing in for gcloud (its start-iap-tunnel relays to the farm; every
    call first burns the CPU a real gcloud spends starting). tpush --tunnel-through-iap (one
    tunnel, the slice's first worker a jump host to the others) against what gcloud's own
    `tpu-vm ssh --worker=all --tunnel-through-iap` does: one ssh per worker, each with a
    `gcloud compute start-iap-tunnel` ProxyCommand (xargs -P N), and pdsh over the same
    ssh_config. Counted per run: gcloud processes started (the stand-in's calls.log)."""
    sys.path.insert(0, str(ROOT / "tests" / "farm"))
    from fake_gcloud import FakeGcloud
    f = start_farm(work / f"farm-iap-{n}", n)
    try:
        g = FakeGcloud(work / f"gcloud-iap-{n}")
        names = g.tpu("pod", f.addresses)
        base = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "TPUSH_PERSIST")}
        base.update(HOME=str(f.home), TPUSH_PERSIST="0")
        env = g.env(base, iap_port=f.port)
        # the anchors' ssh_config: each worker an alias whose ProxyCommand is its IAP tunnel
        cfg = f.dir / "ssh_config_iap"
        head = ssh_config(f, f.port, "ssh_config_iap_base").read_text()
        blocks = "".join(f"Host w{k}\n  HostName {addr}\n  ProxyCommand {g.proxy_command(names[k])}\n"
                         for k, addr in enumerate(f.addresses))
        cfg.write_text(blocks + head)
        aliases = f.dir / "hosts-iap"
        aliases.write_text("".join(f"w{k}\n" for k in range(n)))
        tpu = ["-t", "pod", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap", "-p", str(f.port)]
        # the TPU's description is cached by a first, untimed call, as after any earlier run
        subprocess.run([a.tpush, *tpu, "workers"], env=env, capture_output=True, timeout=600, check=True)
        argvs = {
            "tpush": [a.tpush, *tpu, "true"],
            "ssh": ["sh", "-c", f'xargs -P {n} -I@ ssh -F "$1" @ true < "$2"', "ssh-fanout", str(cfg), str(aliases)],
            "pdsh": ["pdsh", "-R", "ssh", "-S", "-f", str(n), "-w", "^" + str(aliases), "true"],
        }
        extra = {"pdsh": {"PDSH_SSH_ARGS_APPEND": f"-F {cfg}"}}
        for r in range(a.runs):
            for tool in tools:
                calls = len(g.calls("start-iap-tunnel"))
                res = run_once(tool, n, "true", f, f.port, cfg, a.tpush, work, f"{n}-iap-{tool}-{r}", a.timeout,
                               command=(argvs[tool], {**env, **extra.get(tool, {})}))
                res["gclouds"] = len(g.calls("start-iap-tunnel")) - calls
                end = time.monotonic() + 60  # tunnels stopped with the run
                while g.tunnels.running() and time.monotonic() < end:
                    time.sleep(0.05)
                keep(res, n, "iap", r, stamp, results, save)
    finally:
        f.stop()


# --------------------------------------------------------------------------- delay lines

def start_relay(listen_port: int, target_port: int, delay: float, log: Path) -> subprocess.Popen:
    p = subprocess.Popen(["/usr/bin/python3", str(HERE / "delayrelay.py"), "--listen-port",
                          str(listen_port), "--target-port", str(target_port), "--delay", str(delay)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=open(log, "wb"),
                         start_new_session=True, preexec_fn=farmmod._raise_nofile)
    line = p.stdout.readline()  # "ready"
    if not line.startswith(b"ready"):
        raise RuntimeError(f"delay relay did not start: {log.read_text()[-500:]}")
    return p


class FarView:
    """The farm as the tools see it across the IP delay line: the same client home, keys and
    known_hosts, its workers at 10.201.A.B, served by the sshd in the far namespace."""

    def __init__(self, f: farmmod.Farm, sshd: farmmod.Sshd, addresses: list[str], directory: Path):
        self._farm, self.sshd, self.addresses, self.dir = f, sshd, addresses, directory

    def __getattr__(self, name):
        return getattr(self._farm, name)


def ip(*args: str, stdin: str | None = None) -> None:
    r = subprocess.run(["ip", *args], input=stdin, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args[:6])}: {r.stderr.strip()[-300:]}")


class DelayLine:
    """DELAY seconds each way between the tools and a farm, in one of two kinds:

    * "tun" (the default as root): bench/tundelay.py holds every IP packet between two TUN
      devices, one of them in a network namespace of the bench's own (NS) where a second sshd
      serves the farm's workers at 10.201.A.B (for 127.0.A.B), with the farm's host keys and
      authorized_keys. TCP's connect pays the round trip too, as on a real network, so a
      client can see round trips from it (tpush's handshake pacing does).
    * "relay": bench/delayrelay.py, a TCP relay on the farm's own addresses that holds each
      stream's bytes; its listener answers the connect at once (no round trip there). The
      rows measured before 2026-11-30 used it.

    `farm` is what the tools' runs are pointed at (a FarView, or the farm itself), `port` its
    sshd port; `pid` the delay line's process, whose CPU shares the cores and is counted."""

    NS, NEAR, FAR, CLIENT = "tpush-bench", "tpbench0", "tpbench1", "10.201.0.1"

    def __init__(self, kind: str, f: farmmod.Farm, delay: float, work: Path, tag: str,
                 cpu_cgroup: Path | None = None):
        self.kind, self.far_sshd = kind, None
        log = work / f"delay-{tag}.log"
        if kind == "relay":
            self.port, self.farm = farmmod.free_port(), f
            self.proc = start_relay(self.port, f.port, delay, log)
            addresses = f.addresses
        elif kind == "tun":
            self.port = f.port
            self.proc = subprocess.Popen(
                ["/usr/bin/python3", str(HERE / "tundelay.py"), "--delay", str(delay),
                 "--near", self.NEAR, "--far", self.FAR],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=open(log, "wb"),
                start_new_session=True)
            if not self.proc.stdout.readline().startswith(b"ready"):
                raise RuntimeError(f"delay line did not start: {log.read_text()[-500:]}")
            try:
                addresses = self._far_side(f, work / f"far-{tag}", cpu_cgroup)
            except BaseException:
                self.stop()
                raise
        else:
            raise ValueError(f"unknown delay line '{kind}' (tun or relay)")
        with open(f.known_hosts, "a") as kh:
            kh.write(farmmod.known_hosts_lines(addresses, self.port, f.host_key_files))

    def _far_side(self, f: farmmod.Farm, directory: Path, cpu_cgroup: Path | None) -> list[str]:
        subprocess.run(["ip", "netns", "del", self.NS], capture_output=True)  # one a killed bench left
        ip("netns", "add", self.NS)
        ip("link", "set", self.FAR, "netns", self.NS)
        ip("addr", "add", f"{self.CLIENT}/16", "dev", self.NEAR)
        ip("link", "set", self.NEAR, "up")
        ip("-n", self.NS, "link", "set", "lo", "up")
        addresses = ["10.201." + a.split(".", 2)[2] for a in f.addresses]
        ip("-n", self.NS, "-batch", "-", stdin="".join(f"addr add {a}/16 dev {self.FAR}\n" for a in addresses))
        ip("-n", self.NS, "link", "set", self.FAR, "up")
        directory.mkdir(parents=True, exist_ok=True)
        sshd = BenchSshd(directory, "0.0.0.0", f.port, f.authorized_keys, allow_from=self.CLIENT)
        for key in f.host_key_files:  # the farm's host keys: the workers keep their identity
            for src in (Path(key), Path(str(key) + ".pub")):
                shutil.copy2(src, directory / src.name)
        sshd.netns, sshd.cpu_cgroup = f"/run/netns/{self.NS}", cpu_cgroup
        self.far_sshd = sshd.start(addresses[0], timeout=60)
        (directory / "hosts-plain").write_text("".join(a + "\n" for a in addresses))
        self.farm = FarView(f, sshd, addresses, directory)
        return addresses

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if self.far_sshd is not None:
            self.far_sshd.stop()
        name = "delayrelay.py" if self.kind == "relay" else "tundelay.py"
        farmmod.kill_tree(self.proc.pid, name, self.proc)
        if self.kind == "tun":
            subprocess.run(["ip", "netns", "del", self.NS], capture_output=True)


def default_delay_line() -> str:
    """"tun" where the bench may make TUN devices and namespaces (root), else "relay"."""
    return "tun" if os.geteuid() == 0 and os.path.exists("/dev/net/tun") and shutil.which("ip") else "relay"


# --------------------------------------------------------------------------- repeat

REPEAT_TOOLS = ("tpush", "tpush-persist", "pdsh-cp", "pssh-cp")
REPEAT_BASE = {"tpush": "tpush", "tpush-persist": "tpush", "pdsh-cp": "pdsh", "pssh-cp": "pssh"}


class CpuCgroup(BenchCgroup):
    """A cgroup v1 cpuacct group: cpuacct.usage is the CPU time (user+sys) of every process
    that ran in it, live or exited, whoever reaped it.  A cross-check of the /proc counts."""

    def __init__(self, tag: str):
        super().__init__("cpuacct", "cpuacct.usage", tag)

    def usage(self) -> float | None:
        return None if self.path is None else int((self.path / "cpuacct.usage").read_text()) / 1e9

    def usage_when_empty(self, timeout: float = 60) -> float | None:
        """usage() once every process in the group has exited (orphans finish on their own)."""
        if self.path is None:
            return None
        end = time.monotonic() + timeout
        while (self.path / "cgroup.procs").read_text().strip() and time.monotonic() < end:
            time.sleep(0.05)
        return self.usage()


def proc_cpu_parts(pid: int) -> tuple[float, float] | None:
    """(own, reaped children) CPU of a live process (s), None if it is gone: own = every
    thread's, to the ns (its CPU-time clock, clock_getcpuclockid(3); /proc's utime+stime
    are whole 10 ms clock ticks, a bias that adds up over hundreds of processes);
    children = cutime+cstime (kept in ns by the kernel, truncated to ticks on reading)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    try:
        own = time.clock_gettime(((~pid) << 3) | 2)  # MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
    except OSError:
        own = (int(fields[11]) + int(fields[12])) / CLK
    return own, (int(fields[13]) + int(fields[14])) / CLK


def proc_cpu(pid: int) -> float | None:
    """Own + reaped children's CPU of a live process (s), None if it is gone."""
    parts = proc_cpu_parts(pid)
    return None if parts is None else parts[0] + parts[1]


def sshd_tree_cpu(pid: int) -> float:
    """CPU of the farm's sshd tree so far: the listener's own and its reaped children's,
    plus the same for every live descendant (proc_cpu).  Kept
    sessions live across runs, so what they spend is only in their own /proc entries
    until they exit; a process is in exactly one of these terms (its own entry while
    alive, its reaper's cutime/cstime once reaped)."""
    return sum(sshd_tree_parts(pid).values())


def sshd_tree_parts(pid: int) -> dict[str, float]:
    """sshd_tree_cpu in four parts: the listener's own CPU, its reaped children's (all
    of a fresh run's sessions; in a run on kept sessions, only what sessions left behind,
    reparented to the subreaper listener: tpush's remote watchdogs), the live descendants'
    own CPU (kept sessions serving channels) and their reaped children's (the remote
    commands' shells)."""
    out = dict.fromkeys(("listener_own", "listener_children", "live_own", "live_children"), 0.0)
    lp = proc_cpu_parts(pid) or (0.0, 0.0)
    out["listener_own"], out["listener_children"] = lp
    for d in farmmod.descendants(pid):
        dp = proc_cpu_parts(d)
        if dp is not None:
            out["live_own"] += dp[0]
            out["live_children"] += dp[1]
    return out


def pids_matching(pred) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            st = farmmod._proc_stat(int(entry))
            if st is not None and st[0] not in ("Z", "X") and pred(farmmod.cmdline(int(entry))):
                out.append(int(entry))
    return out


# What a connection kept by a tpush persist master leaves on the worker besides its sshd
# session process, and keeps while idle: its kept shell (the session's child, waiting for the
# next command: src/ssh/kept_shell.cpp) and its hang-up guardian with its `tail --pid`
# (src/ssh/remote_group.cpp), a child of the kept shell when that started it, else reparented
# to the subreaper listener.
KEPT_SHELL = 'bash -c [ -n "$BASH_VERSION" ] || exit 0'
GUARDIAN = "sh -c trap '' INT TERM HUP; tail --pid="


def wait_sshd_settled(f: farmmod.Farm, sessions: int | None, timeout: float = 30) -> bool:
    """Until everything under the farm's sshd is a kept session at rest: a live direct child
    of the listener named `sshd: USER@...` (no remote command, watchdog or ending session
    left), `sessions` of them when given; for tpush, each with its kept shell, which runs
    no command (has no child but the guardian), and its guardian."""
    end = time.monotonic() + timeout
    while True:
        ds = farmmod.descendants(f.sshd.pid)
        procs = {d: (farmmod._proc_stat(d), farmmod.cmdline(d)) for d in ds}
        parents = {st[1] for st, c in procs.values() if st is not None and not c.startswith(GUARDIAN)}

        def command(pid: int) -> str:
            return procs.get(pid, (None, ""))[1]

        def session(pid: int) -> bool:
            st, c = procs.get(pid, (None, ""))
            return st is not None and st[1] == f.sshd.pid and c.startswith("sshd: ") and "@" in c

        def at_rest(pid: int) -> bool:
            st, c = procs[pid]
            if st is None or st[0] in ("Z", "X"):
                return False
            if session(pid):
                return True
            if c.startswith(KEPT_SHELL):
                return session(st[1]) and pid not in parents
            if c.startswith(GUARDIAN):
                return st[1] == f.sshd.pid or command(st[1]).startswith(KEPT_SHELL)
            if c.startswith("tail --pid="):
                return command(st[1]).startswith(GUARDIAN)
            return False

        if all(at_rest(d) for d in ds) and (sessions is None or sum(map(session, ds)) == sessions):
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.02)


def repeat_argv(tool: str, n: int, f: farmmod.Farm, port: int, cfg: Path, cmd: str,
                tpush_bin: str) -> tuple[list[str], dict[str, str]]:
    argv, env = tool_argv(REPEAT_BASE[tool], n, f, port, cfg, cmd, tpush_bin)
    if tool == "tpush-persist":
        argv[-1:-1] = ["--persist", "10m"]
    return argv, env


def control_master_config(f: farmmod.Farm, port: int, cpdir: Path, name: str) -> Path:
    """The anchors' config with OpenSSH connection sharing: ControlMaster auto, ControlPath
    in a private directory, ControlPersist 10m."""
    cfg = ssh_config(f, port, name)
    text = cfg.read_text()
    old = "  ControlMaster no\n  ControlPath none\n"
    assert old in text
    cfg.write_text(text.replace(old, f"  ControlMaster auto\n  ControlPath {cpdir}/%C\n  ControlPersist 10m\n"))
    return cfg


class RepeatPass:
    """One tool's 10 successive runs on one farm and network, and what it keeps between them."""

    def __init__(self, a, n: int, scen: str, tool: str, f: farmmod.Farm, port: int, rt: Path,
                 work: Path, scg: CpuCgroup):
        self.a, self.n, self.scen, self.tool, self.f, self.port, self.rt = a, n, scen, tool, f, port, rt
        self.work, self.scg = work, scg
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "TPUSH_PERSIST")}
        self.env["HOME"] = str(f.home)
        self.env["XDG_RUNTIME_DIR"] = str(rt)  # private, 0700: its masters collide with nothing
        self.cpdir = None
        self.cfg = ssh_config(f, port, f"ssh_config_{scen}")
        self.masters = None  # predicate on a command line: this pass's background master(s)
        if tool == "tpush-persist":
            self.masters = lambda c, d=str(rt) + "/": "--persist-master" in c and d in c
        elif tool.endswith("-cp"):
            self.cpdir = Path(f"/tmp/tpb-cm-{os.getpid()}-{n}-{scen[-3:]}-{tool[:4]}")
            self.cpdir.mkdir(mode=0o700)
            self.cfg = control_master_config(f, port, self.cpdir, f"ssh_config_{scen}_{tool}")
            self.masters = lambda c, d=str(self.cpdir) + "/": c.startswith("ssh") and d in c
        self.kept = self.masters is not None
        self.ccg = CpuCgroup(f"client-{n}-{scen}-{tool}")

    def master_cpu(self) -> dict[int, float]:
        if self.masters is None:
            return {}
        return {p: c for p in pids_matching(self.masters) if (c := proc_cpu(p)) is not None}

    def settle(self, ok: bool) -> bool:
        if self.kept:
            return wait_sshd_settled(self.f, self.n if ok else None)
        wait_sessions_gone(self.f)
        return not farmmod.descendants(self.f.sshd.pid)

    def run(self, r: int) -> dict:
        argv, extra = repeat_argv(self.tool, self.n, self.f, self.port, self.cfg, "true", self.a.tpush)
        env = dict(self.env, **extra)
        tag = f"{self.n}-{self.scen}-{self.tool}-{r}"
        out_path, err_path = self.work / f"{tag}.out", self.work / f"{tag}.err"
        m0 = self.master_cpu()
        p0, sg0, cg0 = sshd_tree_parts(self.f.sshd.pid), self.scg.usage(), self.ccg.usage()
        with open(out_path, "wb") as outf, open(err_path, "wb") as errf:
            t0 = time.monotonic()
            p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=outf, stderr=errf,
                                 preexec_fn=self.ccg.join_fn(), close_fds=True)
            timed_out = False
            while True:
                pid, status, ru = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > t0 + self.a.timeout:
                    timed_out = True
                    farmmod.kill_tree(p.pid, argv[0])
                    pid, status, ru = os.wait4(p.pid, 0)
                    break
                time.sleep(0.002)
            wall = time.monotonic() - t0
            p.returncode = os.waitstatus_to_exitcode(status)
        out = out_path.read_text(errors="replace")
        ok, note = verify(REPEAT_BASE[self.tool], "true", out, p.returncode, self.f.addresses)
        if timed_out:
            ok, note = False, f"killed after {self.a.timeout:.0f}s"
        settled = self.settle(ok)
        m1 = self.master_cpu()
        p1, sg1, cg1 = sshd_tree_parts(self.f.sshd.pid), self.scg.usage(), self.ccg.usage()
        parts = {k: p1[k] - p0[k] for k in p1}
        # a master alive before and after: its CPU during the run; one born during the run
        # (the first run): all of its CPU
        mcpu = sum(c - m0.get(pid, 0.0) for pid, c in m1.items())
        if self.kept and not m1:
            note = "; ".join(x for x in (note, "no master after the run") if x)
        if not settled:
            note = "; ".join(x for x in (note, "sshd not settled") if x)
        if ok:
            out_path.unlink()
        tool_cpu = ru.ru_utime + ru.ru_stime
        return {"tool": self.tool, "fan": self.n, "kind": "run", "wall": wall,
                "cpu": tool_cpu + mcpu, "cpu_tool": tool_cpu, "cpu_masters": mcpu, "masters": len(m1),
                "sshd_cpu": sum(parts.values()), "sshd_parts": parts,
                "client_cg": None if cg0 is None else cg1 - cg0,
                "sshd_cg": None if sg0 is None else sg1 - sg0,
                "sessions": len(farmmod.descendants(self.f.sshd.pid)),
                "rc": p.returncode, "ok": ok, "note": note,
                "err_tail": err_path.read_text(errors="replace")[-300:] if not ok else ""}

    def first_output(self, i: int) -> dict:
        """Spawn to the first byte on stdout of `echo x` on every worker (stdout is a pipe)."""
        argv, extra = repeat_argv(self.tool, self.n, self.f, self.port, self.cfg, "echo x", self.a.tpush)
        env = dict(self.env, **extra)
        t0 = time.monotonic()
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        fd = p.stdout.fileno()
        first = None
        if select.select([fd], [], [], self.a.timeout)[0]:
            first = time.monotonic() - t0
        try:
            out, _ = p.communicate(timeout=self.a.timeout)
        except subprocess.TimeoutExpired:
            farmmod.kill_tree(p.pid, argv[0])
            out = b""
        wall = time.monotonic() - t0
        lines = out.decode(errors="replace").splitlines()
        got = sum(1 for ln in lines if ln == "x" or ln.endswith(": x"))
        ok = p.returncode == 0 and got == self.n and first is not None
        self.settle(ok)
        return {"tool": self.tool, "fan": self.n, "kind": "first_output", "first_byte": first, "wall": wall,
                "rc": p.returncode, "ok": ok, "note": "" if ok else f"exit {p.returncode}, {got} of {self.n} x",
                "sample": i}

    def idle(self, seconds: float) -> dict:
        """What the kept sessions cost the farm while nothing runs: the sshd tree's CPU over
        `seconds` after the runs (tpush's master sends keepalives, each kept connection's
        guardian polls its sshd once a second; ControlPersist masters send nothing)."""
        self.settle(True)
        p0, sg0 = sshd_tree_parts(self.f.sshd.pid), self.scg.usage()
        time.sleep(seconds)
        p1, sg1 = sshd_tree_parts(self.f.sshd.pid), self.scg.usage()
        return {"tool": self.tool, "fan": self.n, "kind": "idle", "seconds": seconds, "ok": True, "note": "",
                "sshd_cpu": sum(p1[k] - p0[k] for k in p1), "sshd_cg": None if sg0 is None else sg1 - sg0}

    def end(self) -> None:
        """End this pass's masters (tpush disconnect / SIGTERM to OpenSSH's), then wait until
        the farm has no session left."""
        if self.tool == "tpush-persist":
            hosts = str(self.f.dir / "hosts-plain")
            d = subprocess.run([self.a.tpush, "-H", hosts, "-p", str(self.port), "disconnect"], env=self.env,
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
            print(f"bench: {self.tool} disconnect: exit {d.returncode}: {d.stderr.strip()[-200:]}",
                  file=sys.stderr, flush=True)
        if self.masters is not None:
            end_masters(self.masters)
        wait_sessions_gone(self.f)
        self.ccg.remove()
        if self.cpdir is not None:
            shutil.rmtree(self.cpdir, ignore_errors=True)


def end_masters(pred, timeout: float = 15) -> None:
    """SIGTERM to every live process `pred` accepts (by PID, re-checked), SIGKILL after
    `timeout`."""
    end = time.monotonic() + timeout
    sig = signal.SIGTERM
    while True:
        pids = pids_matching(pred)
        if not pids:
            return
        if time.monotonic() > end:
            sig = signal.SIGKILL
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
        if sig == signal.SIGKILL and time.monotonic() > end + 5:
            return


def run_repeat(a, n: int, tools: list[str], work: Path, results: list[dict], save, stamp: dict) -> None:
    """The repeat scenario: `true` run a.repeat_runs times in a row by each tool, on loopback
    and through the delay relay; tpush --persist and the anchors with ControlPersist keep
    their sessions between runs."""
    rt = Path(f"/tmp/tpb-rt-{os.getpid()}")  # XDG_RUNTIME_DIR of the tpush runs
    rt.mkdir(mode=0o700, exist_ok=True)
    rt.chmod(0o700)
    scg = CpuCgroup(f"sshd-repeat-{n}")
    BenchSshd.subreaper, BenchSshd.cpu_cgroup = True, scg.path
    try:
        f = start_farm(work / f"farm-repeat-{n}", n)
    finally:
        BenchSshd.cpu_cgroup = None
    line = None
    nets = [x for x in a.repeat_nets.split(",") if x]
    fo_ns = [int(x) for x in a.first_output_n.split(",") if x]
    try:
        plan = []
        if "loopback" in nets:
            plan.append(("repeat", f, f.port, 0.0, None))
        if "relay" in nets:
            line = DelayLine(a.delay_line, f, a.delay_ms / 1000, work, f"repeat-{n}", cpu_cgroup=scg.path)
            plan.append(("repeat-latency", line.farm, line.port, 2 * a.delay_ms, line.kind))
        for scen, target, port, rtt, kind in plan:
            for tool in tools:
                rp = RepeatPass(a, n, scen, tool, target, port, rt, work, scg)
                try:
                    for r in range(a.repeat_runs):
                        res = rp.run(r)
                        keep_repeat(dict(res, delay_line=kind), n, scen, r, rtt, stamp, results, save)
                    if rp.kept and a.repeat_idle > 0:
                        keep_repeat(dict(rp.idle(a.repeat_idle), delay_line=kind), n, scen, 0, rtt, stamp,
                                    results, save)
                    if n in fo_ns:
                        for i in range(a.first_output_samples):
                            res = rp.first_output(i)
                            keep_repeat(dict(res, delay_line=kind), n, scen, i, rtt, stamp, results, save)
                finally:
                    rp.end()
    finally:
        end_masters(lambda c, d=str(rt) + "/": "--persist-master" in c and d in c)
        end_masters(lambda c, d=f"/tmp/tpb-cm-{os.getpid()}-": c.startswith("ssh") and d in c)
        if line is not None:
            line.stop()
        f.stop()
        scg.remove()
        shutil.rmtree(rt, ignore_errors=True)


def keep_repeat(res: dict, n: int, scen: str, run: int, rtt: float, stamp: dict, results: list[dict], save) -> None:
    res.update(n=n, scenario=scen, run=run, rtt_ms=rtt,
               load=float(Path("/proc/loadavg").read_text().split()[0]), **stamp)
    results.append(res)
    net = f"{rtt:.0f} ms RTT" if rtt else "loopback"
    status = "ok" if res["ok"] else "FAIL " + res["note"]
    if res["kind"] == "idle":
        cg = "n/a" if res["sshd_cg"] is None else f"{res['sshd_cg']:.3f}"
        print(f"bench: N={n} repeat {net} {res['tool']:13} idle {res['seconds']:.0f}s: sshd {res['sshd_cpu']:.3f}s "
              f"(cgroup {cg})", file=sys.stderr, flush=True)
    elif res["kind"] == "first_output":
        fb = "none" if res["first_byte"] is None else f"{1000 * res['first_byte']:.1f} ms"
        print(f"bench: N={n} repeat {net} {res['tool']:13} first output {run}: {fb} "
              f"(wall {res['wall']:.3f}s) {status}", file=sys.stderr, flush=True)
    else:
        cg = lambda v: "n/a" if v is None else f"{v:.3f}"
        print(f"bench: N={n} repeat {net} {res['tool']:13} run {run}: wall {res['wall']:.3f}s "
              f"cpu {res['cpu']:.3f}s (tool {res['cpu_tool']:.3f} + masters {res['cpu_masters']:.3f}, "
              f"cgroup {cg(res['client_cg'])}) sshd {res['sshd_cpu']:.3f}s (cgroup {cg(res['sshd_cg'])}) "
              f"sessions {res['sessions']} {status}", file=sys.stderr, flush=True)
    save()


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
    ap.add_argument("--iap-n", default="64")
    ap.add_argument("--iap-tools", default=",".join(IAP_TOOLS))
    ap.add_argument("--repeat-n", default=None, help="N of the repeat scenario (default: --n)")
    ap.add_argument("--repeat-runs", type=int, default=10)
    ap.add_argument("--repeat-tools", default=",".join(REPEAT_TOOLS))
    ap.add_argument("--repeat-nets", default="loopback,relay")
    ap.add_argument("--repeat-idle", type=float, default=20,
                    help="seconds the kept sessions are watched idle after the runs (0: not)")
    ap.add_argument("--first-output-n", default="64")
    ap.add_argument("--first-output-samples", type=int, default=5)
    ap.add_argument("--delay-ms", type=float, default=25.0)
    ap.add_argument("--delay-line", choices=("tun", "relay"), default=default_delay_line(),
                    help="how latency and repeat-latency delay packets (see DelayLine; default tun as root)")
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
    if "iap" in scen:
        for n in (int(x) for x in a.iap_n.split(",") if x):
            run_iap(a, n, [t for t in a.iap_tools.split(",") if t], work, results, save, stamp)
    if "repeat" in scen:
        for n in repeat_ns(a):
            run_repeat(a, n, [t for t in a.repeat_tools.split(",") if t], work, results, save, stamp)

    all_ns = sorted((set(ns) if {"true", "lines"} & set(scen) else set()) |
                    (set(lat_ns) if "latency" in scen else set()))
    for n in all_ns:
        fdir = work / f"farm-{n}"
        f = start_farm(fdir, n)
        line = None
        try:
            cfg = ssh_config(f, f.port, "ssh_config")
            plan = []
            for s in ("true", "lines"):
                if s in scen and n in ns:
                    plan.append((s, f, f.port, cfg))
            if "latency" in scen and n in lat_ns:
                line = DelayLine(a.delay_line, f, a.delay_ms / 1000, work, str(n))
                plan.append(("latency", line.farm, line.port, ssh_config(line.farm, line.port, "ssh_config_latency")))
            for scenario, target, port, c in plan:
                vs = variants(tools, n)
                for r in range(a.runs):
                    # interleave tools within each repetition so machine noise spreads evenly
                    for tool, fan in vs:
                        tag = f"{n}-{scenario}-{tool}-{fan or 'def'}-{r}"
                        latency = scenario == "latency"
                        res = run_once(tool, fan, "true" if latency else scenario,
                                       target, port, c, a.tpush, work, tag, a.timeout,
                                       relay_pid=line.pid if latency else None)
                        if latency:
                            res["delay_line"] = line.kind
                        keep(res, n, scenario, r, stamp, results, save)
        finally:
            if line is not None:
                line.stop()
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
    if "iap" in scen:
        rows |= {(int(n), "iap", t) for n in a.iap_n.split(",") if n for t in a.iap_tools.split(",") if t}
    if "repeat" in scen:
        nets = a.repeat_nets.split(",")
        rows |= {(n, s, t) for n in repeat_ns(a) for t in a.repeat_tools.split(",") if t
                 for s, net in (("repeat", "loopback"), ("repeat-latency", "relay")) if net in nets}
    return rows


def repeat_ns(a) -> list[int]:
    return [int(x) for x in (a.repeat_n or a.n).split(",") if x]


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
