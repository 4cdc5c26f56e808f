"""tpush cp / get / rsync against real sshds whose workers each have their own files.

The farm's workers share this machine's filesystem, so these tests start "islands": one
OpenSSH sshd per worker, each in its own mount namespace (`unshare -m`) with a private
tmpfs mounted on the same path DATA.  A worker's view of DATA is its own; the test reads
it through /proc/<sshd pid>/root/DATA (the sshd's mount namespace).

Contract checked here: a worker whose copy fails (permission denied, no space, missing
file) is a *failed* worker, exit status 1, its reason naming the path; the others succeed.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path

import pytest

from conftest import farm_mod
from islands import islands_fixture, tpush_for

ISLANDS = 16


@pytest.fixture(scope="module")
def islands(farm):
    yield from islands_fixture(farm, ISLANDS, {1: dict(sftp="internal-sftp -R"), 2: dict(tmpfs_size="256k")})


@pytest.fixture
def tp(tpush_bin, home, islands):
    return tpush_for(tpush_bin, home, islands)


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def hosts_arg(hosts: list[str]) -> list[str]:
    return ["-w", ",".join(hosts)]


# Workers 1 (read-only SFTP) and 2 (a 256 KiB disk) are special; the others are plain.
def plain(islands, n=None):
    ok = [i for k, i in enumerate(islands.islands) if k not in (1, 2)]
    return ok[:n] if n else ok


def test_cp_identical_bytes_everywhere(tp, islands, tmp_path):
    src = tmp_path / "blob.bin"
    src.write_bytes(os.urandom(3 * 1024 * 1024 + 17))
    workers = plain(islands, 8)
    dest = f"{islands.data}/t1/sub/dir/blob.bin"   # parents do not exist yet
    r = tp(*hosts_arg([f"{i.address}:{islands.port}" for i in workers]), "cp", src, dest)
    assert r.returncode == 0, r
    for i in workers:
        assert sha(i.path("t1/sub/dir/blob.bin")) == sha(src), i.address
        assert not [p for p in i.path("t1/sub/dir").iterdir() if ".tpush-tmp-" in p.name]
    # The other workers' filesystems were not touched (each worker's DATA is its own).
    assert not islands.islands[1].path("t1").exists()


def test_cp_into_dir_preserve_and_odd_names(tp, islands, tmp_path):
    a = tmp_path / "run me.sh"
    b = tmp_path / "naïve ünïcode.txt"
    a.write_text("#!/bin/sh\necho hi\n")
    b.write_text("héllo\n")
    os.chmod(a, 0o750)
    os.chmod(b, 0o600)
    os.utime(a, (1_600_000_000, 1_600_000_000))
    os.utime(b, (1_500_000_000, 1_500_000_000))
    workers = plain(islands, 3)
    r = tp(*hosts_arg([f"{i.address}:{islands.port}" for i in workers]), "cp", "-p", a, b,
           f"{islands.data}/t2/")
    assert r.returncode == 0, r
    for i in workers:
        for src in (a, b):
            dst = i.path(f"t2/{src.name}")
            assert dst.read_bytes() == src.read_bytes()
            st = dst.stat()
            assert (st.st_mode & 0o7777) == (src.stat().st_mode & 0o7777)
            assert int(st.st_mtime) == int(src.stat().st_mtime)


def test_cp_recursive_tree(tp, islands, tmp_path):
    tree = tmp_path / "src"
    (tree / "a" / "b" / "c").mkdir(parents=True)
    (tree / "empty").mkdir()
    files = {"top.txt": b"top\n", "a/one.bin": os.urandom(70000), "a/b/two.txt": b"two\n",
             "a/b/c/three with space.txt": b"3\n", "a/b/c/zero": b""}
    for rel, data in files.items():
        (tree / rel).write_bytes(data)
    workers = plain(islands, 4)
    hosts = hosts_arg([f"{i.address}:{islands.port}" for i in workers])
    r = tp(*hosts, "cp", "-r", tree, f"{islands.data}/t3/copy")
    assert r.returncode == 0, r
    # Again: the tree is replaced file by file in place (no copy/copy nesting).
    r = tp(*hosts, "cp", "-r", tree, f"{islands.data}/t3/copy")
    assert r.returncode == 0, r
    for i in workers:
        for rel, data in files.items():
            assert i.path(f"t3/copy/{rel}").read_bytes() == data
        assert i.path("t3/copy/empty").is_dir()
        assert not i.path("t3/copy/copy").exists()


def test_cp_directory_without_r_is_usage_error(tp, islands, tmp_path):
    r = tp(*hosts_arg(islands.hosts[:1]), "cp", tmp_path, f"{islands.data}/x")
    assert r.returncode == 2 and "use -r" in r.err, r


def test_cp_failures_are_per_worker(tp, islands, tmp_path):
    """Read-only SFTP on worker 1, a full disk on worker 2: both fail with the path and a
    reason; every other worker gets the file; exit 1."""
    src = tmp_path / "big.bin"
    src.write_bytes(os.urandom(1024 * 1024))
    r = tp(*hosts_arg(islands.hosts[:6]), "cp", src, f"{islands.data}/t4/big.bin")
    assert r.returncode == 1, r
    s = r.summary()
    assert s.ok == 4 and s.failed == 2, r
    bad_ro, bad_full = islands.hosts[1], islands.hosts[2]
    assert "t4/big.bin" in s.reasons[bad_ro] and "permission denied" in s.reasons[bad_ro], r
    assert "t4/big.bin" in s.reasons[bad_full] and "no space" in s.reasons[bad_full], r
    for k in (0, 3, 4, 5):
        assert sha(islands.islands[k].path("t4/big.bin")) == sha(src)
    full = islands.islands[2].path("t4")
    assert not (full / "big.bin").exists()
    assert not [p for p in full.iterdir() if ".tpush-tmp-" in p.name], "temporary file left behind"


def test_cp_interrupt_leaves_no_partial_target(tp, islands, tmp_path):
    src = tmp_path / "huge.bin"
    with open(src, "wb") as f:
        for _ in range(200):
            f.write(os.urandom(1024 * 1024))
    workers = plain(islands, 3)
    s = tp.stream(*hosts_arg([f"{i.address}:{islands.port}" for i in workers]), "-f", "1",
                  "cp", src, f"{islands.data}/t5/huge.bin")
    deadline = time.monotonic() + 60
    started = False
    while time.monotonic() < deadline and not started:
        d = workers[0].path("t5")
        started = d.is_dir() and any(".tpush-tmp-" in p.name and p.stat().st_size > 0 for p in d.iterdir())
        time.sleep(0.01)
    assert started, s.result()
    os.killpg(s.proc.pid, signal.SIGINT)
    r = s.finish(30)
    assert r.returncode == 130, r
    for i in workers:
        assert not i.path("t5/huge.bin").exists(), i.address
        # one Ctrl-C lets the upload remove its temporary file too
        leftovers = [p.name for p in i.path("t5").iterdir()] if i.path("t5").is_dir() else []
        assert leftovers == [], (i.address, leftovers)


def test_get_into_per_worker_folders(tp, islands, tmp_path):
    workers = plain(islands, 5)
    for k, i in enumerate(workers):
        if k == 3:
            continue  # this worker has no such file
        d = i.path("t6/logs")
        d.mkdir(parents=True)
        (d / "train.log").write_text(f"log of {i.address}\n")
        (d / "nested").mkdir()
        (d / "nested" / "x.txt").write_text(i.address)
    out = tmp_path / "got"
    r = tp(*hosts_arg([f"{i.address}:{islands.port}" for i in workers]), "get",
           f"{islands.data}/t6/logs/train.log", out)
    assert r.returncode == 1, r
    s = r.summary()
    missing = f"{workers[3].address}:{islands.port}"
    assert s.failed == 1 and "train.log" in s.reasons[missing] and "no such file" in s.reasons[missing], r
    for k, i in enumerate(workers):
        f = out / f"{i.address}:{islands.port}" / "train.log"
        assert f.exists() == (k != 3)
        if k != 3:
            assert f.read_text() == f"log of {i.address}\n"
    # -r: the whole tree, per worker
    r = tp(*hosts_arg([f"{i.address}:{islands.port}" for i in workers[:2]]), "get", "-r",
           f"{islands.data}/t6/logs", out / "trees")
    assert r.returncode == 0, r
    for i in workers[:2]:
        assert (out / "trees" / f"{i.address}:{islands.port}" / "logs" / "nested" / "x.txt").read_text() == i.address


def test_rsync_delete_on_16_workers(tp, islands, tmp_path):
    src = tmp_path / "site"
    (src / "sub").mkdir(parents=True)
    (src / "index.html").write_text("hello\n")
    (src / "sub" / "data.bin").write_bytes(os.urandom(50000))
    for i in islands.islands:  # something stale that --delete must remove
        d = i.path("t7/site/old")
        d.mkdir(parents=True)
        (d / "stale.txt").write_text("stale")
    r = tp(*hosts_arg(islands.hosts), "rsync", "-a", "--delete", f"{src}/", f":{islands.data}/t7/site/",
           timeout=300)
    # Island 1 serves read-only SFTP only; rsync goes over a shell, so all 16 succeed.
    assert r.returncode == 0, r
    for i in islands.islands:
        root = i.path("t7/site")
        assert (root / "index.html").read_text() == "hello\n"
        assert sha(root / "sub" / "data.bin") == sha(src / "sub" / "data.bin")
        assert not (root / "old").exists()


def test_rsync_remote_rsync_missing_is_clear(tp, islands, tmp_path):
    (tmp_path / "f").write_text("x")
    r = tp(*hosts_arg(islands.hosts[:2]), "rsync", "--rsync-path=no-such-rsync", str(tmp_path / "f"),
           f":{islands.data}/t8/")
    assert r.returncode == 1, r
    assert "not installed on the worker" in r.err, r


def test_rsync_needs_a_remote_side(tp, islands, tmp_path):
    r = tp(*hosts_arg(islands.hosts[:1]), "rsync", "-a", str(tmp_path), str(tmp_path / "x"))
    assert r.returncode == 2 and ":PATH" in r.err, r


def test_rsync_unreachable_worker_says_why(tp, islands, tmp_path):
    (tmp_path / "f").write_text("x")
    dead = f"127.0.150.250:{farm_mod.free_port('127.0.150.250')}"
    r = tp(*hosts_arg([islands.hosts[0], dead]), "rsync", str(tmp_path / "f"), f":{islands.data}/t9/")
    assert r.returncode == 255, r
    s = r.summary()
    assert s.ok == 1 and s.unreachable == 1, r
    assert "Connection refused" in s.reasons[dead], r
