"""Workers with filesystems of their own: one sshd per address, each in its own
mount namespace with a private tmpfs (or a directory of its own bound) on a
shared path (needs root and `unshare -m`), so a copy to N workers really writes
N copies. Used by the copy and relay tests and by bench/relay.py."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import farm as farm_mod


def have_unshare() -> bool:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    return r.returncode == 0


class Island(farm_mod.Sshd):
    """An sshd in its own mount namespace with a private tmpfs on `data`."""

    def __init__(self, directory: Path, address: str, port: int, authorized_keys: Path, data: Path,
                 tmpfs_size: str = "1g", sftp: str = "internal-sftp", broken: str | None = None,
                 disk: Path | None = None, allow_from: str = "127.0.0.0/8", extra_config: str = ""):
        """`broken`: a program (an absolute path) that fails on this worker (/bin/false in its place).
        `disk`: a directory bound on `data` instead of a tmpfs (for copies larger than memory).
        `extra_config`: sshd_config lines of its own."""
        super().__init__(directory, address, port, authorized_keys, allow_from=allow_from,
                         extra_config=extra_config)
        self.address, self.data, self.tmpfs_size, self.sftp = address, data, tmpfs_size, sftp
        self.broken, self.disk = broken, disk

    @property
    def tmp(self) -> Path:
        """The sessions' TMPDIR: a /tmp of this worker's own (mode 1777, as /tmp is), so
        what a test looks for there is this worker's, not another test's or the user's."""
        return self.dir / "tmp"

    def write_config(self) -> None:
        super().write_config()
        self.tmp.mkdir(exist_ok=True)
        self.tmp.chmod(0o1777)
        text = self.config.read_text().replace("Subsystem sftp internal-sftp", f"Subsystem sftp {self.sftp}")
        text = text.replace("SetEnv SHLVL=1 ", f"SetEnv SHLVL=1 TMPDIR={self.tmp} ")
        self.config.write_text(text)

    def start(self, ready_address=None, timeout: float = 30) -> "Island":
        self.dir.mkdir(parents=True, exist_ok=True)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        self.make_host_keys()
        self.write_config()
        subprocess.run([farm_mod.SSHD, "-t", "-f", str(self.config)], check=True, timeout=30,
                       stdin=subprocess.DEVNULL, capture_output=True)
        if self.disk is not None:
            script = f"mount --bind {self.disk} {self.data} && "
        else:
            script = f"mount -t tmpfs -o size={self.tmpfs_size},mode=0755 tpush-island {self.data} && "
        if self.broken:
            script += f"mount --bind /bin/false {self.broken} && "
        script += "exec " + shlex.join(farm_mod.sshd_command(self.config, self.log))
        self.proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        self.pid = self.proc.pid
        try:
            farm_mod.wait_for_banner(self.address, self.port, time.monotonic() + timeout, self.proc, self.log)
        except BaseException:
            self.stop()
            raise
        return self

    def path(self, rel: str) -> Path:
        """`DATA/rel` as this worker sees it."""
        return Path(f"/proc/{self.pid}/root") / str(self.data).lstrip("/") / rel


class Islands:
    def __init__(self, farm, count: int, specials: dict | None = None, subnet: int = 150,
                 address_of=None, common: dict | None = None):
        """Worker k listens on 127.0.SUBNET.(k+1), or on `address_of(k)`. `specials`
        maps k to Island arguments, `common` gives every worker some; an
        `authorized_keys` of "own" gives worker k a copy of the farm's keys file of
        its own (a file tpush's relay does not write)."""
        self.root = Path(tempfile.mkdtemp(prefix="tpush-islands-"))
        self.data = self.root / "data"
        self.data.mkdir()
        self.port = farm_mod.free_port()
        self.authorized_keys = farm.authorized_keys
        self.islands: list[Island] = []
        keys_dir = self.root / "keys"
        keys_dir.mkdir()
        # Every island shares one set of host keys (one known_hosts line per address).
        proto = farm_mod.Sshd(keys_dir, "127.0.0.1", 1, farm.authorized_keys)
        proto.make_host_keys()
        self.host_key_files = proto.host_key_files
        specials = {} if specials is None else specials
        try:
            for k in range(count):
                d = self.root / f"w{k}"
                d.mkdir()
                for f in self.host_key_files:
                    shutil.copy(f, d / f.name)
                    shutil.copy(f.with_name(f.name + ".pub"), d / (f.name + ".pub"))
                extra = dict(common or {}) | dict(specials.get(k, {}))
                if callable(extra.get("disk")):
                    extra["disk"] = extra["disk"](k)
                keys = farm.authorized_keys
                if extra.pop("authorized_keys", None) == "own":
                    keys = d / "authorized_keys"
                    shutil.copy(farm.authorized_keys, keys)
                address = address_of(k) if address_of else f"127.0.{subnet}.{k + 1}"
                isl = Island(d, address, self.port, keys, self.data, **extra)
                self.islands.append(isl.start())
        except BaseException:
            self.stop()
            raise

    @property
    def hosts(self) -> list[str]:
        return [f"{i.address}:{self.port}" for i in self.islands]

    def known_hosts(self) -> str:
        return farm_mod.known_hosts_lines([i.address for i in self.islands], self.port, self.host_key_files)

    def stop(self) -> None:
        for i in self.islands:
            i.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def tpush_for(tpush_bin, home, islands: Islands):
    """A Tpush whose known_hosts holds the islands' host keys."""
    from conftest import Tpush
    with open(home / ".ssh" / "known_hosts", "a") as f:
        f.write(islands.known_hosts())
    return Tpush(tpush_bin, home)


def islands_fixture(farm, count: int, specials: dict | None = None, subnet: int = 150):
    """The body of a module fixture: Islands started, yielded, stopped; skipped where
    mount namespaces are not available (not root, or no unshare -m)."""
    import pytest
    if not have_unshare():
        pytest.skip("needs root and unshare -m (mount namespaces) for per-worker filesystems")
    isl = Islands(farm, count, specials, subnet)
    try:
        yield isl
    finally:
        isl.stop()
