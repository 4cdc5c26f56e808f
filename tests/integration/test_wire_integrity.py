"""A bit flipped on the wire, mid-stream, between a worker's sshd and tpush: whatever
cipher the two agree on (tpush's libssh2 en- and decrypts a packet's blocks in one
OpenSSL call, scripts/patches/libssh2-transport-bulk-crypt.patch), the MAC or the
AES-GCM tag catches it. The worker fails; not one changed byte reaches the output.
Under chacha20-poly1305 an unpatched libssh2 1.11.1 decrypted the failing packet again
for ever, and tpush hung (scripts/patches/libssh2-transport-crypt-failure.patch)."""

import pytest

import faults as faults_mod
from conftest import split_prefixed
from farm import known_hosts_lines

LINE = "A" * 76  # base64 of zeros, 76 to a line
LINES = 40000    # about 3 MB of output: the flip lands far inside the stream


@pytest.mark.parametrize("cipher", ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr",
                                    "chacha20-poly1305@openssh.com"])
def test_a_bit_flipped_mid_stream_is_caught_and_never_printed(faults, home, tpush, cipher):
    sshd = faults.other_sshd(extra_config=f"Ciphers {cipher}\nMACs hmac-sha2-256\n")
    relay = faults.add(faults_mod.FlippingRelay(sshd.address, sshd.port, at=1_000_000))
    with open(home / ".ssh" / "known_hosts", "a") as f:
        f.write(known_hosts_lines([relay.address], relay.port, sshd.sshd.host_key_files))
    r = tpush("--alive-interval", 2, "-w", relay.host,
              f"head -c {LINES * 57} /dev/zero | base64 -w {len(LINE)}", timeout=10)
    assert relay.flipped.is_set(), str(r)
    assert r.returncode == 1, str(r)
    assert r.summary().failed == 1, str(r)
    assert "reading output failed" in r.err, str(r)
    lines = split_prefixed(r.out, [relay.host])[relay.host]
    assert 0 < len(lines) < LINES, str(r)
    # Whole lines as sent, and the last one cut where the stream stopped: never a changed byte.
    bad = [line for line in lines[:-1] if line != LINE]
    assert bad == [], f"{len(bad)} changed line(s) printed, the first: {bad[0]!r}"
    assert lines[-1] and LINE.startswith(lines[-1]), repr(lines[-1])
