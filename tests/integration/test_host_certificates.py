"""OpenSSH host certificates: a worker whose sshd offers a host certificate (HostCertificate)
signed by an authority that known_hosts trusts for it (`@cert-authority PATTERN KEY`) is
accepted with no line for its own key, as ssh accepts it. A certificate that is not valid
for the host (expired, another host's, another authority's, a user certificate) is refused
with its reason, unless its key is trusted as a plain one, as ssh falls back to; a revoked
authority or key is refused outright. Every verdict is checked against OpenSSH's own ssh on the
same server and the same known_hosts."""

import subprocess
from pathlib import Path

import pytest

import faults as faults_mod
from conftest import host_args, split_prefixed


def keygen(*args) -> None:
    subprocess.run(["ssh-keygen", "-q", *map(str, args)], check=True, timeout=30,
                   stdin=subprocess.DEVNULL, capture_output=True)


def public_line(path: Path) -> str:
    return " ".join(Path(str(path) + ".pub").read_text().split()[:2])


class CertifiedSshd:
    """An sshd (faults.OtherSshd) that offers a certificate of its host key, signed by `ca`
    with `sign_options` (ssh-keygen -s: -n principals, -V validity, -h for a host)."""

    def __init__(self, faults, ca: Path, sign_options: list[str], key_type: str = "ed25519"):
        self.other = faults_mod.OtherSshd(faults.farm, host_key_types=(key_type,))
        [key] = self.other.sshd.host_key_files
        keygen("-t", key_type, "-N", "", "-C", "tpush-test-host", "-f", key)
        options = [o.replace("{address}", self.other.address) for o in sign_options]
        keygen("-s", ca, "-I", "tpush-test-host", *options, f"{key}.pub")
        self.certificate = Path(f"{key}-cert.pub")
        self.other.sshd.extra_config = f"HostCertificate {self.certificate}\n"
        faults.add(self.other)
        self.key = key
        self.host = self.other.host
        self.address, self.port = self.other.address, self.other.port


@pytest.fixture
def ca(tmp_path) -> Path:
    path = tmp_path / "host_ca"
    keygen("-t", "ed25519", "-N", "", "-C", "tpush-test-host-ca", "-f", path)
    return path


def trust(home: Path, line: str) -> Path:
    """known_hosts holds `line` and nothing else."""
    known = home / ".ssh" / "known_hosts"
    known.write_text(line + "\n")
    return known


def ssh_accepts(home: Path, server: CertifiedSshd, checking: str = "yes") -> bool:
    """What OpenSSH's ssh decides for the same server and known_hosts."""
    r = subprocess.run(["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
                        "-i", str(home / ".ssh" / "id_ed25519"),
                        "-o", f"UserKnownHostsFile={home / '.ssh' / 'known_hosts'}",
                        "-o", "GlobalKnownHostsFile=/dev/null", "-o", f"StrictHostKeyChecking={checking}",
                        "-p", str(server.port), server.address, "true"],
                       capture_output=True, text=True, timeout=60, env={"HOME": str(home), "PATH": "/usr/bin:/bin"})
    return r.returncode == 0


def run(tpush, server, *options):
    return tpush(*options, *host_args([server.host]), "echo in")


def accepted(r, server) -> bool:
    return r.returncode == 0 and split_prefixed(r.out, [server.host])[server.host] == ["in"]


@pytest.mark.parametrize("key_type", ["ed25519", "ecdsa", "rsa"])
def test_a_host_certificate_from_a_trusted_authority_is_accepted(faults, tpush, home, ca, key_type):
    """No line for the host's key: the authority's line, for a pattern that covers the
    host's [address]:port, is enough; nothing is recorded."""
    server = CertifiedSshd(faults, ca, ["-h", "-n", "{address}"], key_type)
    known = trust(home, f"@cert-authority [127.*]:* {public_line(ca)}")
    r = run(tpush, server, "--host-key-check", "yes")
    assert accepted(r, server), str(r)
    assert r.err.count("warning") == 0, str(r)
    assert known.read_text() == f"@cert-authority [127.*]:* {public_line(ca)}\n"
    assert ssh_accepts(home, server)


@pytest.mark.parametrize("case, options, reason", [
    ("expired", ["-h", "-n", "{address}", "-V", "20200101Z:20200102Z"], "expired 2020-01-02 00:00:00 UTC"),
    ("not yet valid", ["-h", "-n", "{address}", "-V", "20990101Z:21000101Z"], "not valid before 2099-01-01"),
    ("another host's", ["-h", "-n", "node7,node8"], "its principals (node7, node8) do not include '{address}'"),
    ("a user certificate", ["-n", "{address}"], "it is a user certificate"),
])
def test_a_certificate_not_valid_for_the_host_is_refused_with_its_reason(faults, tpush, home, ca, case, options,
                                                                          reason):
    """The authority is trusted, but not this certificate: refused as an unknown key (ssh
    refuses it too), the summary saying why the certificate was not accepted."""
    server = CertifiedSshd(faults, ca, options)
    trust(home, f"@cert-authority [127.*]:* {public_line(ca)}")
    r = run(tpush, server, "--host-key-check", "yes")
    assert r.returncode == 255, str(r)
    why = r.summary().reasons[server.host]
    assert why.startswith("host key unknown ("), str(r)
    assert "its certificate was not accepted: " + reason.replace("{address}", server.address) in why, str(r)
    assert not ssh_accepts(home, server)


def test_another_authority_is_not_trusted(faults, tpush, home, ca, tmp_path):
    other = tmp_path / "other_ca"
    keygen("-t", "ed25519", "-N", "", "-f", other)
    server = CertifiedSshd(faults, other, ["-h", "-n", "{address}"])
    trust(home, f"@cert-authority [127.*]:* {public_line(ca)}")
    r = run(tpush, server, "--host-key-check", "yes")
    assert r.returncode == 255, str(r)
    assert "has no @cert-authority line for " + server.address in r.summary().reasons[server.host], str(r)
    assert not ssh_accepts(home, server)


def test_an_authority_for_other_hosts_only_is_not_trusted_here(faults, tpush, home, ca):
    server = CertifiedSshd(faults, ca, ["-h", "-n", "{address}"])
    trust(home, f"@cert-authority node* {public_line(ca)}")
    r = run(tpush, server, "--host-key-check", "yes")
    assert r.returncode == 255, str(r)
    assert not ssh_accepts(home, server)


@pytest.mark.parametrize("revoked, reason", [("authority", "host certificate's authority revoked ("),
                                             ("key", "host key revoked (")])
def test_a_revoked_authority_or_key_is_refused_outright(faults, tpush, home, ca, revoked, reason):
    """@revoked names the authority, or the certified key itself: refused, although the
    certificate is valid and the host's own key is on record."""
    server = CertifiedSshd(faults, ca, ["-h", "-n", "{address}"])
    known = trust(home, f"@cert-authority [127.*]:* {public_line(ca)}")
    listed = public_line(ca) if revoked == "authority" else public_line(server.key)
    with open(known, "a") as f:
        f.write(f"@revoked * {listed}\n[{server.address}]:{server.port} {public_line(server.key)}\n")
    r = run(tpush, server, "--host-key-check", "yes")
    assert r.returncode == 255, str(r)
    assert r.summary().reasons[server.host].startswith(reason), str(r)
    assert not ssh_accepts(home, server)


def test_an_expired_certificate_falls_back_to_the_plain_key(faults, tpush, home, ca):
    """As ssh does: the certified key, on record as a plain key, is accepted, and tpush
    warns that the certificate was not; with accept-new an unknown one is recorded."""
    server = CertifiedSshd(faults, ca, ["-h", "-n", "{address}", "-V", "20200101Z:20200102Z"])
    known = trust(home, f"@cert-authority [127.*]:* {public_line(ca)}\n"
                        f"[{server.address}]:{server.port} {public_line(server.key)}")
    r = run(tpush, server, "--host-key-check", "yes")
    assert accepted(r, server), str(r)
    assert "its certificate was not accepted: expired 2020-01-02 00:00:00 UTC" in r.err, str(r)
    assert ssh_accepts(home, server)
    trust(home, f"@cert-authority [127.*]:* {public_line(ca)}")
    r = run(tpush, server)
    assert accepted(r, server), str(r)
    assert public_line(server.key) in known.read_text(), known.read_text()
