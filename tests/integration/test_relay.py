"""tpush cp --relay: the bytes leave tpush once and the workers pass them on, each
worker checking every file against tpush's own SHA-256 before it is renamed into
place. Each worker has a filesystem of its own (islands.py), so every copy is real.

Worker 2 has a 256 KiB disk; worker 5's sshd reads another key file, so it
refuses the relay's key and tpush must send it the bytes itself; worker 15's
mkfifo fails, so the relay cannot start there at all."""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import farm_mod, ssh_add
from islands import islands_fixture, tpush_for

# The islands' sshds, their sessions and the files they make are one test's at a time:
# relayed copies run one after another, in one test process (pytest-xdist's loadgroup).
pytestmark = pytest.mark.xdist_group("relay")

WORKERS = 17
# REFUSES_HOP's sshd forwards no agent to its commands: it cannot log in to the next worker.
SMALL_DISK, REFUSES_HOP, CANNOT_RELAY = 2, 5, 15
# Workers whose sshd reads the user's keys from a file of their own (a copy of the farm's),
# which a test shapes as users' files are: no final newline, a symlink, rewritten meanwhile.
OWN_KEYS = (8, 9, 10)
NO_SSH = 16  # ssh fails there (/bin/false in its place): it cannot pass the bytes on


HOME_KEYS_BEFORE = None


@pytest.fixture(scope="module")
def islands(farm):
    global HOME_KEYS_BEFORE
    HOME_KEYS_BEFORE = keys_state(HOME_KEYS)
    yield from islands_fixture(farm, WORKERS, {SMALL_DISK: dict(tmpfs_size="256k"),
                                               REFUSES_HOP: dict(extra_config="AllowAgentForwarding no"),
                                               CANNOT_RELAY: dict(broken=shutil.which("mkfifo")),
                                               NO_SSH: dict(broken=shutil.which("ssh")),
                                               **{k: dict(authorized_keys="own") for k in OWN_KEYS}}, subnet=151)


@pytest.fixture
def tp(tpush_bin, home, islands):
    return tpush_for(tpush_bin, home, islands)


@pytest.fixture
def env(tp, farm):
    return tp.env()


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def hosts_arg(islands, ks) -> list[str]:
    return ["-w", ",".join(islands.hosts[k] for k in ks)]


def came(res: dict, host: str) -> str:
    """Where a worker's copy came from, as its result says ("from X[, attempt N]"),
    checked to end with how long the worker took to store it."""
    m = re.fullmatch(r"ok \((from [^;]+); stored in [0-9.]+ s, [0-9]+ MiB/s\)", res[host]["reason"])
    return m.group(1) if m else res[host]["reason"]


def results(r) -> dict[str, dict]:
    return {j["worker"]: j for j in map(json.loads, r.out.splitlines()) if j.get("type") == "worker"}


def relay_dirs(islands) -> list[Path]:
    """The relays' directories on the islands (each worker's TMPDIR is its own)."""
    return [p for i in islands.islands for p in i.tmp.glob("tpush-relay*")]


def copy_processes(islands) -> list[str]:
    """Every process the islands' sessions started that still runs (found by the
    island's mark in its environment, also once it is orphaned)."""
    return [f"{i.address}: process {p}: {farm_mod.cmdline(p)[:160]}" for i in islands.islands
            for p in farm_mod.marked_processes(i.marker)]


# The sessions' own ~/.ssh/authorized_keys (the user's real home, where ssh's default
# AuthorizedKeysFile points): a relay must leave it as it is, or missing.
HOME_KEYS = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".ssh" / "authorized_keys"


def keys_state(path) -> tuple | None:
    """An authorized_keys file as a relay must leave it: its bytes, inode and mtime."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return Path(path).read_bytes(), st.st_ino, st.st_mtime_ns


def leftovers(islands, farm, keys_before) -> list[str]:
    """What a relay may leave behind: its directories, any change to the key file,
    processes of its own (the control script, the hops, the feeds), any session still open."""
    found = [str(p) for p in relay_dirs(islands)]
    if keys_state(farm.authorized_keys) != keys_before:
        found.append("authorized_keys changed")
    if keys_state(HOME_KEYS) != HOME_KEYS_BEFORE:
        found.append(f"{HOME_KEYS} changed")
    found += copy_processes(islands)
    for i in islands.islands:
        found += [f"{i.address}: session {p}" for p in farm_mod.descendants(i.pid) if "@" in farm_mod.cmdline(p)]
    return found


def settled(islands, farm, keys_before, timeout=20) -> list[str]:
    """leftovers(), once the workers' sessions had time to end (they end after tpush)."""
    deadline = time.monotonic() + timeout
    while (left := leftovers(islands, farm, keys_before)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


PLAIN = [k for k in range(WORKERS) if k not in (SMALL_DISK, REFUSES_HOP, CANNOT_RELAY, NO_SSH)]


def test_a_file_and_a_tree_reach_every_worker_sent_once(tp, env, farm, islands, tmp_path):
    keys_before = keys_state(farm.authorized_keys)
    tree = tmp_path / "code"
    (tree / "sub dir").mkdir(parents=True)
    (tree / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (tree / "run.sh").chmod(0o755)
    (tree / "sub dir" / "weights.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    (tree / "empty").write_bytes(b"")
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(8 * 1024 * 1024))
    dest = f"{islands.data}/r1/"
    r = tp("-v", "--json", *hosts_arg(islands, PLAIN), "cp", "--relay", "-r", tree, big, dest, env=env)
    assert r.returncode == 0, r
    chain = [l for l in r.err.splitlines() if "relay: attempt 1:" in l]
    assert chain == [f"tpush: info: relay: attempt 1: {len(PLAIN)} workers: tpush -> "
                     + " -> ".join(islands.hosts[k] for k in PLAIN)], r.err
    res = results(r)
    assert came(res, islands.hosts[PLAIN[0]]) == "from tpush", res
    assert came(res, islands.hosts[PLAIN[5]]) == f"from {islands.hosts[PLAIN[4]]}", res
    # Each hop logged in as the user through the agent tpush served the sender: one
    # signature per hop, each after the worker's ssh bound it to the next worker's key.
    signed = [l for l in r.err.splitlines() if ": relay: agent: signed the login to " in l]
    assert len(signed) == len(PLAIN) - 1, r.err
    assert f"tpush: info: {islands.hosts[PLAIN[4]]}: relay: agent: signed the login to {islands.hosts[PLAIN[5]]} as " \
        in r.err, r.err
    assert "session-bind" not in r.err and "agent: refused" not in r.err, r.err
    for k in PLAIN:
        i = islands.islands[k]
        assert sha(i.path("r1/big.bin")) == sha(big), i.address
        assert sha(i.path("r1/code/sub dir/weights.bin")) == sha(tree / "sub dir" / "weights.bin"), i.address
        assert i.path("r1/code/run.sh").stat().st_mode & 0o777 == 0o755, i.address
        assert i.path("r1/code/empty").stat().st_size == 0, i.address
        assert not [p for p in i.path("r1").rglob("*") if ".tpush-" in p.name], i.address
    assert settled(islands, farm, keys_before) == []


def test_the_summary_says_how_many_times_tpush_sent_the_bytes(tp, env, islands, tmp_path):
    src = tmp_path / "f"
    src.write_bytes(os.urandom(1024 * 1024))
    out = tmp_path / "out"
    r = tp("--out-dir", out, *hosts_arg(islands, PLAIN[:4]), "cp", "--relay", src, f"{islands.data}/r2/f", env=env)
    assert r.returncode == 0, r
    assert "tpush: relay: tpush sent the bytes 1 time; 3 of 4 workers got them from another worker" in r.err, r
    # --out-dir records where each copy came from, and how fast it was stored.
    recorded = {w["worker"]: w for w in json.loads((out / "results.json").read_text())["workers"]}
    assert [came(recorded, islands.hosts[k]) for k in PLAIN[:4]] == \
        ["from tpush"] + [f"from {islands.hosts[k]}" for k in PLAIN[:3]], recorded


def test_a_worker_whose_sshd_forwards_no_agent_stores_and_the_next_gets_the_bytes_from_tpush(
        tp, env, farm, islands, tmp_path):
    """REFUSES_HOP's sshd says no to the agent tpush forwards (AllowAgentForwarding no):
    it stores its copy, its hop cannot log in, and tpush feeds the worker after it,
    which passes the bytes on as before; -v says why, in one line."""
    keys_before = keys_state(farm.authorized_keys)
    src = tmp_path / "f"
    src.write_bytes(os.urandom(4 * 1024 * 1024))
    ks = [3, 4, REFUSES_HOP, 6, 7]
    r = tp("-v", "--json", *hosts_arg(islands, ks), "cp", "--relay", src, f"{islands.data}/r3/f", env=env)
    assert r.returncode == 0, r
    refused, after = islands.hosts[REFUSES_HOP], islands.hosts[6]
    assert f"tpush: info: {refused}: relay: the server refused to forward the agent: its hops cannot log in, " \
           "and tpush feeds the workers after it itself" in r.err, r.err
    assert f"tpush: info: {refused}: relay: passing the bytes on failed (ssh exit 255 " in r.err, r.err
    assert f"tpush: info: {after}: relay: its sender failed: tpush sends it the bytes itself (attempt 1)" in r.err, r.err
    res = results(r)
    assert came(res, refused) == f"from {islands.hosts[4]}", res
    assert came(res, after) == "from tpush", res
    assert came(res, islands.hosts[7]) == f"from {after}", res
    for k in ks:
        assert sha(islands.islands[k].path("r3/f")) == sha(src), islands.hosts[k]
    assert settled(islands, farm, keys_before) == []


def test_a_worker_that_cannot_store_still_passes_the_bytes_on(tp, env, islands, tmp_path):
    src = tmp_path / "f"
    src.write_bytes(os.urandom(1024 * 1024))
    ks = [1, SMALL_DISK, 3]
    r = tp("--json", *hosts_arg(islands, ks), "cp", "--relay", src, f"{islands.data}/r4/f", env=env)
    assert r.returncode == 1, r
    res = results(r)
    full = res[islands.hosts[SMALL_DISK]]
    assert full["outcome"] == "failed" and full["reason"].startswith(f"{islands.data}/r4/f: "), full
    assert "No space left on device" in full["reason"], full
    assert came(res, islands.hosts[3]) == f"from {islands.hosts[SMALL_DISK]}", res
    assert sha(islands.islands[3].path("r4/f")) == sha(src)
    assert not [p for p in islands.islands[SMALL_DISK].path("r4").iterdir()], "a temporary file was left"


def test_a_worker_that_cannot_run_the_relay_gets_its_copy_over_sftp(tp, env, farm, islands, tmp_path):
    keys_before = keys_state(farm.authorized_keys)
    src = tmp_path / "f"
    src.write_bytes(os.urandom(5 * 1024 * 1024))
    ks = [0, 1, CANNOT_RELAY, 3]
    r = tp("-v", "--json", *hosts_arg(islands, ks), "cp", "--relay", src, f"{islands.data}/r10/f", env=env)
    assert r.returncode == 0, r
    res = results(r)
    why = res[islands.hosts[CANNOT_RELAY]]["reason"]
    assert re.match(r"ok \(from tpush over SFTP: the relay could not start: cannot write /\S+/tpush-relay\.", why), why
    assert came(res, islands.hosts[3]) == f"from {islands.hosts[1]}", res
    assert "tpush: info: relay: attempt 1: 3 workers: tpush -> " in r.err, r.err
    for k in ks:
        assert sha(islands.islands[k].path("r10/f")) == sha(src), islands.hosts[k]
    assert settled(islands, farm, keys_before) == []


def wait_for_bytes(island, rel: str, timeout=60) -> None:
    """Until the worker is writing a temporary file under `rel` (the bytes flow)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        d = island.path(rel)
        if d.is_dir() and any(p.name.startswith(".") and ".tpush-" in p.name and p.stat().st_size > 0
                              for p in d.iterdir()):
            return
        time.sleep(0.01)
    raise AssertionError(f"{island.address}: no bytes arrived under {rel}")


def test_a_worker_lost_mid_chain_leaves_every_other_worker_with_a_checked_copy(
        tp, env, farm, islands, tmp_path):
    src = tmp_path / "f"
    with open(src, "wb") as f:
        for _ in range(96):
            f.write(os.urandom(1024 * 1024))
    ks = [0, 1, 3, 4, 6, 7, 8, 9]
    lost = 4
    s = tp.stream("-v", "--json", *hosts_arg(islands, ks), "cp", "--relay", src, f"{islands.data}/r5/f", env=env)
    wait_for_bytes(islands.islands[6], "r5")  # downstream of the worker about to go
    victim = islands.islands[lost]
    for p in farm_mod.descendants(victim.pid) + [victim.pid]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    r = s.finish(120)
    res = results(r)
    assert res[islands.hosts[lost]]["outcome"] in ("lost", "unreachable"), res
    for k in ks:
        if k == lost:
            continue
        assert res[islands.hosts[k]]["outcome"] == "ok", (islands.hosts[k], res)
        assert sha(islands.islands[k].path("r5/f")) == sha(src), islands.hosts[k]
    assert "relay: attempt 2:" in r.err or "tpush sends it the bytes itself" in r.err, r.err
    # What the killed worker could not clean up went with it (on a pod, its VM's /tmp).
    for d in victim.tmp.glob("tpush-relay*"):
        subprocess.run(["rm", "-rf", str(d)], check=False)
    victim.start()  # for the tests after this one


def copy_reaching_the_last(tp, env, islands, tmp_path, name: str):
    """A relayed copy of 96 MiB to eight workers, under way: its bytes have reached the
    last one. Returns the running tpush and the workers."""
    src = tmp_path / "f"
    with open(src, "wb") as f:
        for _ in range(96):
            f.write(os.urandom(1024 * 1024))
    ks = PLAIN[:8]
    s = tp.stream(*hosts_arg(islands, ks), "cp", "--relay", src, f"{islands.data}/{name}/f", env=env)
    wait_for_bytes(islands.islands[ks[-1]], name)
    return s, ks


def test_ctrl_c_mid_transfer_leaves_nothing_on_any_worker(tp, env, farm, islands, tmp_path):
    keys_before = keys_state(farm.authorized_keys)
    s, ks = copy_reaching_the_last(tp, env, islands, tmp_path, "r6")
    os.killpg(s.proc.pid, signal.SIGINT)
    r = s.finish(30)
    assert r.returncode == 130, r
    assert settled(islands, farm, keys_before) == []
    for k in ks:
        d = islands.islands[k].path("r6")
        assert not d.is_dir() or [p.name for p in d.iterdir()] in ([], ["f"]), islands.hosts[k]


def copy_left(islands, rel: str) -> list[str]:
    """What a copy under DATA/`rel` may leave on the islands: a process any of their
    sessions started, a relay's directory, a temporary file beside the target."""
    found = copy_processes(islands) + [str(p) for p in relay_dirs(islands)]
    for i in islands.islands:
        d = i.path(rel)
        if d.is_dir():
            found += [f"{i.address}: {p.name}" for p in d.iterdir() if p.name.startswith(".")]
    return found


def test_tpush_killed_mid_copy_leaves_nothing_on_any_worker(tp, env, farm, islands, tmp_path):
    """SIGKILL: tpush cleans up nothing itself. Each worker's sshd sees its connection
    close, and the control scripts stop what they started (the hops, the feeds) and
    remove what they made; the temporary files beside the targets too."""
    keys_before = keys_state(farm.authorized_keys)
    s, _ = copy_reaching_the_last(tp, env, islands, tmp_path, "r11")
    os.killpg(s.proc.pid, signal.SIGKILL)
    assert s.finish(30).returncode == -signal.SIGKILL
    deadline = time.monotonic() + 60
    while (left := copy_left(islands, "r11")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == []
    assert keys_state(farm.authorized_keys) == keys_before


# A second local user on the workers, who reads whatever of the copy it can: it lists
# the worker's /tmp (TMPDIR) and everything under a relay's directory, and every hidden
# file beside the targets, and opens each file it finds. Run in a worker's mount
# namespace as nobody.
SPY = r"""
import os, sys, time
log, data, stop, tmp = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
with open(log, "a", buffering=1) as out:
    while not os.path.exists(stop):
        seen = [os.path.join(tmp, n) for n in os.listdir(tmp) if n.startswith("tpush-relay")]
        for d in seen:
            out.write(f"saw {d}\n")
            try:
                seen += [os.path.join(d, n) for n in os.listdir(d)]
                out.write(f"listed {d}\n")
            except OSError:
                pass
        if os.path.isdir(data):
            for n in os.listdir(data):
                if n.startswith("."):
                    out.write(f"saw {n}\n")
                    seen.append(os.path.join(data, n))
        for p in seen:
            try:
                with open(p, "rb") as f:
                    f.read(1)
                    st = os.fstat(f.fileno())
                out.write(f"read {p} {st.st_size} {st.st_mode & 0o777:o}\n")
            except OSError:
                pass
        time.sleep(0.005)
"""


def test_a_neighbour_on_the_workers_reads_nothing_of_the_copy(tp, env, farm, islands, tmp_path):
    """Another local user on two of the workers watches for the copy: it finds the
    relay's directory and the temporary files (so it looked while they were there), but
    can neither list the one nor open the others, and the copy is right."""
    # Somewhere nobody can read the spy and write its logs (pytest's tmp_path is root's alone).
    shared = Path(tempfile.mkdtemp(prefix="tpush-spy-"))
    shared.chmod(0o755)
    spy = shared / "spy.py"
    spy.write_text(SPY)
    stop = shared / "stop"
    src = tmp_path / "f"
    with open(src, "wb") as f:
        for _ in range(64):
            f.write(os.urandom(1024 * 1024))
    ks = PLAIN[:6]
    watched = [islands.islands[ks[1]], islands.islands[ks[-1]]]
    (islands.islands[ks[0]].path("r12")).mkdir(exist_ok=True)
    logs, spies = [], []
    for n, island in enumerate(watched):
        island.path("r12").mkdir(exist_ok=True)
        log = shared / f"spy{n}.log"
        log.touch()
        log.chmod(0o666)
        logs.append(log)
        spies.append(subprocess.Popen(
            # -r: the worker's own root too (entering a mount namespace alone would leave
            # a chroot, as a fresh-root run of the tests is, for the host's /).
            ["nsenter", "-t", str(island.pid), "-m", "-r", "--", "setpriv", "--reuid=65534", "--regid=65534",
             "--clear-groups", "/usr/bin/python3", str(spy), str(log), f"{islands.data}/r12", str(stop),
             str(island.tmp)],
            stdin=subprocess.DEVNULL))
    root_mode = islands.root.stat().st_mode
    islands.root.chmod(0o755)  # the targets' directory, as a shared machine's would be: others may look
    try:
        r = tp("--json", *hosts_arg(islands, ks), "cp", "--relay", src, f"{islands.data}/r12/f", env=env)
    finally:
        # The spies stop before the targets' directory is closed again: closed under a
        # spy's feet, its next listing fails for the test's doing, not tpush's (seen).
        stop.touch()
        for p in spies:
            p.wait(timeout=30)
        islands.root.chmod(root_mode)
        texts = [log.read_text() for log in logs]
        shutil.rmtree(shared, ignore_errors=True)
    assert r.returncode == 0, r
    for k in ks:
        assert sha(islands.islands[k].path("r12/f")) == sha(src), islands.hosts[k]
    for p in spies:
        assert p.returncode == 0  # nothing stopped the neighbour's process
    for text in texts:
        assert "/tpush-relay." in text, "the neighbour never saw the copy's directory"
        assert "saw .f.tpush-" in text, "the neighbour never saw a temporary file"
        # A file that checked out takes its mode just before it is renamed into place:
        # read then, it is what the target shows a moment later. Anything else is not
        # the neighbour's to read.
        done = f" {src.stat().st_size} 644"
        got = sorted({l for l in text.splitlines()
                      if l.startswith("listed ") or (l.startswith("read ") and not l.endswith(done))})
        assert got == [], f"the neighbour got at: {got[:20]}"


def test_one_tpu_slice_is_relayed_by_default_from_4_mib(tp, env, islands, tmp_path, fake_gcloud):
    """The workers of one TPU slice share a fast network: a copy of 4 MiB or more to 3 or
    more of them is relayed unless --no-relay says otherwise; a smaller one, or a host
    list, is sent to each worker as before."""
    g = fake_gcloud
    ks = PLAIN[:4]
    g.tpu("pod", [islands.islands[k].address for k in ks])
    genv = g.env(env)
    big, small = tmp_path / "big", tmp_path / "small"
    big.write_bytes(os.urandom(4 * 1024 * 1024))
    small.write_bytes(os.urandom(4 * 1024 * 1024 - 1))
    tpu = ["-v", "-t", "pod", "--project", g.project, "--zone", g.zone, "-p", islands.port, "cp"]
    r = tp(*tpu, big, f"{islands.data}/r7/", env=genv)
    assert r.returncode == 0, r
    assert "tpush: info: relay: attempt 1: 4 workers: tpush -> w0 -> w1 -> w2 -> w3" in r.err, r.err
    for k in ks:
        assert sha(islands.islands[k].path("r7/big")) == sha(big)
    for args in ([*tpu, small], [*tpu, "--no-relay", big], ["-v", *hosts_arg(islands, ks), "cp", big]):
        r = tp(*args, f"{islands.data}/r8/", env=genv)
        assert r.returncode == 0 and "relay:" not in r.err, r
    # relay = no in the config file turns the default off; --relay still asks for it
    config = tmp_path / "config"
    config.write_text("relay = no\n")
    r = tp(*tpu, big, f"{islands.data}/r8/", env={**genv, "TPUSH_CONFIG": str(config)})
    assert r.returncode == 0 and "relay:" not in r.err, r
    r = tp(*tpu, "--relay", big, f"{islands.data}/r8/", env={**genv, "TPUSH_CONFIG": str(config)})
    assert r.returncode == 0 and "tpush: info: relay: attempt 1: 4 workers" in r.err, r


def test_each_slice_of_a_multislice_gets_a_chain_of_its_own(tp, env, islands, tmp_path, fake_gcloud):
    """Slices share no fast network with each other: tpush feeds each slice once,
    and its workers pass the bytes on among themselves."""
    g = fake_gcloud
    slices = [PLAIN[:3], PLAIN[3:6]]
    g.queued_resource("ms", [[islands.islands[k].address for k in ks] for ks in slices])
    src = tmp_path / "f"
    src.write_bytes(os.urandom(4 * 1024 * 1024))
    r = tp("-v", "--queued-resource", "ms", "--project", g.project, "--zone", g.zone, "--internal-ip", "-p", islands.port,
           "cp", src, f"{islands.data}/r9/", env=g.env(env))
    assert r.returncode == 0, r
    chains = sorted(l.split("workers: ")[-1] for l in r.err.splitlines() if "relay: attempt 1:" in l)
    assert chains == ["tpush -> s0w0 -> s0w1 -> s0w2", "tpush -> s1w0 -> s1w1 -> s1w2"], r.err
    assert "tpush: relay: tpush sent the bytes 2 times; 4 of 6 workers got them from another worker" in r.err, r.err
    for k in PLAIN[:6]:
        assert sha(islands.islands[k].path("r9/f")) == sha(src), islands.hosts[k]


def test_relay_needs_every_worker_at_once(tp, env, islands, tmp_path):
    src = tmp_path / "f"
    src.write_bytes(b"x")
    r = tp(*hosts_arg(islands, PLAIN[:4]), "-f", "2", "cp", "--relay", src, f"{islands.data}/r9/", env=env)
    assert r.returncode == 2, r
    assert r.err == ("tpush: error: --relay needs every worker at once, and --fanout 2 is fewer than the 4 "
                     "workers (drop --fanout, or use --no-relay)\n"), r.err


def test_authorized_keys_are_never_touched_however_they_are_kept(tp, env, farm, islands, tmp_path):
    """The relay writes no key anywhere: a user's authorized_keys without a final newline,
    one that is a symlink, and one rewritten all along during the copy (read, write a
    temporary file, rename: as Google's guest agent does) are, byte for byte, inode and
    mtime, what they were (the rewritten one: what its writer last wrote), no line of the
    relay's ever appears in them."""
    no_newline, linked, rewritten = (islands.islands[k].dir / "authorized_keys" for k in OWN_KEYS)
    no_newline.write_bytes(no_newline.read_bytes().rstrip(b"\n"))
    elsewhere = tmp_path / "keys-elsewhere"
    shutil.move(linked, elsewhere)
    linked.symlink_to(elsewhere)
    before = {p: keys_state(p) for p in (no_newline, elsewhere)}
    link_before = os.lstat(linked)
    original = rewritten.read_bytes()
    seen, stop = [], threading.Event()

    def rewrite():
        n = 0
        while not stop.is_set():
            text = rewritten.read_bytes()
            seen.append(text)
            n += 1
            tmp = rewritten.with_name(f"authorized_keys.google{n}")
            tmp.write_bytes(original + f"# rewritten {n}\n".encode())
            os.replace(tmp, rewritten)

    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        src = tmp_path / "f"
        src.write_bytes(os.urandom(8 * 1024 * 1024))
        ks = [7, *OWN_KEYS, 11]
        r = tp("-v", "--json", *hosts_arg(islands, ks), "cp", "--relay", src, f"{islands.data}/r12/f", env=env)
    finally:
        stop.set()
        writer.join()
    assert r.returncode == 0, r
    res = results(r)
    for a, b in zip(ks, ks[1:]):
        assert came(res, islands.hosts[b]) == f"from {islands.hosts[a]}", res
    assert {p: keys_state(p) for p in (no_newline, elsewhere)} == before
    assert os.lstat(linked).st_ino == link_before.st_ino and os.readlink(linked) == str(elsewhere)
    assert len(seen) > 10 and all(t.startswith(original) and b"tpush-relay" not in t for t in seen), len(seen)
    assert rewritten.read_bytes().startswith(original) and b"tpush-relay" not in rewritten.read_bytes()
    assert settled(islands, farm, keys_state(farm.authorized_keys)) == []


def test_a_worker_that_asks_to_log_in_elsewhere_is_refused(tp, env, farm, islands, tmp_path):
    """A sending worker whose login runs something else too (here: every bash it starts
    tries to log in to another host with the agent it finds): tpush refuses the session-bind
    for a host that is no planned hop and everything after it, the copy goes on, and the
    other host never sees a login."""
    attacker = islands.islands[12]
    out = attacker.dir / "attack.out"
    target = f"-p {farm.port} {farm.addresses[0]}"
    attacker.bash_env.write_text(
        '[ "$0" = tpush-relay ] && [ -n "${SSH_AUTH_SOCK-}" ] && (\n'
        '  for i in 1 2 3 4 5 6 7 8 9 10; do\n'
        f'    ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null {target} '
        f'echo logged-in-elsewhere >> {out} 2>&1\n'
        '    sleep 0.2\n'
        '  done\n'
        ') > /dev/null 2>&1 &\n')
    logins_before = farm.sshd.log.read_text(errors="replace").count("Accepted publickey")
    try:
        src = tmp_path / "f"
        src.write_bytes(os.urandom(8 * 1024 * 1024))
        ks = [12, 13, 14]
        r = tp("-v", "--json", *hosts_arg(islands, ks), "cp", "--relay", src, f"{islands.data}/r13/f", env=env)
    finally:
        attacker.bash_env.unlink()
    assert r.returncode == 0, r
    res = results(r)
    assert came(res, islands.hosts[13]) == f"from {islands.hosts[12]}", res
    refusals = [l for l in r.err.splitlines() if l.startswith(f"tpush: info: {islands.hosts[12]}: relay: agent: refused: ")]
    assert any("a session-bind for a host that is no planned hop" in l for l in refusals), r.err
    for k in ks:
        assert sha(islands.islands[k].path("r13/f")) == sha(src), islands.hosts[k]
    assert "logged-in-elsewhere" not in (out.read_text() if out.exists() else "")
    assert farm.sshd.log.read_text(errors="replace").count("Accepted publickey") == logins_before


def test_a_key_only_in_the_users_agent_signs_each_hop_there(tp, env, farm, islands, tmp_path, agent):
    """tpush logged in with a key it has only in the user's agent: each hop's one signature
    is asked of that agent, over tpush's own connection to it, and the copy is relayed."""
    ssh_add(agent, farm.key("test_ecdsa"))  # authorized, and no file tpush reads
    src = tmp_path / "f"
    src.write_bytes(os.urandom(4 * 1024 * 1024))
    ks = PLAIN[:4]
    r = tp("-v", "--json", *hosts_arg(islands, ks), "cp", "--relay", src, f"{islands.data}/r14/f",
           env={**env, "SSH_AUTH_SOCK": str(agent)})
    assert r.returncode == 0, r
    passed = [l for l in r.err.splitlines() if "relay: agent: passing the login to " in l]
    assert len(passed) == len(ks) - 1 and "on to the user's agent" in passed[0], r.err
    res = results(r)
    for a, b in zip(ks, ks[1:]):
        assert came(res, islands.hosts[b]) == f"from {islands.hosts[a]}", res
    for k in ks:
        assert sha(islands.islands[k].path("r14/f")) == sha(src), islands.hosts[k]


def test_a_worker_without_ssh_stores_and_the_next_gets_the_bytes_from_tpush(tp, env, farm, islands, tmp_path):
    """No ssh on a sending worker: its hop fails (one -v line with ssh's status), it keeps
    its own copy, and tpush feeds the next worker, which passes the bytes on."""
    src = tmp_path / "f"
    src.write_bytes(os.urandom(4 * 1024 * 1024))
    ks = [1, NO_SSH, 3]
    r = tp("-v", "--json", *hosts_arg(islands, ks), "cp", "--relay", src, f"{islands.data}/r15/f", env=env)
    assert r.returncode == 0, r
    assert f"tpush: info: {islands.hosts[NO_SSH]}: relay: passing the bytes on failed (ssh exit " in r.err, r.err
    res = results(r)
    assert came(res, islands.hosts[NO_SSH]) == f"from {islands.hosts[1]}", res
    assert came(res, islands.hosts[3]) == "from tpush", res
    for k in ks:
        assert sha(islands.islands[k].path("r15/f")) == sha(src), islands.hosts[k]
    assert settled(islands, farm, keys_state(farm.authorized_keys)) == []
