"""`make demo` is the README's first promise: scripts/demo.sh, run whole as a user would.

It starts a farm of its own (8 workers), so this test needs no fixture farm. Each step
prints "(exit N)"; the steps' exit codes, a few lines only tpush prints, and the demo
cleaning up after itself (its directory, its farm, its persist master) are what a user
sees.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from conftest import REPO

# version, fan-out, host expression, labels by index, -N, failures, a host down,
# --persist twice, disconnect
STEP_EXITS = [0, 0, 0, 0, 0, 1, 255, 0, 0]


def test_demo_runs_every_step_and_leaves_nothing(tpush_bin):
    # The demo's directory goes in TMPDIR; pytest's tmp_path would make its persist
    # socket's path longer than a Unix socket takes.
    tmp = Path(tempfile.mkdtemp(prefix="tpd.", dir="/tmp"))
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "TPUSH_PERSIST")}
        env.update(TPUSH_BIN=str(tpush_bin), TMPDIR=str(tmp), NO_COLOR="1")
        r = subprocess.run(["bash", str(REPO / "scripts" / "demo.sh")], env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=180)
        out = r.stdout
        assert r.returncode == 0, f"demo failed ({r.returncode}):\n{out[-3000:]}\n{r.stderr[-3000:]}"
        assert [int(x) for x in re.findall(r"^\(exit (\d+)\)$", out, re.M)] == STEP_EXITS, out + r.stderr
        assert re.search(r"^127\.0\.1\.8: worker 7 of 8 answers on 127\.0\.1\.8$", out, re.M), out
        assert re.search(r"^127\.0\.1\.1:\d+: again$", out, re.M), out
        assert re.search(r"ended the persist master \(pid \d+\); it held 8 sessions", r.stderr), r.stderr
        assert "demo done" in out
        # The demo's directory (farm, keys, sockets) is gone, and no master outlived it.
        assert list(tmp.iterdir()) == []
        masters = subprocess.run(["pgrep", "-f", "--", f"--persist-master {tmp}/"], capture_output=True)
        assert masters.returncode == 1, masters.stdout
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
