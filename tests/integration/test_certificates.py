"""OpenSSH user certificates: a server that trusts a certificate authority (TrustedUserCAKeys)
and has no authorized_keys at all lets a key in only with a certificate. tpush offers one
found beside its key (KEY-cert.pub), named by CertificateFile (ssh_config or -o), or held by
the agent; a refused one says why where the client can tell (expired, not for this user);
a certificate that cannot be used is a one-line usage error."""

import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import USER, host_args, split_prefixed, ssh_add


def keygen(*args) -> None:
    subprocess.run(["ssh-keygen", "-q", *map(str, args)], check=True, timeout=30,
                   stdin=subprocess.DEVNULL, capture_output=True)


class CertServer:
    """One sshd (faults.OtherSshd) whose only way in is a certificate signed by `ca`."""

    def __init__(self, faults, directory: Path, home: Path):
        self.ca = directory / "ca"
        keygen("-t", "ed25519", "-N", "", "-C", "tpush-test-ca", "-f", self.ca)
        self.sshd = faults.other_sshd(extra_config=(
            "Match all\n"
            "  AuthorizedKeysFile none\n"
            f"  TrustedUserCAKeys {self.ca}.pub\n"))
        with open(home / ".ssh" / "known_hosts", "a") as f:
            f.write(self.sshd.own_known_hosts_lines())
        self.host = self.sshd.host

    def sign(self, public_key: Path, principals: str = USER, validity: str | None = None) -> Path:
        """ssh-keygen -s: KEY-cert.pub beside KEY.pub."""
        args = ["-s", self.ca, "-I", "tpush-test-id", "-n", principals]
        if validity:
            args += ["-V", validity]
        keygen(*args, public_key)
        return Path(str(public_key).removesuffix(".pub") + "-cert.pub")


@pytest.fixture
def cert_server(faults, tmp_path, bare_home):
    return CertServer(faults, tmp_path, bare_home)


def user_key(home: Path, name: str, kind: str = "ed25519") -> Path:
    path = home / ".ssh" / name
    keygen("-t", kind, "-N", "", "-C", f"tpush-test-{name}", "-f", path)
    return path


def whoami(tpush, server, *args, **kw):
    return tpush(*args, *host_args([server.host]), "id -un", **kw)


def logged_in(r, server) -> bool:
    return r.returncode == 0 and split_prefixed(r.out, [server.host])[server.host] == [USER]


@pytest.mark.parametrize("kind", ["ed25519", "rsa", "ecdsa"])
def test_certificate_beside_the_key(tpush, cert_server, bare_home, kind):
    """KEY-cert.pub beside a default key is offered with it: without the certificate the
    same key is refused (the server has no authorized_keys), with it the login works. An RSA
    certificate is signed with SHA-2 (OpenSSH refuses ssh-rsa)."""
    key = user_key(bare_home, f"id_{kind}", kind)
    r = whoami(tpush, cert_server)
    assert r.returncode == 255 and "auth failed" in r.summary().reasons.get(cert_server.host, ""), str(r)
    cert_server.sign(key.with_suffix(".pub"))
    r = whoami(tpush, cert_server)
    assert logged_in(r, cert_server), str(r)


def test_certificate_with_identity_file(tpush, cert_server, bare_home, tmp_path):
    """-i KEY takes KEY-cert.pub with it, wherever KEY is."""
    key = user_key(bare_home, "elsewhere")
    moved = tmp_path / "keys"
    moved.mkdir()
    shutil.move(key, moved / "k")
    shutil.move(key.with_suffix(".pub"), moved / "k.pub")
    cert_server.sign(moved / "k.pub")
    r = whoami(tpush, cert_server, "-i", moved / "k")
    assert logged_in(r, cert_server), str(r)


def test_certificate_file_from_ssh_config_and_o(tpush, cert_server, bare_home, tmp_path):
    """CertificateFile names a certificate kept apart from its key, in ~/.ssh/config or
    with -o; its key comes from IdentityFile."""
    key = user_key(bare_home, "work")
    cert = cert_server.sign(key.with_suffix(".pub"))
    apart = tmp_path / "certs" / "work.cert"
    apart.parent.mkdir()
    shutil.move(cert, apart)
    config = bare_home / ".ssh" / "config"
    config.write_text(f"Host *\n  IdentityFile ~/.ssh/work\n")
    r = whoami(tpush, cert_server)
    assert r.returncode == 255, str(r)  # the key alone: refused

    r = whoami(tpush, cert_server, "-o", f"CertificateFile={apart}")
    assert logged_in(r, cert_server), str(r)

    config.write_text(f"Host *\n  IdentityFile ~/.ssh/work\n  CertificateFile {apart}\n")
    r = whoami(tpush, cert_server)
    assert logged_in(r, cert_server), str(r)
    r = tpush("workers", "-v", *host_args([cert_server.host]))
    assert f"{apart} (" in r.out, str(r)


@pytest.mark.parametrize("kind", ["ed25519", "rsa"])
def test_certificate_in_the_agent(tpush, cert_server, bare_home, agent, kind):
    """ssh-add KEY adds KEY-cert.pub too; with the files gone, tpush logs in with the
    agent's certificate (RSA ones signed with SHA-2 by the agent)."""
    key = user_key(bare_home, "agentkey", kind)
    cert_server.sign(key.with_suffix(".pub"))
    ssh_add(agent, key)
    for f in bare_home.glob(".ssh/agentkey*"):
        f.unlink()
    r = whoami(tpush, cert_server, env=tpush.env(SSH_AUTH_SOCK=agent))
    assert logged_in(r, cert_server), str(r) + cert_server.sshd.sshd.log.read_text()


def test_expired_certificate_says_so(tpush, cert_server, bare_home):
    """A certificate past its validity is refused; the summary says since when."""
    key = user_key(bare_home, "id_ed25519")
    cert_server.sign(key.with_suffix(".pub"), validity="20200101000000Z:20200102000000Z")
    r = whoami(tpush, cert_server)
    assert r.returncode == 255, str(r)
    reason = r.summary().reasons.get(cert_server.host, "")
    assert reason.startswith("auth failed"), str(r)
    assert "~/.ssh/id_ed25519-cert.pub expired 2020-01-02 00:00:00 UTC" in reason, str(r)


def test_certificate_for_other_principals_says_so(tpush, cert_server, bare_home, agent):
    """A certificate for other users is refused; the summary names its principals, for a
    file and for the agent's certificate alike."""
    key = user_key(bare_home, "id_ed25519")
    cert_server.sign(key.with_suffix(".pub"), principals="alice,bob")
    r = whoami(tpush, cert_server)
    reason = r.summary().reasons.get(cert_server.host, "")
    assert r.returncode == 255 and reason.startswith("auth failed"), str(r)
    assert f"its principals (alice, bob) do not include '{USER}'" in reason, str(r)

    ssh_add(agent, key)
    for f in bare_home.glob(".ssh/id_ed25519*"):
        f.unlink()
    r = whoami(tpush, cert_server, env=tpush.env(SSH_AUTH_SOCK=agent))
    reason = r.summary().reasons.get(cert_server.host, "")
    assert r.returncode == 255, str(r)
    assert f"the agent's certificate 'tpush-test-id' its principals (alice, bob)" in reason, str(r)


def one_line_usage_error(r, *words):
    assert r.returncode == 2, str(r)
    assert r.out == "", str(r)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, str(r)
    for w in words:
        assert str(w) in lines[0], str(r)


def test_certificate_of_another_key_is_a_usage_error(tpush, cert_server, bare_home):
    """KEY-cert.pub that certifies some other key: a one-line usage error naming both files
    and the fix, before any connection."""
    key = user_key(bare_home, "id_ed25519")
    other = user_key(bare_home, "other")
    shutil.move(cert_server.sign(other.with_suffix(".pub")), bare_home / ".ssh" / "id_ed25519-cert.pub")
    r = whoami(tpush, cert_server)
    one_line_usage_error(r, "id_ed25519-cert.pub", "certifies another key", key, "ssh-keygen -s")


def test_certificate_file_problems_are_usage_errors(tpush, cert_server, bare_home, tmp_path):
    """CertificateFile naming a plain public key, or a certificate whose key no identity
    file holds (and no agent to hold it): one-line usage errors naming the file and a fix."""
    key = user_key(bare_home, "id_ed25519")
    r = whoami(tpush, cert_server, "-o", f"CertificateFile={key}.pub")
    one_line_usage_error(r, f"CertificateFile {key}.pub", "not an OpenSSH user certificate", "ssh-keygen -s")

    stray = user_key(bare_home, "stray")
    cert = cert_server.sign(stray.with_suffix(".pub"))
    stray.unlink()
    r = whoami(tpush, cert_server, "-o", f"CertificateFile={cert}")
    one_line_usage_error(r, f"CertificateFile {cert}", "no identity file holds", "-i")
