"""A bit flipped on the wire, mid-stream, between a worker's sshd and tpush: whatever
cipher the two agree on (tpush's libssh2 en- and decrypts a packet's blocks in one
OpenSSL call, scripts/patches/libssh2-transport-bulk-crypt.patch), the MAC or the
AES-GCM tag catches it. The worker fails; not one changed byte reaches the output."""

import pytest

import faults as faults_mod
from conftest import split_prefixed
from farm import known_hosts_lines

LINE = "A" * 76  # base64 of zeros, 76 to a line
LINES = 40000    # about 3 MB of output: the flip lands far inside the stream


# chacha20-poly1305 is libssh2's own code (not the patch's): there the flip is not
# caught, and tpush waits for the rest of a packet that never ends, the server's
# keepalive answers keeping the session "heard from". A known bug, open (stop note of
# 2026-11-29): this case fails until it is fixed, and then fails as XPASS.
CHACHA_HANGS = pytest.mark.xfail(strict=True, reason="a flipped bit under chacha20-poly1305 hangs tpush")


@pytest.mark.parametrize("cipher", ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr",
                                    pytest.param("chacha20-poly1305@openssh.com", marks=CHACHA_HANGS)])
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
