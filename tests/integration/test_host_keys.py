"""Host-key checking against ~/.ssh/known_hosts: changed keys, unknown keys under
--host-key-check=yes, accept-new, key-type preference and hashed entries."""

import subprocess

from conftest import fingerprint, host_args, split_prefixed
from farm import known_hosts_lines, public_key


def echo_cmd():
    return 'set -- $SSH_CONNECTION; echo "ok $3:$4"'


def check_ok_lines(r, hosts):
    lines = split_prefixed(r.out, hosts)
    for h in hosts:
        assert lines[h] == [f"ok {h}"], str(r)


def lookup(known_hosts, host_port) -> set[str]:
    """'type base64' keys recorded for `[addr]:port` (hashed entries included)."""
    addr, port = host_port.rsplit(":", 1)
    out = subprocess.run(["ssh-keygen", "-F", f"[{addr}]:{port}", "-f", str(known_hosts)],
                         capture_output=True, text=True, timeout=30).stdout
    return {" ".join(l.split()[1:3]) for l in out.splitlines() if l and not l.startswith("#")}


def test_changed_host_key(farm, tpush, home, faults):
    """A worker whose host key differs from known_hosts fails alone with `host key changed`,
    showing both fingerprints and the known_hosts file; the file is not modified."""
    other = faults.other_sshd()  # offers its own ed25519 key
    kh = home / ".ssh" / "known_hosts"
    other.claim_farm_keys(kh)    # known_hosts says: the farm's keys
    before = kh.read_bytes()
    hosts = farm.hosts[:4]
    r = tpush(*host_args(hosts + [other.host]), echo_cmd(), timeout=60)
    assert r.returncode == 255, str(r)
    lines = split_prefixed(r.out, hosts + [other.host])
    assert lines[other.host] == [], "the command ran despite a changed host key\n" + str(r)
    for h in hosts:
        assert lines[h] == [f"ok {h}"], str(r)
    s = r.summary()
    assert s.reasons.get(other.host, "").startswith("host key changed"), str(r)
    assert set(s.reasons) == {other.host}, str(r)
    assert s.unreachable == 1 and s.ok == 4, str(r)
    offered = fingerprint(other.sshd.dir / "ssh_host_ed25519_key.pub")
    expected = fingerprint(farm.sshd.dir / "ssh_host_ed25519_key.pub")
    assert offered in r.err, f"offered fingerprint {offered} not shown\n{r}"
    assert expected in r.err, f"expected fingerprint {expected} not shown\n{r}"
    assert str(kh) in r.err or "~/.ssh/known_hosts" in r.err, f"known_hosts file not named\n{r}"
    assert kh.read_bytes() == before, "known_hosts was modified"


def test_changed_host_key_also_fails_with_yes(farm, tpush, home, faults):
    other = faults.other_sshd()
    kh = home / ".ssh" / "known_hosts"
    other.claim_farm_keys(kh)
    before = kh.read_bytes()
    r = tpush("--host-key-check", "yes", *host_args([other.host]), echo_cmd(), timeout=60)
    assert r.returncode == 255, str(r)
    assert r.out == "", str(r)
    assert r.summary().reasons.get(other.host, "").startswith("host key changed"), str(r)
    assert kh.read_bytes() == before


def test_unknown_host_fails_with_yes(farm, tpush, home):
    """--host-key-check=yes: a worker missing from known_hosts fails; the file is untouched."""
    hosts = farm.hosts[:4]
    kh = home / ".ssh" / "known_hosts"
    unknown = hosts[2]
    kh.write_text("".join(l + "\n" for l in kh.read_text().splitlines()
                          if not l.startswith(f"[{farm.addresses[2]}]:")))
    before = kh.read_bytes()
    r = tpush("--host-key-check", "yes", *host_args(hosts), echo_cmd(), timeout=60)
    assert r.returncode == 255, str(r)
    lines = split_prefixed(r.out, hosts)
    assert lines[unknown] == [], str(r)
    for h in hosts:
        if h != unknown:
            assert lines[h] == [f"ok {h}"], str(r)
    s = r.summary()
    assert set(s.reasons) == {unknown}, str(r)
    assert s.reasons[unknown].startswith("host key unknown"), str(r)
    assert kh.read_bytes() == before, "known_hosts was modified under --host-key-check=yes"


def test_accept_new_records_keys(farm, tpush, home):
    """Default accept-new: unknown hosts are added (a missing known_hosts is created); a
    second run with --host-key-check=yes then succeeds; a third run adds nothing."""
    hosts = farm.hosts[:4]
    kh = home / ".ssh" / "known_hosts"
    kh.unlink()
    r = tpush(*host_args(hosts), echo_cmd(), timeout=60)
    assert r.returncode == 0, str(r)
    check_ok_lines(r, hosts)
    assert kh.exists(), "accept-new did not create known_hosts"
    farm_keys = {public_key(k) for k in farm.host_key_files}
    for h in hosts:
        recorded = lookup(kh, h)
        assert recorded, f"no known_hosts entry for [{h.replace(':', ']:')}\n{kh.read_text()}"
        assert recorded <= farm_keys, f"{h}: recorded {recorded}, farm offers {farm_keys}"
    r = tpush("--host-key-check", "yes", *host_args(hosts), echo_cmd(), timeout=60)
    assert r.returncode == 0, str(r)
    check_ok_lines(r, hosts)
    after_second = kh.read_bytes()
    r = tpush(*host_args(hosts), echo_cmd(), timeout=60)
    assert r.returncode == 0, str(r)
    assert kh.read_bytes() == after_second, "accept-new appended keys it already knew"


def test_known_ed25519_key_is_used_when_ecdsa_also_offered(farm, tpush, home):
    """The farm offers ECDSA and ed25519 host keys; known_hosts holds only ed25519.  tpush
    must negotiate the known type instead of calling the host unknown."""
    hosts = farm.hosts[:4]
    ed = [k for k in farm.host_key_files if "ed25519" in k.name]
    kh = home / ".ssh" / "known_hosts"
    kh.write_text(known_hosts_lines(farm.addresses[:4], farm.port, ed))
    r = tpush("--host-key-check", "yes", *host_args(hosts), echo_cmd(), timeout=60)
    assert r.returncode == 0, str(r)
    check_ok_lines(r, hosts)


def test_known_ecdsa_key_only(farm, tpush, home):
    hosts = farm.hosts[:4]
    ec = [k for k in farm.host_key_files if "ecdsa" in k.name]
    kh = home / ".ssh" / "known_hosts"
    kh.write_text(known_hosts_lines(farm.addresses[:4], farm.port, ec))
    r = tpush("--host-key-check", "yes", *host_args(hosts), echo_cmd(), timeout=60)
    assert r.returncode == 0, str(r)
    check_ok_lines(r, hosts)


def test_hashed_known_hosts(farm, tpush, home):
    """Hashed entries (|1|salt|hash, as `ssh-keygen -H` writes) are matched."""
    hosts = farm.hosts[:4]
    kh = home / ".ssh" / "known_hosts"
    kh.write_text(known_hosts_lines(farm.addresses[:4], farm.port, farm.host_key_files))
    subprocess.run(["ssh-keygen", "-H", "-f", str(kh)], check=True, capture_output=True, timeout=30)
    assert "|1|" in kh.read_text() and "127.0.1" not in kh.read_text()
    r = tpush("--host-key-check", "yes", *host_args(hosts), echo_cmd(), timeout=60)
    assert r.returncode == 0, str(r)
    check_ok_lines(r, hosts)
