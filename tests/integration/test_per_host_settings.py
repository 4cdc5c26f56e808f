"""A user@ or :port written in the host list is that host's own: it wins over -l and -p,
which are the defaults for the hosts that name none (pdsh's and pssh's rule), with pdsh
itself as the oracle for the user; a label never names a port that was not used."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import IS_ROOT, USER, output_lines
from farm import Sshd, free_port, known_hosts_lines, public_key

WHOAMI = 'echo "$(id -un) ${SSH_CONNECTION##* }"'  # the user, and the port the worker was reached on


@pytest.fixture
def second_user(farm, tmp_path, home):
    """A login user besides this test's, and an sshd on every loopback address that lets
    both in with the farm's key (authorized_keys is read as the user logging in, so it
    lives in the new user's home). Root only: useradd, and a user's sshd lets in only
    that user. Removed afterwards (the sshd by PID, the user with userdel)."""
    if not IS_ROOT:
        pytest.skip(f"a second login user needs root (useradd); running as {USER}")
    if shutil.which("useradd") is None:
        pytest.skip("useradd not installed")
    name = "tpush-" + secrets.token_hex(4)
    # Password '*': no password, and not locked ('!', useradd's default), which sshd refuses.
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--password", "*", name], check=True,
                   capture_output=True)
    sshd = None
    try:
        ssh_dir = Path("/home") / name / ".ssh"
        ssh_dir.mkdir(mode=0o755)
        authorized = ssh_dir / "authorized_keys"
        authorized.write_text(public_key(farm.key("id_ed25519")) + "\n")
        authorized.chmod(0o644)
        for _ in range(5):  # retry if someone grabs the free port before sshd binds it
            sshd = Sshd(tmp_path / "sshd", "0.0.0.0", free_port(), authorized,
                        extra_config=f"AllowUsers {name}@127.0.0.0/8")
            try:
                sshd.start(farm.addresses[0])
                break
            except (RuntimeError, TimeoutError) as e:
                if "Address already in use" not in str(e):
                    raise
        with open(home / ".ssh" / "known_hosts", "a") as f:
            f.write(known_hosts_lines(farm.addresses, sshd.port, sshd.host_key_files))
        yield name, sshd
    finally:
        if sshd is not None:
            sshd.stop()
        subprocess.run(["userdel", "--force", "--remove", name], capture_output=True)


def pdsh_users(home: Path, port: int, user: str, hosts: str) -> dict[str, str]:
    """Which user pdsh -R ssh -l USER -w HOSTS ran as on each host (its ssh reads a config
    file with the farm's key, known_hosts and PORT)."""
    config = home / "pdsh_ssh_config"
    config.write_text(f"Host *\n  Port {port}\n  IdentityFile {home / '.ssh' / 'id_ed25519'}\n"
                      f"  IdentitiesOnly yes\n  UserKnownHostsFile {home / '.ssh' / 'known_hosts'}\n"
                      "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n")
    env = {**os.environ, "HOME": str(home), "PDSH_SSH_ARGS": f"-F {config} -l%u %h"}
    p = subprocess.run(["pdsh", "-S", "-R", "ssh", "-l", user, "-w", hosts, "id -un"], env=env, capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert p.returncode == 0, p.stderr  # -S: a host that failed fails pdsh
    return dict(line.split(": ", 1) for line in p.stdout.splitlines())


def test_a_user_in_the_host_list_wins_over_l_as_in_pdsh(farm, tpush, home, second_user):
    """pdsh -l alice -w bob@h1,h2 runs as bob on h1 and alice on h2; so does tpush."""
    if shutil.which("pdsh") is None:
        pytest.skip("pdsh not installed (the oracle): apt-get install pdsh")
    other, sshd = second_user
    a, b, c = farm.addresses[:3]
    for l_user, hosts in ((USER, f"{other}@{a},{b}"), (other, f"{USER}@{a},{b},{other}@{c}")):
        expected = pdsh_users(home, sshd.port, l_user, hosts)
        assert len(expected) == hosts.count(",") + 1, expected
        r = tpush("-p", sshd.port, "-l", l_user, "-w", hosts, "id -un")
        assert r.returncode == 0, str(r)
        got = {label: lines[0] for label, lines in output_lines(r.out, list(expected)).items()}
        assert got == expected, str(r)
        assert sorted(set(got.values())) == sorted({USER, other})  # both rules were at work
    r = tpush("-p", sshd.port, "-l", USER, "-w", f"{other}@{a},{b}", "workers", "-v")
    assert r.returncode == 0, str(r)
    assert f"user {other} (host list)" in r.out and f"user {USER} (-l)" in r.out, str(r)


def test_a_port_in_the_host_list_wins_over_p(farm, tpush):
    """-p is the port of the hosts written without one; the label b:PORT names the port used."""
    a, b = farm.addresses[:2]
    r = tpush("-p", "1", "-w", f"{a},{b}:{farm.port}", WHOAMI)
    assert r.returncode == 255, str(r)
    assert output_lines(r.out, [a, f"{b}:{farm.port}"])[f"{b}:{farm.port}"] == [f"{USER} {farm.port}"], str(r)
    s = r.summary()
    assert (s.ok, s.unreachable) == (1, 1) and a in s.reasons, str(r)  # refused on port 1
    r = tpush("-p", "1", "-w", f"{a},{b}:{farm.port}", "workers", "-v")
    assert r.returncode == 0, str(r)
    assert "port 1 (-p)" in r.out and f"port {farm.port} (host list)" in r.out, str(r)
