"""Public-key authentication: ed25519, ECDSA and RSA (OpenSSH format) keys via -i, the
default key in ~/.ssh, ssh-agent, and a key the server does not accept."""

import os
import signal
import subprocess
import time

import pytest

from conftest import host_args, split_prefixed


def whoami_cmd():
    return 'set -- $SSH_CONNECTION; echo "$(id -un)@$3"'


def check_all_ok(r, farm, n):
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, farm.hosts[:n])
    for h, a in zip(farm.hosts[:n], farm.addresses[:n]):
        assert lines[h] == [f"root@{a}"], str(r)


def test_default_key_from_home(farm, tpush):
    """Without -i or an agent, ~/.ssh/id_ed25519 is used."""
    r = tpush(*host_args(farm.hosts[:4]), whoami_cmd())
    check_all_ok(r, farm, 4)


@pytest.mark.parametrize("key", ["id_ed25519", "test_ecdsa", "test_rsa"])
def test_identity_file_types(farm, tpush, bare_home, key):
    """ed25519, ECDSA and RSA (OpenSSH-format, rsa-sha2) keys each work with -i, alone."""
    r = tpush("-i", farm.key(key), *host_args(farm.hosts[:4]), whoami_cmd())
    check_all_ok(r, farm, 4)


def test_wrong_key_auth_failed(farm, tpush, bare_home):
    """Only a key the server does not accept: every worker fails `auth failed (tried: ...)`
    naming the key, exit 255."""
    hosts = farm.hosts[:3]
    r = tpush("-i", farm.key("wrong_ed25519"), *host_args(hosts), "echo should not run")
    assert r.returncode == 255, str(r)
    assert r.out == "", str(r)
    s = r.summary()
    assert (s.total, s.ok, s.unreachable) == (3, 0, 3), str(r)
    for h in hosts:
        reason = s.reasons.get(h, "")
        assert reason.startswith("auth failed") and "(tried: " in reason, str(r)
        assert "wrong_ed25519" in reason, str(r)


def test_wrong_key_then_good_key(farm, tpush, bare_home):
    """A refused key first does not stop tpush trying the next one."""
    r = tpush("-i", farm.key("wrong_ed25519"), "-i", farm.key("test_ecdsa"),
              *host_args(farm.hosts[:3]), whoami_cmd())
    check_all_ok(r, farm, 3)


@pytest.fixture
def agent(tmp_path):
    """A private ssh-agent (foreground, killed by PID at teardown); yields its socket path."""
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        end = time.monotonic() + 10
        while not sock.exists():  # poll for the socket
            if proc.poll() is not None or time.monotonic() > end:
                pytest.fail("ssh-agent did not create its socket")
            time.sleep(0.01)
        yield sock
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def ssh_add(sock, key):
    env = dict(os.environ, SSH_AUTH_SOCK=str(sock))
    subprocess.run(["ssh-add", "-q", str(key)], env=env, check=True, timeout=30,
                   stdin=subprocess.DEVNULL, capture_output=True)


@pytest.mark.parametrize("key", ["id_ed25519", "test_rsa"])
def test_agent_auth(farm, tpush, bare_home, agent, key):
    """Keys only in ssh-agent (HOME has none): SSH_AUTH_SOCK is used."""
    ssh_add(agent, farm.key(key))
    r = tpush(*host_args(farm.hosts[:4]), whoami_cmd(), env=tpush.env(SSH_AUTH_SOCK=agent))
    check_all_ok(r, farm, 4)


def test_agent_with_wrong_key_falls_back_to_identity_file(farm, tpush, bare_home, agent):
    """The agent is tried first; when its key is refused, -i is tried next."""
    ssh_add(agent, farm.key("wrong_ed25519"))
    r = tpush("-i", farm.key("test_ecdsa"), *host_args(farm.hosts[:3]), whoami_cmd(),
              env=tpush.env(SSH_AUTH_SOCK=agent))
    check_all_ok(r, farm, 3)
