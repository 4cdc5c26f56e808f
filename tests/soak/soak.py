#!/usr/bin/python3
"""Chaos soak for tpush: many workers, many rounds, faults injected while output streams.

Each round runs ONE tpush (`--json`) on every worker of a loopback farm served by several
sshds; every worker streams numbered, checksummed lines (tests/soak/stream.sh). While
they stream, at seeded random workers and times, the soak:

    kill    SIGKILLs the worker's session sshd (`sshd: USER@notty`)     --kill-pct (10)
    stop    SIGSTOPs it (a frozen host; SIGCONT after the round)        --stop-pct (5)
    reset   nft `reject with tcp reset` both ways on its connection      --net-pct (5),
    drop    nft `drop` both ways on its connection                       half each
    restart restarts one sshd (listener only, as `systemctl restart ssh`), down for
            --restart-down seconds while other workers are still connecting

and checks, per round: tpush exits by itself within a bound; every worker has exactly
one outcome (worker objects and summary agree); every line is whole and valid, per
stream in order with no gap; a partial line (`"newline":false`) only as the last line of
a faulted worker; faulted workers fail (and are detected within 3 x --alive-interval
plus a margin), untouched workers succeed with every line; a worker of the restarted
sshd either succeeds whole or is unreachable with no output; no worker runs past its
deadlines; every fault really happened (the killed session existed and is gone, the
stopped one was in state T, the nft rules matched packets); no sshd session or remote
command is left behind. tpush's fds and RSS are sampled every 100 ms; after the last
round, its peaks are compared with round 1's.

Needs root (nft, signalling sshd sessions). Run with Debian's /usr/bin/python3:

    tests/soak/soak.py --tpush build/tpush [--workers 512] [--rounds 20] [--seed N]

Exit 0 when every round passed, 1 when a check failed, 2 on a usage/setup problem.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "farm"))
sys.path.insert(0, str(HERE))

import faults as faults_mod  # noqa: E402
import farm as farm_mod  # noqa: E402
from farm import cmdline  # noqa: E402
from soakfarm import NftTable, SoakFarm, proc_state, serves, tables_named  # noqa: E402

STREAM_SCRIPT = HERE / "stream.sh"
LINE = re.compile(r"L (\d+\.\d+\.\d+\.\d+) (\d{5}) ([a-z]{64}) (\d{7}) E")
TABLE_PREFIX = "tpush_soak_"
KINDS = ("kill", "stop", "reset", "drop")


# ---------------------------------------------------------------------------
# The lines stream.sh prints

def checksum(addr: str, seq: int) -> int:
    o = [int(x) for x in addr.split(".")]
    h = o[1] * 65536 + o[2] * 256 + o[3]
    return (h * 7919 + seq * 104729) % 9999991


def expected_line(addr: str, seq: int) -> str:
    return f"L {addr} {seq:05d} {chr(97 + seq % 26) * 64} {checksum(addr, seq):07d} E"


def stream_of(seq: int) -> str:
    return "stderr" if seq % 10 == 9 else "stdout"


def stream_seq(stream: str, pos: int) -> int:
    """The sequence number of a stream's pos-th line (stderr: 9, 19, ...; stdout the rest)."""
    return 10 * pos + 9 if stream == "stderr" else pos + pos // 9


# ---------------------------------------------------------------------------

@dataclass
class Config:
    tpush: Path
    workers: int
    rounds: int
    seed: int
    sshds: int
    lines: int
    interval: float
    connect_timeout: int
    alive_interval: int
    command_timeout: int
    kill_pct: float
    stop_pct: float
    net_pct: float
    restart_down: float
    restart_mode: str
    farm_nice: int
    tpush_nice: int
    detect_margin: float
    hang_margin: float
    drain_seconds: float
    fd_tolerance: int
    rss_tolerance_kib: int
    workdir: Path
    keep: bool
    report: Path | None
    markdown: Path | None

    @property
    def stream_seconds(self) -> float:
        return self.lines * self.interval

    @property
    def detect_limit(self) -> float:
        """Fault to outcome: the silence rule's 3 intervals, one tick, plus a margin."""
        return 3 * self.alive_interval + self.detect_margin

    @property
    def worker_limit(self) -> float:
        """A worker's own deadlines: connect, -u, the 2 s stop grace, ticks."""
        return self.connect_timeout + self.command_timeout + 2 + 1

    @property
    def round_limit(self) -> float:
        """tpush must exit by itself within this: a worker's deadlines, plus the time the
        last worker may wait for its turn to connect (128 at a time), plus a margin."""
        return self.worker_limit + self.hang_margin

    @property
    def long_lines(self) -> int:
        """Lines a faulted worker prints: for 3/4 of -u, so it is still streaming when its
        fault comes (due at most 0.6 x the normal stream after its first line reached the
        soak) even on a machine so loaded that tpush's output lags tens of seconds."""
        return int(max(self.lines, 0.75 * self.command_timeout / self.interval))

    def tpush_args(self, hosts_file: Path, plan: Path) -> list[str]:
        cmd = (f"exec bash {shlex.quote(str(STREAM_SCRIPT))} {self.lines} {self.interval} "
               f"{shlex.quote(str(plan))} {self.long_lines}")
        return [str(self.tpush), "--json", "-n", "-H", str(hosts_file),
                "--connect-timeout", str(self.connect_timeout),
                "--alive-interval", str(self.alive_interval),
                "-u", str(self.command_timeout), cmd]


@dataclass
class Fault:
    worker: int
    kind: str
    offset: float                   # seconds after the worker's first line reached us
    state: str = "pending"          # pending, applied, missed
    why: str = ""                   # for missed
    at: float | None = None         # wall-clock time applied (time.time())
    pid: int | None = None          # session pid (kill, stop)
    confirmed: bool = False


@dataclass
class Worker:
    index: int
    label: str
    addr: str
    sshd: int
    want: int = 0                   # lines it prints (LONG for a planned fault)
    first: bool = False             # its P line was seen
    pid: int | None = None
    next_pos: dict = field(default_factory=lambda: {"stdout": 0, "stderr": 0})
    lines: int = 0
    done: bool = False
    partial: list = field(default_factory=list)     # (stream, text)
    outcomes: list = field(default_factory=list)    # worker objects
    errors: list = field(default_factory=list)

    @property
    def ended(self) -> bool:
        return bool(self.outcomes)

    def end_time(self) -> float | None:
        """Wall-clock end of the worker by tpush's own account (started + seconds)."""
        if len(self.outcomes) != 1 or not self.outcomes[0].get("started"):
            return None
        o = self.outcomes[0]
        start = datetime.strptime(o["started"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
        return start.timestamp() + o["seconds"]

    def start_time(self) -> float | None:
        if len(self.outcomes) != 1 or not self.outcomes[0].get("started"):
            return None
        return datetime.strptime(self.outcomes[0]["started"], "%Y-%m-%dT%H:%M:%S.%fZ") \
            .replace(tzinfo=timezone.utc).timestamp()


# While a round runs only two kinds of objects matter: a worker's first line (its session
# pid) and its outcome. They are picked out of tpush's output with one regex per chunk;
# every object is parsed and checked after the round, from the saved output.
LIVE = re.compile(rb'^\{"type":"(?:worker","worker":"([^"]*)"|line","worker":"([^"]*)",'
                  rb'"host":"[^"]*","stream":"stdout","text":"P \S+ (\d+)")', re.M)


class Round:
    def __init__(self, cfg: Config, sf: SoakFarm, number: int):
        self.cfg, self.sf, self.number = cfg, sf, number
        self.rng = random.Random(f"{cfg.seed}/{number}")
        self.dir = cfg.workdir / f"round{number:02d}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.out_path = self.dir / "tpush.jsonl"
        self.plan_path = self.dir / "plan"
        self.workers = [Worker(i, sf.host(i), sf.address(i), sf.sshd_of(i)) for i in range(cfg.workers)]
        self.by_label = {w.label: w for w in self.workers}
        self.lock = threading.Lock()
        self.live_first: dict[int, tuple[float, int]] = {}   # worker -> (monotonic, pid)
        self.live_ended: set[int] = set()
        self.errors: list[str] = []       # round-level problems
        self.summary: dict | None = None
        self.samples: list[tuple] = []    # (wall time, fds, rss_kib, hwm_kib)
        self.faults = self._plan()
        # Odd rounds restart softly while workers still connect, even rounds hard while
        # most of them stream (the trigger: this fraction of the workers streaming).
        self.restart_sshd = self.rng.randrange(sf.count)
        self.restart_hard = {"soft": False, "hard": True}.get(cfg.restart_mode, number % 2 == 0)
        self.restart_when = self.rng.uniform(0.5, 0.9) if self.restart_hard else self.rng.uniform(0.0, 0.4)
        self.restart_info: dict | None = None
        self.restart_error: str | None = None
        self.restarting = False           # a hard restart is killing restart_sshd's sessions
        self.table = NftTable(f"{TABLE_PREFIX}{os.getpid()}_{number}")
        self.stop_event = threading.Event()
        self.events: list[str] = []
        self.t0 = 0.0
        self.stderr = b""
        self.cpu = 0.0                    # tpush's user+system seconds, last sampled
        self.load = [round(x, 1) for x in os.getloadavg()][:1]

    # -- plan ------------------------------------------------------------------------
    def _plan(self) -> list[Fault]:
        n = self.cfg.workers
        order = list(range(n))
        self.rng.shuffle(order)
        counts = [round(n * p / 100) for p in (self.cfg.kill_pct, self.cfg.stop_pct, self.cfg.net_pct)]
        kinds = ["kill"] * counts[0] + ["stop"] * counts[1] + \
                [("reset", "drop")[k % 2] for k in range(counts[2])]
        if len(kinds) > n:
            raise ValueError("fault percentages add up to more than every worker")
        hi = max(0.6, 0.6 * self.cfg.stream_seconds)
        faults = [Fault(order[k], kind, round(self.rng.uniform(0.5, hi), 3)) for k, kind in enumerate(kinds)]
        faulted = {f.worker for f in faults}
        for w in self.workers:
            w.want = self.cfg.long_lines if w.index in faulted else self.cfg.lines
        self.plan_path.write_text("".join(self.workers[f.worker].addr + "\n" for f in faults))
        return faults

    def _event(self, text: str) -> None:
        self.events.append(f"{time.monotonic() - self.t0:7.2f} {text}")

    # -- threads -----------------------------------------------------------------------
    def _read_stdout(self, fd: int) -> None:
        tail = b""
        with open(self.out_path, "wb") as out:
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                out.write(chunk)
                now = time.monotonic()
                data = tail + chunk
                cut = data.rfind(b"\n") + 1
                tail = data[cut:]
                for m in LIVE.finditer(data, 0, cut):
                    if m.group(1) is not None:
                        w = self.by_label.get(m.group(1).decode())
                        if w is not None:
                            with self.lock:
                                self.live_ended.add(w.index)
                    else:
                        w = self.by_label.get(m.group(2).decode())
                        if w is not None:
                            with self.lock:
                                self.live_first.setdefault(w.index, (now, int(m.group(3))))

    def _sample(self, pid: int) -> None:
        while not self.stop_event.is_set():
            try:
                fds = len(os.listdir(f"/proc/{pid}/fd"))
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                return
            vals = {}
            for line in status.splitlines():
                if line.startswith(("VmRSS:", "VmHWM:")):
                    vals[line[:5]] = int(line.split()[1])
            try:
                st = Path(f"/proc/{pid}/stat").read_text()
                f = st[st.rindex(")") + 2:].split()
                self.cpu = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, ValueError, IndexError):
                pass
            if "VmRSS" in vals:
                self.samples.append((time.time(), fds, vals["VmRSS"], vals.get("VmHWM", 0)))
            self.stop_event.wait(0.1)

    def _inject(self) -> None:
        pending = list(self.faults)
        restart_started = False
        while True:
            if self.stop_event.wait(0.02):
                break
            now = time.monotonic()
            for f in self.faults:  # signals not yet seen to act
                if f.state == "applied" and f.kind in ("kill", "stop") and not f.confirmed:
                    f.confirmed = self._took_effect(f, 0)
            with self.lock:
                streaming = len(self.live_first)
                first = dict(self.live_first)
                ended = set(self.live_ended)
            if not restart_started and (streaming >= self.restart_when * self.cfg.workers
                                        or now - self.t0 > self.cfg.connect_timeout):
                restart_started = True
                threading.Thread(target=self._restart, daemon=True, name="restart").start()
            for f in list(pending):
                if f.worker in ended:
                    f.state, f.why = "missed", "worker ended before its fault was due"
                elif self.restarting and self.workers[f.worker].sshd == self.restart_sshd:
                    f.state, f.why = "missed", "its sshd was being killed by a hard restart"
                elif f.worker not in first or now < first[f.worker][0] + f.offset:
                    continue
                else:
                    self._apply(f, self.workers[f.worker], first[f.worker][1])
                pending.remove(f)
        for f in pending:
            if f.state == "pending":
                f.state, f.why = "missed", "round ended first"

    def _apply(self, f: Fault, w: Worker, pid: int) -> None:
        port = self.sf.sshds[w.sshd].port
        try:
            # Never signal a stale pid, nor fault a connection that is over (the soak
            # itself may lag behind on a loaded machine).
            if not serves(pid, w.addr, port):
                raise ValueError(f"pid {pid} ({cmdline(pid)!r}) no longer holds {w.label}'s connection")
            at = time.time()  # a signal is in effect at once; nft rules from their commit
            if f.kind in ("kill", "stop"):
                faults_mod.kill_session(pid, signal.SIGKILL if f.kind == "kill" else signal.SIGSTOP)
                f.pid = pid
                f.confirmed = self._took_effect(f)
            else:
                verdict = "reject with tcp reset" if f.kind == "reset" else "drop"
                # RSTs pass: the reset rules must not eat the RSTs they send.
                not_rst = "tcp flags ! rst " if f.kind == "reset" else ""
                self.table.add(f'ip daddr {w.addr} tcp dport {port} {not_rst}counter {verdict} '
                               f'comment "w{w.index} in"',
                               f'ip saddr {w.addr} tcp sport {port} {not_rst}counter {verdict} '
                               f'comment "w{w.index} out"')
                at = time.time()
        except (ValueError, ProcessLookupError, subprocess.CalledProcessError) as e:
            f.state, f.why = "missed", f"could not apply: {e}"
            self._event(f"{f.kind} {w.label} missed: {e}")
            return
        f.state, f.at = "applied", at
        self._event(f"{f.kind} {w.label}" + (f" pid {pid}" if f.pid else ""))

    @staticmethod
    def _took_effect(f: Fault, wait: float = 0.5) -> bool:
        """A killed session is gone (or a zombie), a stopped one in state T. A process
        acts on a signal only once it is scheduled: on a loaded machine, at nice 10, that
        can take seconds, so the injector looks again while the round runs."""
        end = time.monotonic() + wait
        while True:
            state = proc_state(f.pid)
            if (f.kind == "kill" and state in (None, "Z", "X")) or (f.kind == "stop" and state in ("T", "t")):
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(0.01)

    def _restart(self) -> None:
        at = round(time.monotonic() - self.t0, 2)
        self._event(f"restart sshd{self.restart_sshd} ({'hard' if self.restart_hard else 'soft'})")
        self.restarting = self.restart_hard
        try:
            self.restart_info = self.sf.restart(self.restart_sshd, self.cfg.restart_down, self.restart_hard)
            self.restart_info["wall"] = time.time()
            self.restart_info["at"] = at
            self._event(f"restart sshd{self.restart_sshd} done: {self.restart_info}")
        except Exception as e:  # reported as a round error
            self.restart_error = f"restart of sshd {self.restart_sshd} failed: {e}"
        finally:
            self.restarting = False

    # -- run ---------------------------------------------------------------------------
    def run(self) -> dict:
        left = self.sf.leftovers()
        if left:
            self.errors.append(f"{len(left)} server processes alive before the round: killed")
            self.sf.kill_leftovers()
        self.table.create()
        env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "SSH_AGENT_PID")}
        env.update(HOME=str(self.sf.home), USER="root", LOGNAME="root", LC_ALL="C.UTF-8", NO_COLOR="1")
        argv = self.cfg.tpush_args(self.sf.hosts_file, self.plan_path)
        (self.dir / "command").write_text(shlex.join(argv) + "\n")
        self.t0 = time.monotonic()
        nice = self.cfg.tpush_nice
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True,
                                preexec_fn=(lambda: os.setpriority(os.PRIO_PROCESS, 0, nice)) if nice else None)
        err_chunks: list[bytes] = []
        threads = [threading.Thread(target=self._read_stdout, args=(proc.stdout.fileno(),), daemon=True),
                   threading.Thread(target=lambda: err_chunks.extend(iter(lambda: proc.stderr.read(65536), b"")),
                                    daemon=True),
                   threading.Thread(target=self._sample, args=(proc.pid,), daemon=True),
                   threading.Thread(target=self._inject, daemon=True)]
        for t in threads:
            t.start()
        hung = False
        try:
            proc.wait(timeout=self.cfg.round_limit)
        except subprocess.TimeoutExpired:
            hung = True
            self._hang_evidence(proc.pid)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        elapsed = time.monotonic() - self.t0
        self._event(f"tpush exited {proc.returncode}")
        self.stop_event.set()
        for t in threads:
            t.join(timeout=60)
        self.stderr = b"".join(err_chunks)
        (self.dir / "tpush.stderr").write_bytes(self.stderr)
        # The restart thread may still be bringing its sshd back.
        for t in threading.enumerate():
            if t.name == "restart":
                t.join(timeout=120)
        cleanup = self._undo_faults()
        (self.dir / "events").write_text("\n".join(self.events) + "\n")
        self._parse_output()
        return self._check(proc.returncode, elapsed, hung, cleanup)

    def _hang_evidence(self, pid: int) -> None:
        self.errors.append(f"HANG: tpush (pid {pid}) still running after {self.cfg.round_limit:.0f}s; "
                           f"backtrace in {self.dir / 'hang-backtrace.txt'}")
        if shutil.which("gdb"):
            r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                               capture_output=True, text=True, timeout=120)
            (self.dir / "hang-backtrace.txt").write_text(r.stdout + r.stderr)

    def _undo_faults(self) -> dict:
        """Confirm the faults happened, undo them, and wait for the server side to drain."""
        for f in self.faults:
            if f.state == "applied" and f.kind in ("kill", "stop"):
                # A signal not seen to act within 2 s (a loaded machine) may have since.
                state = proc_state(f.pid)
                f.confirmed |= state in ((None, "Z", "X") if f.kind == "kill" else ("T", "t"))
            if f.state == "applied" and f.kind == "stop":
                try:
                    os.kill(f.pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        hits: dict[int, int] = {}
        for comment, packets in self.table.counters():
            w = int(comment.split()[0][1:])
            hits[w] = hits.get(w, 0) + packets
        self.table.delete()
        for f in self.faults:
            if f.state == "applied" and f.kind in ("reset", "drop"):
                f.confirmed = hits.get(f.worker, 0) > 0
        # Sessions whose peer is gone end by themselves; a dropped connection only when
        # one of the two kernels retransmits again (backoff), so those may linger.
        dropped = {self.workers[f.worker].addr for f in self.faults if f.kind == "drop" and f.state == "applied"}
        end = time.monotonic() + self.cfg.drain_seconds
        while True:
            left = self.sf.leftovers()
            unexpected = {p: (a, cmdline(p)) for p, a in left.items() if a not in dropped}
            if not unexpected or time.monotonic() > end:
                break
            time.sleep(0.2)
        if unexpected:
            self._describe(unexpected)
        killed = self.sf.kill_leftovers()
        return {"lingering": len(left), "unexpected": unexpected, "killed": killed}

    def _describe(self, pids) -> None:
        """leftovers.txt: each leftover process with its ancestors and, for a watchdog
        `tail --pid=N`, the process it waits for."""
        out = []
        for pid in pids:
            chain, p = [], pid
            for _ in range(8):
                st = farm_mod._proc_stat(p)
                if st is None:
                    break
                chain.append(f"{p}[{st[0]}] {cmdline(p)[:70]!r}")
                if st[1] <= 1:
                    break
                p = st[1]
            out.append(" <- ".join(chain))
            m = re.search(r"tail --pid=(\d+)", cmdline(pid))
            if m:
                w = int(m.group(1))
                st = farm_mod._proc_stat(w)
                out.append(f"    waits for {w}: {st} {cmdline(w)[:70]!r}")
        (self.dir / "leftovers.txt").write_text("\n".join(out) + "\n")

    # -- the output, object by object --------------------------------------------------
    def _parse_output(self) -> None:
        with open(self.out_path, "rb") as f:
            for raw in f:
                if not raw.endswith(b"\n"):
                    self.errors.append(f"tpush's output ends without a newline: {raw[:200]!r}")
                try:
                    obj = json.loads(raw)
                except ValueError:
                    self.errors.append(f"stdout line is not JSON: {raw[:200]!r}")
                    continue
                self._take(obj, raw)

    def _take(self, obj: dict, raw: bytes) -> None:
        t = obj.get("type")
        if t == "summary":
            if self.summary is not None:
                self.errors.append("a second summary object")
            self.summary = obj
            return
        if self.summary is not None:
            self.errors.append(f"an object after the summary: {raw[:200]!r}")
        w = self.by_label.get(obj.get("worker"))
        if w is None:
            self.errors.append(f"object for an unknown worker: {raw[:200]!r}")
            return
        if t == "worker":
            w.outcomes.append(obj)
            return
        if t != "line":
            self.errors.append(f"unknown object type: {raw[:200]!r}")
            return
        if w.ended:
            w.errors.append(f"line after its outcome: {raw[:200]!r}")
        stream = obj.get("stream")
        text = obj.get("text")
        if text is None or stream not in ("stdout", "stderr"):
            w.errors.append(f"line without text (bytes: not UTF-8?) or stream: {raw[:200]!r}")
            return
        if any(s == stream for s, _ in w.partial):
            w.errors.append(f"{stream} line after a partial line: {text[:120]!r}")
        if obj.get("newline") is False:
            w.partial.append((stream, text))
            return
        if text.startswith("P "):
            f = text.split()
            if stream != "stdout" or len(f) != 3 or f[1] != w.addr or not f[2].isdigit() or w.first:
                w.errors.append(f"bad first line: {text!r}")
                return
            w.first, w.pid = True, int(f[2])
            return
        if text.startswith("D "):
            if text != f"D {w.addr} {w.want}" or stream != "stdout":
                w.errors.append(f"bad last line: {text!r}")
            w.done = True
            return
        m = LINE.fullmatch(text)
        if not m or m.group(1) != w.addr:
            w.errors.append(f"torn or foreign line on {stream}: {text[:160]!r}")
            return
        seq = int(m.group(2))
        if text != expected_line(w.addr, seq):
            w.errors.append(f"line fails its checksum/payload: {text[:160]!r}")
            return
        pos = w.next_pos[stream]
        want = stream_seq(stream, pos)
        if want != seq:
            w.errors.append(f"{stream} line {seq} out of order or after a gap (expected {want})")
        w.next_pos[stream] = pos + 1
        w.lines += 1

    # -- checks ------------------------------------------------------------------------
    def _check(self, rc: int, elapsed: float, hung: bool, cleanup: dict) -> dict:
        cfg, errors = self.cfg, list(self.errors)
        if self.restart_error:
            errors.append(self.restart_error)
        s = self.summary
        outcomes: dict[str, int] = {}
        for w in self.workers:
            if len(w.outcomes) != 1:
                errors.append(f"{w.label}: {len(w.outcomes)} outcomes")
            for o in w.outcomes:
                outcomes[o["outcome"]] = outcomes.get(o["outcome"], 0) + 1
        if s is None:
            errors.append("no summary object")
        else:
            if s.get("workers") != cfg.workers:
                errors.append(f"summary counts {s.get('workers')} workers, not {cfg.workers}")
            for k in set(outcomes) | {"ok", "failed", "unreachable", "timed_out", "lost"}:
                if s.get(k) != outcomes.get(k, 0):
                    errors.append(f"summary says {k}={s.get(k)}, the worker objects {outcomes.get(k, 0)}")
            if s.get("exit_code") != rc and not hung:
                errors.append(f"summary exit_code {s.get('exit_code')} but tpush exited {rc}")
        if rc not in (0, 255) and not hung:
            errors.append(f"tpush exited {rc}")
        if not re.search(rb"^tpush: \d+ workers: ", self.stderr, re.M) and not hung:
            errors.append("no summary line on stderr")

        fault_of = {f.worker: f for f in self.faults if f.state == "applied"}
        restarted = self.restart_info["sshd"] if self.restart_info else None
        detect: dict[str, list[float]] = {k: [] for k in KINDS}
        fault_outcomes: dict[str, dict[str, int]] = {k: {} for k in KINDS}
        restart_outcomes: dict[str, int] = {}
        untouched_failures: list[str] = []
        for w in self.workers:
            errors += [f"{w.label}: {e}" for e in w.errors[:3]]
            if len(w.outcomes) != 1:
                continue
            o = w.outcomes[0]
            oc = o["outcome"]
            if o.get("seconds") is not None and o["seconds"] > cfg.worker_limit:
                errors.append(f"{w.label}: took {o['seconds']}s, past its deadlines ({cfg.worker_limit}s)")
            f = fault_of.get(w.index)
            if w.partial and f is None:
                errors.append(f"{w.label}: partial line but no fault: {w.partial}")
            for stream, text in w.partial:
                if not expected_line(w.addr, stream_seq(stream, w.next_pos[stream])).startswith(text):
                    errors.append(f"{w.label}: partial {stream} line is not the start of the next one: {text!r}")
            if f is not None:
                why = f"{oc}: {re.sub(r'[0-9.]+s', 'Ns', o['reason'])}"
                fault_outcomes[f.kind][why] = fault_outcomes[f.kind].get(why, 0) + 1
                end = w.end_time()
                if oc == "ok":
                    errors.append(f"{w.label}: {f.kind} applied, yet {oc}: {o['reason']}")
                elif end is not None:
                    latency = end - f.at
                    detect[f.kind].append(latency)
                    if latency > cfg.detect_limit:
                        errors.append(f"{w.label}: {f.kind} noticed {latency:.1f}s after the fault "
                                      f"(limit {cfg.detect_limit:.0f}s): {o['reason']}")
                continue
            if w.sshd == restarted:
                restart_outcomes[oc] = restart_outcomes.get(oc, 0) + 1
                if oc == "unreachable" and w.lines == 0 and not w.first:
                    continue  # refused while the sshd was down
                # (its last lines may all have come: only the exit status was lost)
                if oc == "lost" and self.restart_info["mode"] == "hard":
                    end = w.end_time()
                    if end is not None and end - self.restart_info["wall"] > cfg.detect_limit:
                        errors.append(f"{w.label}: its sshd was killed, noticed only "
                                      f"{end - self.restart_info['wall']:.1f}s later: {o['reason']}")
                    continue  # its session was killed with its sshd
            if oc != "ok" or o.get("exit_status") != 0 or not w.done or w.lines != w.want:
                untouched_failures.append(w.label)
                errors.append(f"{w.label}: untouched{' (restarted sshd)' if w.sshd == restarted else ''} "
                              f"but {oc} ({o['reason']}), {w.lines}/{w.want} lines, done={w.done}")
        for f in self.faults:
            if f.state == "applied" and not f.confirmed:
                errors.append(f"w{f.worker}: {f.kind} fault applied but not confirmed "
                              f"(pid {f.pid}: {proc_state(f.pid) if f.pid else 'no nft packets'})")
        if cleanup["unexpected"]:
            errors.append(f"server processes left after tpush exited ({self.cfg.drain_seconds:.0f}s drain): "
                          + ", ".join(f"{p} {a or 'no session'} {c[:60]!r}"
                                      for p, (a, c) in list(cleanup["unexpected"].items())[:5]))
        if untouched_failures:
            self._server_logs(untouched_failures[:5])

        # fds beyond live sessions: at each sample, fds minus the workers tpush had started
        # and not yet ended (by its own started/seconds); a leaked fd per worker grows it.
        spans = [(w.start_time(), w.end_time()) for w in self.workers]
        spans = [(a, b) for a, b in spans if a is not None and b is not None]
        excess = [fds - sum(1 for a, b in spans if a <= t < b) for (t, fds, _, _) in self.samples]
        counts = {k: {"planned": 0, "applied": 0, "confirmed": 0, "missed": 0} for k in KINDS}
        for f in self.faults:
            c = counts[f.kind]
            c["planned"] += 1
            c["applied"] += f.state == "applied"
            c["confirmed"] += f.confirmed
            c["missed"] += f.state == "missed"
        missed_why = sorted({re.sub(r"\d+", "N", f.why) for f in self.faults if f.state == "missed"})
        return {
            "round": self.number, "ok": not errors, "errors": errors, "exit_code": rc, "hung": hung,
            "seconds": round(elapsed, 1), "outcomes": outcomes, "faults": counts, "missed_why": missed_why,
            "fault_outcomes": fault_outcomes,
            "detect_max": {k: round(max(v), 2) for k, v in detect.items() if v},
            "restart": self.restart_info, "restart_outcomes": restart_outcomes,
            "lines": sum(w.lines for w in self.workers),
            "partial_lines": sum(len(w.partial) for w in self.workers),
            "peak_fds": max((x[1] for x in self.samples), default=None),
            "peak_rss_kib": max((x[2] for x in self.samples), default=None),
            "hwm_kib": self.samples[-1][3] if self.samples else None,
            "fd_excess_median": sorted(excess)[len(excess) // 2] if excess else None,
            "fd_excess_max": max(excess, default=None),
            "samples": len(self.samples),
            "lingering_server_processes": cleanup["lingering"],
            "tpush_cpu_seconds": round(self.cpu, 1),
            "load": self.load + [round(os.getloadavg()[0], 1)],
        }

    def _server_logs(self, labels: list[str]) -> None:
        """For untouched workers that failed: what their sshd logged about them."""
        lines = []
        for label in labels:
            w = self.by_label[label]
            log = self.sf.sshds[w.sshd].log
            for p in sorted(log.parent.glob("sshd.log*")):
                lines += [f"{label} {p.name}: {l}" for l in p.read_text(errors="replace").splitlines()
                          if f" on {w.addr} port " in l]
        (self.dir / "untouched-failures.sshd.log").write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------

def line_of(r: dict) -> str:
    f = r["faults"]
    applied = " ".join(f"{k}={f[k]['confirmed']}/{f[k]['planned']}" for k in KINDS)
    rs = r["restart"]
    restart = (f"restart {rs['mode']} sshd{rs['sshd']}@{rs['at']}s→{dict(sorted(r['restart_outcomes'].items()))}"
               if rs else "restart -")
    return (f"round {r['round']:2d} {'PASS' if r['ok'] else 'FAIL'} {r['seconds']:5.1f}s exit {r['exit_code']} "
            f"{dict(sorted(r['outcomes'].items()))} faults {applied} {restart} "
            f"detect≤{r['detect_max']} "
            f"fds {r['peak_fds']} (beyond live sessions {r['fd_excess_median']}/{r['fd_excess_max']}) "
            f"rss {r['peak_rss_kib']} KiB hwm {r['hwm_kib']} KiB partial {r['partial_lines']} "
            f"tpush cpu {r['tpush_cpu_seconds']}s load {r['load']}")


def rss_tolerance(first: dict, cfg: Config) -> int:
    if cfg.rss_tolerance_kib >= 0:
        return cfg.rss_tolerance_kib
    return max(4096, (first.get("hwm_kib") or 0) // 10)


def markdown(report: dict) -> str:
    """The figures of a --report file as Markdown (tests/soak/README.md shows one)."""
    rs = report["results"]
    out = ["| round | result | s | ok | lost | unreachable | timed out | faults kill/stop/reset/drop "
           "(confirmed of planned) | restart: sshd's workers | noticed within (s) kill/stop/reset/drop "
           "| peak fds | fds beyond live | peak RSS KiB | VmHWM KiB | tpush CPU s | load |",
           "|" + "---|" * 16]
    for r in rs:
        f, o, st = r["faults"], r["outcomes"], r["restart"]
        d = r["detect_max"]
        restart = (f"{st['mode']} sshd{st['sshd']} at {st['at']:.0f} s: "
                   + ", ".join(f"{v} {k}" for k, v in sorted(r["restart_outcomes"].items()))) if st else "failed"
        out.append(
            f"| {r['round']} | {'pass' if r['ok'] else 'FAIL'} | {r['seconds']:.0f} | {o.get('ok', 0)} "
            f"| {o.get('lost', 0)} | {o.get('unreachable', 0)} | {o.get('timed_out', 0)} | "
            + ", ".join(f"{f[k]['confirmed']}/{f[k]['planned']}" for k in KINDS)
            + f" | {restart} | " + ", ".join(f"{d[k]:.1f}" if k in d else "-" for k in KINDS)
            + f" | {r['peak_fds']} | {r['fd_excess_median']} | {r['peak_rss_kib']} | {r['hwm_kib']} "
              f"| {r['tpush_cpu_seconds']} | {r['load'][0]:.0f}-{r['load'][1]:.0f} |")
    applied = {k: sum(r["faults"][k]["confirmed"] for r in rs) for k in KINDS}
    planned = {k: sum(r["faults"][k]["planned"] for r in rs) for k in KINDS}
    lines = sum(r["lines"] for r in rs)
    outcomes: dict[str, int] = {}
    for r in rs:
        for k, v in r["outcomes"].items():
            outcomes[k] = outcomes.get(k, 0) + v
    out += ["", f"{sum(r['ok'] for r in rs)}/{len(rs)} rounds passed in {report['wall_seconds']:.0f} s "
                f"(seed {report['seed']}); {sum(outcomes.values())} worker runs: "
            + ", ".join(f"{v} {k}" for k, v in sorted(outcomes.items()))
            + f"; {lines} lines checked, {sum(r['partial_lines'] for r in rs)} partial; faults confirmed: "
            + ", ".join(f"{applied[k]} {k} (of {planned[k]} planned)" for k in KINDS)
            + f", {sum(1 for r in rs if r['restart'])} sshd restarts."]
    return "\n".join(out) + "\n"


def compare(first: dict, last: dict, cfg: Config) -> list[str]:
    """Resource growth between round 1 and the last round (growth only; less is fine).
    tpush is a new process per round, so this compares whole runs: equal work, equal use."""
    problems = []
    rss_tol = rss_tolerance(first, cfg)
    for key, tol, unit in (("peak_fds", cfg.fd_tolerance, "fds"),
                           ("hwm_kib", rss_tol, "KiB"),
                           ("peak_rss_kib", rss_tol, "KiB")):
        a, b = first.get(key), last.get(key)
        if a is None or b is None:
            problems.append(f"{key}: not measured")
        elif b - a > tol:
            problems.append(f"{key}: round {first['round']} {a} {unit}, round {last['round']} {b} {unit} "
                            f"(grew {b - a}, tolerance {tol})")
    a, b = first.get("fd_excess_median"), last.get("fd_excess_median")
    if a is not None and b is not None and b - a > 2:
        problems.append(f"fds beyond live sessions: round {first['round']} {a}, round {last['round']} {b}")
    return problems


def parse_args(argv) -> Config:
    ap = argparse.ArgumentParser(description="Chaos soak for tpush (needs root).",
                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--tpush", default=os.environ.get("TPUSH_BIN", str(REPO / "build" / "tpush")))
    ap.add_argument("--workers", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seed", type=int, default=None, help="default: random (printed)")
    ap.add_argument("--sshds", type=int, default=None, help="default: one per 128 workers, at least 2")
    ap.add_argument("--lines", type=int, default=100, help="lines each worker prints")
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between lines")
    ap.add_argument("--connect-timeout", type=int, default=60, help="tpush --connect-timeout")
    ap.add_argument("--alive-interval", type=int, default=5, help="tpush --alive-interval")
    ap.add_argument("--command-timeout", type=int, default=90, help="tpush -u")
    ap.add_argument("--kill-pct", type=float, default=10)
    ap.add_argument("--stop-pct", type=float, default=5)
    ap.add_argument("--net-pct", type=float, default=5, help="half reset, half drop")
    ap.add_argument("--restart-down", type=float, default=1.0, help="seconds the restarted sshd is down")
    ap.add_argument("--restart-mode", choices=("soft", "hard", "alternate"), default="alternate",
                    help="soft: listener only, while workers connect; hard: listener and its sessions "
                         "killed mid-stream; alternate: soft in odd rounds, hard in even ones")
    ap.add_argument("--farm-nice", type=int, default=10,
                    help="niceness of the sshds and their sessions: on one small machine the farm's "
                         "hundreds of processes would otherwise starve the one tpush process")
    ap.add_argument("--tpush-nice", type=int, default=0, help="niceness of tpush")
    ap.add_argument("--detect-margin", type=float, default=10,
                    help="seconds allowed beyond 3 x alive-interval to notice a fault")
    ap.add_argument("--hang-margin", type=float, default=60,
                    help="seconds beyond a worker's deadlines before tpush counts as hung")
    ap.add_argument("--drain-seconds", type=float, default=20,
                    help="seconds the server side gets to end after tpush exits")
    ap.add_argument("--fd-tolerance", type=int, default=None,
                    help="peak fds may grow by this many (default: 16 or 10%% of the workers)")
    ap.add_argument("--rss-tolerance-kib", type=int, default=None,
                    help="peak RSS may grow by this much (default: 4 MiB or 10%% of round 1's)")
    ap.add_argument("--workdir", default=None, help="default: a new /tmp/tpush-soak-*")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--report", default=None, help="write every round's figures here (JSON)")
    ap.add_argument("--markdown", default=None, help="write the figures as a Markdown table here")
    a = ap.parse_args(argv)
    tpush = Path(a.tpush).resolve()
    workdir = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="tpush-soak-"))
    return Config(
        tpush=tpush, workers=a.workers, rounds=a.rounds,
        seed=a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 31),
        sshds=a.sshds or max(2, a.workers // 128), lines=a.lines, interval=a.interval,
        connect_timeout=a.connect_timeout, alive_interval=a.alive_interval,
        command_timeout=a.command_timeout, kill_pct=a.kill_pct, stop_pct=a.stop_pct, net_pct=a.net_pct,
        restart_down=a.restart_down, restart_mode=a.restart_mode, farm_nice=a.farm_nice,
        tpush_nice=a.tpush_nice, detect_margin=a.detect_margin, hang_margin=a.hang_margin,
        drain_seconds=a.drain_seconds,
        fd_tolerance=a.fd_tolerance if a.fd_tolerance is not None else max(16, a.workers // 10),
        rss_tolerance_kib=a.rss_tolerance_kib if a.rss_tolerance_kib is not None else -1, workdir=workdir.resolve(), keep=a.keep,
        report=Path(a.report).resolve() if a.report else None,
        markdown=Path(a.markdown).resolve() if a.markdown else None)


def preflight(cfg: Config) -> str | None:
    if os.geteuid() != 0:
        return ("the soak needs root: nftables rules (CAP_NET_ADMIN) and signals to sshd session "
                "processes; run it as root (sudo make soak)")
    if not os.access(cfg.tpush, os.X_OK):
        return f"tpush binary {cfg.tpush} not found or not executable (make build, or TPUSH_BIN=...)"
    if not farm_mod.sshd_available():
        return "OpenSSH server not installed (/usr/sbin/sshd): make deps"
    if not faults_mod.nft_available():
        return "nftables (nft) not usable: make deps (package nftables), and run as root"
    if not 1 <= cfg.workers <= 254 * 20 or cfg.rounds < 1:
        return "--workers must be 1..5080 and --rounds at least 1"
    return None


def main(argv=None) -> int:
    cfg = parse_args(argv)
    problem = preflight(cfg)
    if problem:
        print(f"soak: error: {problem}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up as for Ctrl-C
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(129))
    print(f"soak: seed {cfg.seed} (rerun with --seed {cfg.seed}); {cfg.workers} workers, {cfg.rounds} rounds, "
          f"{cfg.sshds} sshds; tpush {cfg.tpush}", flush=True)
    print(f"soak: each worker prints {cfg.lines} lines every {cfg.interval}s; tpush --json "
          f"--connect-timeout {cfg.connect_timeout} --alive-interval {cfg.alive_interval} "
          f"-u {cfg.command_timeout}; faults per round: kill {cfg.kill_pct}%, stop {cfg.stop_pct}%, "
          f"reset+drop {cfg.net_pct}%, 1 sshd restart ({cfg.restart_mode}, {cfg.restart_down}s down); limits: detection "
          f"{cfg.detect_limit:.0f}s, worker {cfg.worker_limit:.0f}s, round {cfg.round_limit:.0f}s; "
          f"workdir {cfg.workdir}", flush=True)
    results: list[dict] = []
    t_start = time.monotonic()
    failed = False
    sf = SoakFarm(cfg.workdir / "farm", cfg.workers, cfg.sshds, cfg.farm_nice)
    try:
        sf.start()
        print(f"soak: farm up: sshd ports {sf.ports}", flush=True)
        for n in range(1, cfg.rounds + 1):
            r = Round(cfg, sf, n).run()
            results.append(r)
            print(line_of(r), flush=True)
            for e in r["errors"][:25]:
                print(f"    {e}", flush=True)
            if len(r["errors"]) > 25:
                print(f"    ... {len(r['errors']) - 25} more", flush=True)
            failed |= not r["ok"]
    except KeyboardInterrupt:
        print("soak: interrupted", file=sys.stderr)
        failed = True
    finally:
        sf.stop()
    end_problems = []
    left = sf.leftovers()
    if left:
        end_problems.append(f"server processes left after the soak: {sorted(left)[:10]}")
    tables = tables_named(f"{TABLE_PREFIX}{os.getpid()}_")
    if tables:
        end_problems.append(f"nft tables left: {tables}")
    if len(results) >= 2:
        end_problems += compare(results[0], results[-1], cfg)
    wall = time.monotonic() - t_start
    passed = sum(r["ok"] for r in results)
    if results:
        a, b = results[0], results[-1]
        print(f"soak: resources round {a['round']} -> {b['round']}: peak fds {a['peak_fds']} -> {b['peak_fds']} "
              f"(tolerance +{cfg.fd_tolerance}), fds beyond live sessions (median) {a['fd_excess_median']} -> "
              f"{b['fd_excess_median']} (tolerance +2), peak RSS {a['peak_rss_kib']} -> {b['peak_rss_kib']} KiB, "
              f"VmHWM {a['hwm_kib']} -> {b['hwm_kib']} KiB (tolerance +{rss_tolerance(a, cfg)} KiB)")
    for p in end_problems:
        print(f"soak: FAIL: {p}")
    failed |= bool(end_problems) or len(results) < cfg.rounds
    print(f"soak: {'FAIL' if failed else 'PASS'}: {passed}/{cfg.rounds} rounds passed in {wall:.0f}s "
          f"(seed {cfg.seed})", flush=True)
    report = {"seed": cfg.seed, "workers": cfg.workers, "rounds": cfg.rounds, "sshds": cfg.sshds,
              "wall_seconds": round(wall, 1), "passed": not failed, "end_problems": end_problems,
              "config": {k: str(v) for k, v in vars(cfg).items()}, "results": results}
    if cfg.report:
        cfg.report.write_text(json.dumps(report, indent=1) + "\n")
    if cfg.markdown and results:
        cfg.markdown.write_text(markdown(report))
    if failed or cfg.keep:
        print(f"soak: work directory kept: {cfg.workdir}")
    else:
        shutil.rmtree(cfg.workdir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
