"""The farm itself, checked with OpenSSH's client (runs even before tpush is built)."""

import subprocess

import pytest

from conftest import USER


def ssh(farm, home, address, command, key="id_ed25519", known_hosts=None):
    argv = ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
            "-o", "StrictHostKeyChecking=yes", "-o", "ConnectTimeout=10",
            "-o", f"UserKnownHostsFile={known_hosts or home / '.ssh' / 'known_hosts'}",
            "-i", str(home / ".ssh" / key), "-p", str(farm.port), f"{USER}@{address}", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("key", ["id_ed25519", "test_ecdsa", "test_rsa"])
def test_farm_answers_on_each_address(farm, home, key):
    for address in (farm.addresses[0], farm.addresses[-1]):
        r = ssh(farm, home, address, "set -- $SSH_CONNECTION; echo $3 $4; echo $PATH", key=key)
        assert r.returncode == 0, r.stderr
        first, path = r.stdout.splitlines()
        assert first == f"{address} {farm.port}"
        assert "pyenv" not in path, "root's .bashrc ran (SetEnv SHLVL=1 not effective)"


def test_farm_rejects_wrong_key(farm, home):
    r = ssh(farm, home, farm.addresses[1], "true", key="wrong_ed25519")
    assert r.returncode == 255 and "Permission denied" in r.stderr, r.stderr


def test_farm_files(farm):
    assert farm.hosts_file.read_text().splitlines() == farm.hosts
    assert len(farm.hosts) >= 64
    env = farm.env_file.read_text()
    assert f"TPUSH_FARM_PORT={farm.port}" in env and f"HOME={farm.home}" in env
    kh = farm.known_hosts.read_text()
    assert f"[{farm.addresses[-1]}]:{farm.port} ssh-ed25519 " in kh
