"""ProxyCommands for tpush's reach tests: tests/farm/relay.py as tests use it.

    Relay(directory)        command lines for relay.py (a ProxyCommand string with
                            %h %p, or an argv), with its fault options, all logging to
                            DIRECTORY/relay.log
    RelayLog(path)          reads relay.py's JSON-lines event log (also the stand-in
                            gcloud's iap.log, written by the same code): how many
                            relays started, connected, ended, failed; their PIDs;
                            kill_leftovers() kills those still running, by PID,
                            after checking each one's command line

A ProxyCommand outlives its client only if the client forgets to kill it; tests
call kill_leftovers() at teardown (and may assert that nothing was left).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import time
from pathlib import Path

try:
    from farm import alive, cmdline
except ImportError:  # pragma: no cover
    from .farm import alive, cmdline

RELAY = Path(__file__).resolve().with_name("relay.py")


class RelayLog:
    """relay.py's event log: one JSON object per line, `event` in start / connected /
    end / fault, with `pid`, `host`, `port` (and byte counts `up`/`down` on end)."""

    def __init__(self, path, must_contain: str = "relay.py"):
        self.path = Path(path)
        self.must_contain = must_contain  # what a live relay's command line contains

    def events(self, kind: str | None = None) -> list[dict]:
        try:
            lines = self.path.read_text().splitlines()
        except FileNotFoundError:
            return []
        out = [json.loads(l) for l in lines if l.strip()]
        return [e for e in out if kind is None or e["event"] == kind]

    def started(self) -> int:
        """How many relays were started (one per ProxyCommand invocation)."""
        return len(self.events("start"))

    def connected(self) -> int:
        return len(self.events("connected"))

    def targets(self) -> list[tuple[str, int]]:
        """(host, port) of every relay started, in order."""
        return [(e["host"], int(e["port"])) for e in self.events("start")]

    def pids(self) -> set[int]:
        return {e["pid"] for e in self.events("start")}

    def running(self) -> list[int]:
        """Relays still running (PID alive and its command line is a relay's)."""
        return sorted(p for p in self.pids() if alive(p) and self.must_contain in cmdline(p))

    def wait_for(self, started: int = 0, connected: int = 0, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while self.started() < started or self.connected() < connected:
            if time.monotonic() > end:
                raise TimeoutError(f"{self.path}: wanted {started} started / {connected} connected, "
                                   f"have {self.started()} / {self.connected()}")
            time.sleep(0.02)  # poll interval

    def kill_leftovers(self) -> list[int]:
        """SIGKILL every relay still running; returns their PIDs."""
        left = self.running()
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return left


class Relay:
    """relay.py with a log of its own in `directory`.

        relay.command()                    'relay.py --log DIR/relay.log %h %p'
        relay.command(die_after=4096)      ... with a fault
        relay.argv("127.0.1.1", 22)        the same as an argv list
        relay.log                          RelayLog of DIR/relay.log
    """

    def __init__(self, directory):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = RELAY
        self.log = RelayLog(self.dir / "relay.log")

    def argv(self, host="%h", port="%p", *, fail: str | None = None, hang: bool = False,
             die_after: int | None = None, connect_delay: float | None = None,
             latency: float | None = None) -> list[str]:
        argv = [str(self.path), "--log", str(self.log.path)]
        if fail is not None:
            argv += ["--fail-at-once", fail]
        if hang:
            argv.append("--hang")
        if die_after is not None:
            argv += ["--die-after", str(die_after)]
        if connect_delay is not None:
            argv += ["--connect-delay", str(connect_delay)]
        if latency is not None:
            argv += ["--latency", str(latency)]
        return argv + [str(host), str(port)]

    def command(self, host="%h", port="%p", **faults) -> str:
        """A ProxyCommand string (shell-quoted; %h and %p left for the client)."""
        return " ".join(a if a in ("%h", "%p") else shlex.quote(a) for a in self.argv(host, port, **faults))

    def kill_leftovers(self) -> list[int]:
        return self.log.kill_leftovers()
