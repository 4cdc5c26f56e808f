"""--live: the full-screen view, driven at a real terminal (a pty from pexpect) and read as a
user sees it (pyte renders what ncurses drew): rows reach their final state, failures come
first, a worker's output opens and closes, q waits for the run to end, Ctrl-C stops it, and
the usual summary follows the view. Nothing sleeps: every step waits for the screen."""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

from conftest import Summary

pexpect = pytest.importorskip("pexpect")
pyte = pytest.importorskip("pyte")

ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78cM]")
SCREEN_WAIT = 60  # seconds for a screen to show what it should
# Keys as TERM=linux sends them (infocmp linux: khome, kend, knp).
KEY_HOME, KEY_END, KEY_PAGE_DOWN = "\x1b[1~", "\x1b[4~", "\x1b[6~"


class LiveTerm:
    """tpush in a pty of `rows` x `cols`, its output rendered into a pyte screen."""

    def __init__(self, binary, args, env, rows=80, cols=200):
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = bytearray()
        self.eof = False
        env = dict(env, TERM="linux")  # a terminal pyte renders faithfully
        self.child = pexpect.spawn(str(binary), [str(a) for a in args], env=env, dimensions=(rows, cols))

    def pump(self, timeout: float) -> None:
        if self.eof:
            time.sleep(timeout) if timeout else None
            return
        try:
            data = self.child.read_nonblocking(1 << 16, timeout=timeout)
        except pexpect.TIMEOUT:
            return
        except pexpect.EOF:
            self.eof = True
            return
        self.raw += data
        self.stream.feed(data)

    @property
    def lines(self) -> list[str]:
        return [l.rstrip() for l in self.screen.display]

    def dump(self) -> str:
        return "\n".join(f"{i:3}|{l}" for i, l in enumerate(self.lines) if l)

    def wait_for(self, predicate, what: str, timeout: float = SCREEN_WAIT) -> None:
        end = time.monotonic() + timeout
        while True:
            self.pump(0.05)
            if predicate(self.lines):
                return
            if self.eof:
                pytest.fail(f"tpush ended before {what}:\n{self.dump()}\nafter the view:\n{self.after_view()}")
            if time.monotonic() > end:
                pytest.fail(f"no {what} within {timeout}s; the screen:\n{self.dump()}")

    def shows(self, text: str) -> bool:
        return any(text in l for l in self.lines)

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def finish(self, timeout: float = SCREEN_WAIT) -> int:
        end = time.monotonic() + timeout
        while not self.eof:
            if time.monotonic() > end:
                self.close()
                pytest.fail(f"tpush did not exit within {timeout}s; the screen:\n{self.dump()}")
            self.pump(0.1)
        self.child.wait()
        return self.child.exitstatus if self.child.exitstatus is not None else 128 + self.child.signalstatus

    def text_after_view(self) -> str:
        """Everything after the view's last frame (the terminal's modes restored), escapes removed."""
        text = ESCAPES.sub(b"", bytes(self.raw)).decode("utf-8", "replace").replace("\r", "")
        return text[text.rfind("rows ") :]

    def after_view(self) -> str:
        """What was written once the view closed: from tpush's summary line on, escapes removed."""
        text = ESCAPES.sub(b"", bytes(self.raw)).decode("utf-8", "replace").replace("\r", "")
        m = re.search(r"tpush: \d+ workers?: ", text)
        return text[m.start():] if m else ""

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def live(tpush_bin, tpush):
    terms: list[LiveTerm] = []

    def start(*args, **kw) -> LiveTerm:
        t = LiveTerm(tpush_bin, ["--live", *args], tpush.env(), **kw)
        terms.append(t)
        return t
    yield start
    for t in terms:
        t.close()


def row_of(lines: list[str], label: str) -> str | None:
    for l in lines[2:-1]:
        if l.startswith(label + " "):
            return l
    return None


def test_every_worker_reaches_its_final_state_failures_first_then_the_summary(farm, live):
    """64 workers; worker 5 fails. Each row ends in its state with its last line, worker 5
    listed first; q leaves the view, and the summary and exit code are the usual ones."""
    hosts = farm.hosts[:64]
    t = live("-H", farm.hosts_file, "-f", 64,
             "echo start; sleep $((TPUSH_WORKER % 3)); echo done $TPUSH_WORKER; exit $((TPUSH_WORKER == 5))")
    t.wait_for(lambda lines: "64 workers:" in lines[0] and "running" in lines[0], "workers running")
    t.wait_for(lambda lines: "64 workers: 63 ok, 1 failed" in lines[0] and "ended" in lines[0]
               and "q: quit" in lines[-1], "the run's end")  # ncurses draws top down: the footer last
    lines = t.lines
    assert lines[2].startswith(hosts[5] + " "), t.dump()
    assert re.search(r"\bexit 1\b.*\bdone 5$", lines[2]), t.dump()
    for i, h in enumerate(hosts):
        row = row_of(lines, h)
        assert row is not None, f"no row for {h}:\n{t.dump()}"
        if i != 5:
            assert re.search(rf"\bok\s+\d+\.\ds\s+0\s+done {i}$", row), f"{h}: {row!r}\n{t.dump()}"
    assert "rows 1-64 of 64" in lines[-1], t.dump()
    assert "q: quit" in lines[-1], t.dump()
    t.send("q")
    assert t.finish() == 1
    s = Summary.parse(t.after_view())
    assert (s.total, s.ok, s.failed, s.unreachable, s.timed_out) == (64, 63, 1, 0, 0), t.after_view()
    assert s.reasons == {hosts[5]: "exit 1"}, t.after_view()


def test_a_worker_still_connecting_says_so_until_its_deadline(farm, live, faults):
    """A server that accepts and never speaks: its row reads "connecting" while the others
    have run, and ends "timed out" at --connect-timeout."""
    silent = faults.server("silent")
    hosts = farm.hosts[:3]
    t = live("--connect-timeout", 3, "-w", ",".join([*hosts, silent.host]), "echo ran")
    t.wait_for(lambda lines: "3 ok" in lines[0] and "1 connecting" in lines[0]
               and re.search(r"\bconnecting\b", row_of(lines, silent.host) or ""), "three done, one connecting")
    # The header is drawn before the rows (ncurses goes top down): wait for both.
    t.wait_for(lambda lines: "1 timed out" in lines[0] and "ended" in lines[0]
               and re.search(r"\btimed out\b", row_of(lines, silent.host) or ""), "the connect deadline")
    t.send("q")
    assert t.finish() == 255


def test_a_small_terminal_scrolls_and_follows_a_resize(farm, live):
    """24 rows show 21 workers of 32; End and Home scroll; a taller terminal shows them all."""
    hosts = farm.hosts[:32]
    t = live("-w", ",".join(hosts), "echo hi $TPUSH_WORKER", rows=24, cols=120)
    t.wait_for(lambda lines: "32 ok" in lines[0] and "ended" in lines[0] and "q: quit" in lines[-1], "the run's end")
    assert "rows 1-21 of 32" in t.lines[-1], t.dump()
    assert row_of(t.lines, hosts[31]) is None
    t.send(KEY_END)
    t.wait_for(lambda lines: "rows 12-32 of 32" in lines[-1], "the list scrolled to its end")
    assert "hi 31" in row_of(t.lines, hosts[31]), t.dump()
    t.send(KEY_HOME)
    t.wait_for(lambda lines: "rows 1-21 of 32" in lines[-1], "the list back at its top")
    t.send(KEY_PAGE_DOWN)
    t.wait_for(lambda lines: "rows 12-32 of 32" in lines[-1], "the list a page down")
    t.send("k" * 15)  # the cursor (row 22 after PgDn) up past the top row shown: the list follows
    t.wait_for(lambda lines: "rows 7-27 of 32" in lines[-1], "the list following the cursor up")
    t.child.setwinsize(40, 120)
    t.screen.resize(40, 120)
    t.wait_for(lambda lines: "rows 1-32 of 32" in lines[39], "every row once the terminal grew")
    t.send("q")
    assert t.finish() == 0


def test_a_workers_output_opens_and_the_list_comes_back(farm, live):
    """Enter opens the selected worker's whole output, stdout and stderr; q comes back to the
    list, and a second q quits."""
    hosts = farm.hosts[:4]
    t = live("-w", ",".join(hosts), "for i in 1 2 3; do echo line $i of $TPUSH_WORKER; done; echo err $TPUSH_WORKER >&2")
    t.wait_for(lambda lines: "4 ok" in lines[0] and "ended" in lines[0] and "q: quit" in lines[-1], "the run's end")
    t.send("j")  # the second row: worker 1
    t.send("\r")
    t.wait_for(lambda lines: lines[0].startswith(hosts[1] + ": ok") and "q/Esc: back" in lines[-1],
               "worker 1's output")
    body = t.lines[1:-1]
    for text in ("line 1 of 1", "line 2 of 1", "line 3 of 1", "err 1"):
        assert text in body, t.dump()
    assert not any("of 0" in l or "of 2" in l for l in body), t.dump()
    assert "q/Esc: back" in t.lines[-1], t.dump()
    t.send("q")
    t.wait_for(lambda lines: lines[0].startswith("tpush --live: 4 workers") and "q: quit" in lines[-1],
               "the list again")
    assert all(row_of(t.lines, h) is not None for h in hosts), t.dump()
    t.send("q")
    assert t.finish() == 0


def remote_left(pattern: str) -> list[str]:
    r = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True)
    return [l for l in r.stdout.splitlines() if "pgrep" not in l]


def unique_sleep() -> str:
    return f"sleep 100.{os.getpid()}{time.monotonic_ns() % 1_000_000:06d}"


def wait_remote_gone(pattern: str, timeout: float = 10) -> list[str]:
    end = time.monotonic() + timeout
    while (left := remote_left(pattern)) and time.monotonic() < end:
        time.sleep(0.1)  # no event to wait on: the remote processes are another machine's, in effect
    return left


def all_started(hosts):
    return lambda lines: f"{len(hosts)} running" in lines[0] and all(
        (r := row_of(lines, h)) is not None and r.endswith("started") for h in hosts)


def every_row_then_quit(t: LiveTerm, hosts, state: str, code: int) -> Summary:
    """Every host's row reads `state` with its last line "started"; q leaves with `code`;
    returns the summary printed after the view."""
    for h in hosts:
        assert re.search(rf"\b{state}\b.*\bstarted$", row_of(t.lines, h) or ""), t.dump()
    t.send("q")
    assert t.finish() == code
    return Summary.parse(t.after_view())


def test_q_while_running_does_not_quit_and_ctrl_c_stops_every_worker(farm, live):
    """While sleeps run, q only says how to stop; Ctrl-C passes the interrupt on, every
    sleep dies of it (each row: signal INT), and q then leaves with 130 and the summary."""
    hosts = farm.hosts[:8]
    marker = unique_sleep()
    t = live("-w", ",".join(hosts), f"echo started; {marker}")
    t.wait_for(all_started(hosts), "8 sleeps started")
    t.send("q")
    t.wait_for(lambda lines: "Ctrl-C stops the run" in lines[-1], "the hint to use Ctrl-C")
    assert t.child.isalive() and "8 running" in t.lines[0], t.dump()
    t.send("\x03")
    t.wait_for(lambda lines: "8 failed" in lines[0] and "ended" in lines[0] and "q: quit" in lines[-1],
               "every worker stopped")
    s = every_row_then_quit(t, hosts, "signal INT", 130)
    assert (s.total, s.failed) == (8, 8), t.after_view()
    # tpush's own notice, shown in the footer during the run, is on stderr once the view is gone.
    assert "tpush: interrupt sent to 8 running worker" in t.text_after_view(), t.text_after_view()
    assert wait_remote_gone(marker) == []


def test_a_second_ctrl_c_closes_workers_that_ignore_the_first_and_shows_them_interrupted(farm, live):
    """Commands that ignore SIGINT keep running after the first Ctrl-C (the footer says a
    second closes them); the second does, and every row says interrupted."""
    hosts = farm.hosts[:8]
    marker = unique_sleep()
    t = live("-w", ",".join(hosts), f"trap '' INT; echo started; {marker}")
    t.wait_for(all_started(hosts), "8 sleeps started")
    t.send("\x03")
    t.wait_for(lambda lines: "Ctrl-C again within 2s" in lines[-1], "the first interrupt's notice")
    assert "8 running" in t.lines[0], t.dump()
    t.send("\x03")
    t.wait_for(lambda lines: "8 interrupted" in lines[0] and "ended" in lines[0] and "q: quit" in lines[-1],
               "every worker interrupted")
    s = every_row_then_quit(t, hosts, "interrupted", 130)
    assert (s.total, s.interrupted) == (8, 8), t.after_view()
    assert wait_remote_gone(marker) == []


def test_live_with_stdout_piped_is_a_usage_error(farm, tpush_bin, tpush):
    """At a terminal, but stdout a pipe: refused before any connection, with the reason."""
    cmd = f"set -o pipefail; '{tpush_bin}' --live -w {farm.hosts[0]} true | cat"
    child = pexpect.spawn("bash", ["-c", cmd], env=dict(tpush.env(), TERM="linux"), dimensions=(24, 200))
    out = child.read().decode("utf-8", "replace")
    child.wait()
    assert child.exitstatus == 2, out
    assert "--live draws on a terminal, and stdout is not one" in out, out
    assert "\x1b[" not in out, out  # the screen was never taken over
