"""Public-key authentication: ed25519, ECDSA and RSA keys (OpenSSH, PEM and PKCS#8 files,
encrypted ones with a passphrase typed once) via -i, the default key in ~/.ssh, ssh-agent,
and a key the server does not accept."""

import os
import pty
import select
import shutil
import signal
import subprocess
import time

import pytest

from conftest import USER, host_args, split_prefixed, ssh_add


def whoami_cmd():
    return 'set -- $SSH_CONNECTION; echo "$(id -un)@$3"'


def check_all_ok(r, farm, n):
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, farm.hosts[:n])
    for h, a in zip(farm.hosts[:n], farm.addresses[:n]):
        assert lines[h] == [f"{USER}@{a}"], str(r)


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


def converted_key(farm, tmp_path, key, *keygen_args):
    """A copy of an authorized farm key rewritten by `ssh-keygen -p` in another format or
    with a passphrase (the public key, hence authorization, stays the same)."""
    dest = tmp_path / f"{key}-converted"
    shutil.copyfile(farm.key(key), dest)
    dest.chmod(0o600)
    subprocess.run(["ssh-keygen", "-q", "-p", "-P", "", *keygen_args, "-f", str(dest)],
                   check=True, timeout=30, stdin=subprocess.DEVNULL, capture_output=True)
    return dest


@pytest.mark.parametrize("key,fmt", [("test_rsa", "PEM"), ("test_rsa", "PKCS8"),
                                     ("test_ecdsa", "PEM"), ("test_ecdsa", "PKCS8")])
def test_identity_file_pem_formats(farm, tpush, bare_home, tmp_path, key, fmt):
    """RSA and ECDSA keys in PEM (PKCS#1 / SEC1) and PKCS#8 files work like OpenSSH-format
    ones, and tpush decodes them once for all workers (-v says so)."""
    path = converted_key(farm, tmp_path, key, "-N", "", "-m", fmt)
    assert "BEGIN OPENSSH" not in path.read_text()
    r = tpush("-v", "-i", path, *host_args(farm.hosts[:4]), whoami_cmd())
    check_all_ok(r, farm, 4)
    assert f"key {path}: decoded once" in r.err, r.err


def run_on_pty(argv, env, answer, timeout=60):
    """Run argv with a new pseudo-terminal as its controlling terminal; when it prompts for
    a passphrase, type `answer`. Returns (exit status, everything it wrote, prompts seen)."""
    pid, fd = pty.fork()
    if pid == 0:  # child
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    out, prompts = b"", 0
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
            if out.count(b"Enter passphrase") > prompts:
                prompts += 1
                os.write(fd, answer.encode() + b"\n")
        else:
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"no exit within {timeout}s on a pty: {out[-2000:]!r}")
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace"), prompts


@pytest.mark.parametrize("fmt", ["PEM", "OpenSSH"])
def test_encrypted_key_asks_once_on_the_terminal(farm, tpush, bare_home, tmp_path, fmt):
    """An encrypted key without an agent: one passphrase prompt on the terminal for the whole
    run (not one per worker), then every worker authenticates. A PEM key is decrypted by
    tpush once; an OpenSSH-format one (bcrypt KDF) is left to libssh2."""
    args = ["-m", "PEM"] if fmt == "PEM" else []
    path = converted_key(farm, tmp_path, "test_rsa", "-N", "pass word", *args)
    hosts = farm.hosts[:6]
    code, out, prompts = run_on_pty(
        [str(tpush.binary), "-v", "-i", str(path), *host_args(hosts), whoami_cmd()],
        tpush.env(), "pass word")
    assert prompts == 1, out
    assert code == 0, out
    for a in farm.addresses[:6]:
        assert f"{USER}@{a}" in out, out
    assert ("decoded once" if fmt == "PEM" else "libssh2 reads it per session") in out, out


def test_encrypted_key_wrong_passphrase_is_auth_failure(farm, tpush, bare_home, tmp_path):
    """A wrong passphrase: the key cannot be used; every worker fails naming the key."""
    path = converted_key(farm, tmp_path, "test_rsa", "-N", "right", "-m", "PEM")
    code, out, prompts = run_on_pty(
        [str(tpush.binary), "-i", str(path), *host_args(farm.hosts[:2]), whoami_cmd()],
        tpush.env(), "wrong")
    assert prompts == 1, out
    assert code == 255, out
    assert "auth failed" in out and path.name in out, out
