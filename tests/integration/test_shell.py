"""`tpush shell [LABEL]`: an interactive login shell on one worker, at a terminal (a pty
that pexpect drives, rendered with pyte where the screen matters): the first worker or the
one named, a pty of the local terminal's size that follows it, Ctrl-C for the remote
shell, the shell's exit status as tpush's, and the local terminal as it was afterwards."""

import re
import shlex

ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")

import pexpect
import pyte

from conftest import host_args

PROMPT = "tpush-test-prompt$ "


class Shell:
    """tpush shell at a pty: set a known prompt, type lines, read what they printed. (A line
    longer than the terminal is wide makes readline draw the prompt again before it runs:
    the lines typed here are shorter.)"""

    def __init__(self, tpush, argv, rows=30, cols=100, timeout=60, wrap=None):
        # `wrap`: a shell command line around tpush's (TPUSH stands for it), run in the pty.
        cmd = [str(tpush.binary), *map(str, argv)]
        if wrap:
            self.child = pexpect.spawn("/bin/sh", ["-c", wrap.replace("TPUSH", shlex.join(cmd))],
                                       env=tpush.env(), encoding="utf-8", codec_errors="replace",
                                       dimensions=(rows, cols), timeout=timeout)
        else:
            self.child = pexpect.spawn(cmd[0], cmd[1:], env=tpush.env(), encoding="utf-8",
                                       codec_errors="replace", dimensions=(rows, cols), timeout=timeout)
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.Stream(self.screen)
        # A prompt of our own, whatever the worker's rc files set; typed with a break in
        # its quotes, so the echo of this line is not taken for it.
        self.child.send("PS1='tpush-test''-prompt$ '; PROMPT_COMMAND=\r")
        self.wait_prompt()

    def wait_prompt(self) -> str:
        self.child.expect_exact(PROMPT)
        self.stream.feed(self.child.before + PROMPT)
        return self.child.before.replace("\r\n", "\n")

    def line(self, text: str) -> str:
        """Types `text` and Enter; what the command printed (without the echo of the line, and
        without the escape sequences bash writes around it, such as bracketed paste's)."""
        self.child.send(text + "\r")
        out = ESCAPE.sub("", self.wait_prompt())
        return out.split("\n", 1)[1] if "\n" in out else ""

    def exit_code(self) -> int:
        self.child.expect(pexpect.EOF)
        self.child.wait()
        status = self.child.exitstatus
        return status if status is not None else 128 + self.child.signalstatus


def test_a_shell_on_the_first_worker_with_a_terminal_of_this_size(farm, tpush, pty_farm):
    """No LABEL: the first worker. Its shell has a pty (tty names one) the size of the local
    terminal, and it is a login over SSH to that worker's address."""
    sh = Shell(tpush, [*host_args(farm.hosts[:3]), "shell"], rows=33, cols=111)
    assert re.fullmatch(r"/dev/pts/\d+", sh.line("tty").strip()), sh.child.before
    assert sh.line("stty size").strip() == "33 111"
    assert sh.line("echo $SSH_CONNECTION").split()[2] == farm.addresses[0]
    sh.child.send("exit\r")
    assert sh.exit_code() == 0


def test_a_label_names_the_worker(farm, tpush, pty_farm):
    sh = Shell(tpush, ["--label", "index", *host_args(farm.hosts[:4]), "shell", "w2"])
    assert sh.line("echo $SSH_CONNECTION").split()[2] == farm.addresses[2]
    sh.child.send("exit\r")
    assert sh.exit_code() == 0


def test_a_resize_reaches_the_remote_terminal(farm, tpush, pty_farm):
    """The local terminal changes size (SIGWINCH to tpush, which it does not take: it reads
    the size at every tick): the remote pty follows, as `stty size` there says."""
    sh = Shell(tpush, [*host_args(farm.hosts[:1]), "shell"], rows=24, cols=80)
    sh.child.setwinsize(41, 132)
    sizes = []
    for _ in range(50):  # each try is a round trip; the size goes out within a tick (~100 ms)
        sizes.append(sh.line("stty size").strip())
        if sizes[-1] == "41 132":
            break
    assert sizes[-1] == "41 132", sizes
    sh.child.send("exit\r")
    assert sh.exit_code() == 0


def test_ctrl_c_stays_remote_and_the_exit_status_comes_back(farm, tpush, pty_farm):
    """^C interrupts the remote foreground command, not tpush; `exit 7` ends tpush with 7."""
    sh = Shell(tpush, [*host_args(farm.hosts[:1]), "shell"])
    sh.child.send("sleep 60; echo not-interrupted\r")
    sh.child.expect_exact("sleep 60")  # the echo of the line: the shell has it
    sh.child.send("\x03")
    out = ESCAPE.sub("", sh.wait_prompt())
    assert "not-interrupted" not in out.splitlines(), out
    assert sh.child.isalive()
    assert sh.line("echo still-here").strip() == "still-here"
    sh.child.send("exit 7\r")
    assert sh.exit_code() == 7


def test_the_screen_is_the_remote_programs(farm, tpush, pty_farm):
    """What the shell prints reaches the terminal byte for byte (escape sequences too): the
    screen shows what a full-screen program drew, with no prefix and nothing held back."""
    sh = Shell(tpush, [*host_args(farm.hosts[:1]), "shell"], rows=20, cols=100)
    sh.line(r"printf '\033[2J\033[5;10Hdrawn-at-5-10\n'")
    assert sh.screen.display[4][9:22] == "drawn-at-5-10", "\n".join(sh.screen.display)
    sh.child.send("exit\r")
    assert sh.exit_code() == 0


def test_the_local_terminal_is_as_it_was_afterwards(farm, tpush, pty_farm):
    """tpush puts the terminal in raw mode for the shell and back afterwards: the same
    settings before and after, whether the shell exits or the connection is lost."""
    wrap = 'b=$(stty -g); TPUSH; echo status=$?; [ "$(stty -g)" = "$b" ] && echo same-settings'
    for ending in ("exit 3\r", "kill -9 $PPID\r"):
        sh = Shell(tpush, [*host_args(farm.hosts[:1]), "shell"], wrap=wrap)
        sh.child.send(ending)
        sh.child.expect(r"status=(\d+)")
        status = int(sh.child.match.group(1))
        sh.child.expect_exact("same-settings")
        assert status == (3 if ending.startswith("exit") else 255), ending


def test_a_label_that_names_no_worker_is_a_usage_error(farm, tpush):
    sh = pexpect.spawn(str(tpush.binary), [*host_args(farm.hosts[:2]), "--label", "index", "shell", "w9"],
                       env=tpush.env(), encoding="utf-8", timeout=30)
    sh.expect(pexpect.EOF)
    sh.wait()
    assert sh.exitstatus == 2
    assert "tpush shell w9: no such worker (the workers: w[0-1])" in sh.before, sh.before


def test_without_a_terminal_it_says_so(farm, tpush):
    r = tpush(*host_args(farm.hosts[:1]), "shell")
    assert r.returncode == 2, str(r)
    assert "tpush shell: stdin is not a terminal" in r.err, str(r)
