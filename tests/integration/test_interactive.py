"""The interactive prompt: `tpush -w HOSTS` with no command, at a terminal (a pty that
pexpect drives), runs each typed line on the workers over sessions kept between lines,
with the prompt's own commands changing who runs the next line and how it is shown."""

import os
import re
import select
import time

import pexpect
import pytest

from conftest import SUMMARY_HEAD, host_args
from test_tpu import LOC, gcloud  # noqa: F401 (a fixture)
from test_persist import logins
from test_stop import remote_left, unique_sleep, wait_gone

N = 8
LABELS = [f"w{i}" for i in range(N)]


class Prompt:
    """tpush at a pty: send lines, wait for the prompt, read what came between."""

    def __init__(self, tpush, hosts, *options, env=None, timeout=60, argv=None, name="tpush"):
        self.tpush = tpush
        self.env = env or tpush.env()
        argv = argv or ["--label", "index", *options, *host_args(hosts)]
        self.child = pexpect.spawn(str(tpush.binary), argv, env=self.env, encoding="utf-8",
                                   codec_errors="replace", dimensions=(50, 200), timeout=timeout)
        self.name = name
        self.wait_prompt()

    def wait_prompt(self, size: str | None = None) -> str:
        """Waits for the next prompt (`tpush[8]> `, or `tpush[3/8]> ` with size "3/8"); returns
        what came before it."""
        pattern = re.escape(self.name) + r"\[" + (re.escape(size) if size else r"(\d+/)?\d+") + r"\]> "
        self.child.expect(pattern)
        return self.child.before.replace("\r\n", "\n")

    def line(self, text: str, size: str | None = None) -> str:
        self.child.send(text + "\r")
        out = self.wait_prompt(size)
        # What came back starts with the echo of the typed line.
        return out.split("\n", 1)[1] if "\n" in out else ""

    def end(self) -> int:
        self.child.sendeof()
        return self.exit_code()

    def exit_code(self) -> int:
        """Waits for tpush to exit (the terminal's EOF can come first: an ASan build still checks
        for leaks after it) and returns its exit code, 128 + N for a signal."""
        self.child.expect(pexpect.EOF)
        try:
            pidfd = os.pidfd_open(self.child.pid)
        except ProcessLookupError:
            pidfd = None  # pexpect reaped it when it saw the EOF (isalive()): it has exited
        exited = True
        if pidfd is not None:
            try:
                exited, _, _ = select.select([pidfd], [], [], self.child.timeout)
            finally:
                os.close(pidfd)
        if not exited:
            pytest.fail(f"tpush closed its terminal but did not exit within {self.child.timeout}s")
        self.child.wait()
        status = self.child.exitstatus
        return status if status is not None else 128 + self.child.signalstatus


def shown_lines(out: str) -> list[str]:
    """The terminal's lines as a user sees them: a run that lasts shows a status line
    ("tpush: 2/8 done, ...") that the next output line overwrites with a carriage return
    and an erase (ESC [K), so a line shows what follows its last carriage return."""
    return [line.rstrip("\r").rsplit("\r", 1)[-1].replace("\x1b[K", "") for line in out.split("\n")]


def worker_lines(out: str, text: str) -> dict[str, str]:
    """{label: rest} for the prefixed lines holding `text`."""
    got = {}
    for line in shown_lines(out):
        m = re.match(r"^(w\d+): (.*)$", line)
        if m and text in m.group(2):
            got[m.group(1)] = m.group(2)
    return got


def summary_head(out: str) -> re.Match:
    heads = [m for m in (SUMMARY_HEAD.match(l) for l in shown_lines(out)) if m]
    assert len(heads) == 1, f"one summary head line expected:\n{out}"
    return heads[0]


@pytest.fixture
def hosts(farm):
    return farm.hosts[:N]


@pytest.fixture
def state_env(tpush, tmp_path):
    return tpush.env(XDG_STATE_HOME=str(tmp_path / "state"))


def test_each_line_runs_on_every_worker_then_a_one_line_summary(tpush, hosts, state_env):
    p = Prompt(tpush, hosts, env=state_env)
    out = p.line("echo hello $TPUSH_WORKER of $TPUSH_NUM_WORKERS")
    assert worker_lines(out, "hello") == {f"w{i}": f"hello {i} of {N}" for i in range(N)}
    head = summary_head(out)
    assert head.group(1, 2) == (str(N), str(N))
    assert not [l for l in shown_lines(out) if l.startswith("tpush: w")], "all ok: the summary is one line"
    out = p.line("exit $((TPUSH_WORKER % 3 == 1))")
    assert summary_head(out).group(2, 3) == ("5", "3")
    assert "tpush: w[1,4,7]: exit 1" in shown_lines(out), out
    assert p.end() == 1, "the exit code is the last line's"


# Up recalls the line whatever TERM says (unset: a container's shell, where libedit draws as on
# a dumb terminal).
@pytest.mark.parametrize("term", ["xterm", None])
def test_history_survives_a_restart(tpush, hosts, state_env, tmp_path, term):
    state_env = {k: v for k, v in state_env.items() if k != "TERM"}
    if term:
        state_env["TERM"] = term
    p = Prompt(tpush, hosts, env=state_env)
    p.line("echo remembered-$((6 * 7))")
    assert p.end() == 0
    # libedit's format: a header line, then each line with blanks escaped (\040)
    assert "remembered-$((6" in (tmp_path / "state" / "tpush" / "history").read_text()
    p = Prompt(tpush, hosts, env=state_env)
    p.child.send("\x1b[A")  # up: the last line of the last session
    # Recalled before Enter is typed: without TERM, libedit redraws the whole prompt and line,
    # a prompt that must not be taken for the one after the line ran.
    p.child.expect(re.escape("echo remembered-$((6 * 7))"))
    out = p.line("")
    assert len(worker_lines(out, "remembered-42")) == N, out
    p.end()


def test_drop_add_and_only_change_who_runs_the_next_line(tpush, hosts, state_env):
    p = Prompt(tpush, hosts, env=state_env)
    p.line("-w[2-3]", size=f"6/{N}")
    out = p.line("echo who $TPUSH_WORKER", size=f"6/{N}")
    assert sorted(worker_lines(out, "who")) == ["w0", "w1", "w4", "w5", "w6", "w7"]
    assert worker_lines(out, "who")["w4"] == "who 4", "TPUSH_WORKER stays the worker's index in the whole set"
    p.line(":add w3", size=f"7/{N}")
    p.line("@w[1,5]", size=f"2/{N}")
    out = p.line("echo who $TPUSH_WORKER", size=f"2/{N}")
    assert sorted(worker_lines(out, "who")) == ["w1", "w5"]
    out = p.line("?", size=f"2/{N}")
    assert "w[1,5] (2)" in out
    p.line(":all", size=str(N))
    out = p.line("echo who")
    assert len(worker_lines(out, "who")) == N
    p.end()


def test_failed_narrows_to_the_workers_that_did_not_succeed(tpush, hosts, state_env):
    p = Prompt(tpush, hosts, env=state_env)
    p.line("exit $((TPUSH_WORKER % 2))")
    p.line(":failed", size=f"4/{N}")
    out = p.line("echo again $TPUSH_WORKER", size=f"4/{N}")
    assert sorted(worker_lines(out, "again")) == ["w1", "w3", "w5", "w7"]
    out = p.line(":failed", size=f"4/{N}")
    assert "every worker of the last line succeeded" in out
    p.end()


def test_ctrl_c_stops_the_line_everywhere_and_the_next_logs_in_nowhere(farm, tpush, hosts, state_env):
    sleep = unique_sleep()
    p = Prompt(tpush, hosts, env=state_env)
    p.line("true")  # every session made and kept
    before = logins(farm)
    p.child.send(f"echo started $TPUSH_WORKER; {sleep}\r")
    for _ in range(N):
        p.child.expect(r"w\d+: started \d+")
    t0 = time.monotonic()
    # Each worker's sleep runs under its own name (a Ctrl-C between the shell's fork and
    # its exec would be lost: bash's race, see test_stop.start_sleeping).
    while len([l for l in remote_left(sleep) if l.split(None, 1)[1].startswith(sleep)]) < N:
        assert time.monotonic() - t0 < 30, "the sleeps did not all start"
        time.sleep(0.05)
    p.child.sendintr()
    out = p.wait_prompt()
    assert f", {N} interrupted" in out or f"{N} failed" in out, out
    assert wait_gone(sleep, 10) == [], "a sleep outlived Ctrl-C"
    out = p.line("echo after $TPUSH_WORKER")
    assert len(worker_lines(out, "after")) == N
    assert logins(farm) == before, "the line after Ctrl-C logged in again"
    p.end()


def test_ctrl_c_at_the_prompt_drops_the_typed_line(tpush, hosts, state_env):
    p = Prompt(tpush, hosts, env=state_env)
    p.child.send("echo dropped-line")
    p.child.expect("dropped-line")  # echoed by the editor
    p.child.sendintr()
    p.wait_prompt()
    out = p.line("echo kept-line")
    assert "dropped-line" not in "".join(worker_lines(out, "line").values())
    assert len(worker_lines(out, "kept-line")) == N
    p.end()


def test_gathered_and_streamed_output(tpush, hosts, state_env):
    p = Prompt(tpush, hosts, env=state_env)
    p.line("=")
    out = p.line("echo same")
    assert f"w[0-{N - 1}] ({N})" in out and out.count("same") == 1, out
    p.line("=")
    out = p.line("echo same")
    assert len(worker_lines(out, "same")) == N
    p.end()


def test_a_local_command_and_the_prompts_errors(tpush, hosts, state_env, tmp_path):
    p = Prompt(tpush, hosts, env=state_env)
    out = p.line(f"!echo local-$((40 + 2)) > {tmp_path}/here; cat {tmp_path}/here")
    assert "local-42" in out and not worker_lines(out, "local")
    out = p.line(":frobnicate")
    assert "':frobnicate' is not a prompt command (:help lists them)" in out
    out = p.line(":help")
    assert ":failed" in out and "!CMD" in out
    out = p.line("-nosuchhost")
    assert "not among these workers" in out
    p.child.send("quit\r")
    assert p.exit_code() == 0


def test_no_command_without_a_terminal_is_a_usage_error(tpush, hosts):
    r = tpush(*host_args(hosts))
    assert r.returncode == 2
    assert "no command given" in r.err and "stdin is not one" in r.err


def test_a_tpu_prompt_names_it_and_its_size(gcloud, state_env):
    gcloud.tpu("mytpu", 4)
    env = gcloud.env()
    env["XDG_STATE_HOME"] = state_env["XDG_STATE_HOME"]
    p = Prompt(gcloud.tpush, None, env=env, argv=["-p", str(gcloud.farm.port), "-t", "mytpu", *LOC], name="mytpu")
    out = p.line("echo on $TPUSH_WORKER", size="4")
    assert worker_lines(out, "on") == {f"w{i}": f"on {i}" for i in range(4)}
    p.line("-w0", size="3/4")
    assert p.end() == 0
