"""Workers that cannot be reached: refused, black-holed, or talking nonsense.  Each fails
alone (exit 255), within the connect timeout, without delaying the others."""

import pytest

import faults as faults_mod
from conftest import host_args, output_lines, split_prefixed

BAD_BANNER_REASONS = ("protocol error", "connect timed out", "connection lost")


def check_others_ok(r, hosts, bad):
    """Every host but `bad` printed its one line and is not in the failure list."""
    lines = output_lines(r.out, hosts + [bad])
    for h in hosts:
        assert lines[h] == [f"ok {h}"], str(r)
    assert lines[bad] == [], str(r)
    s = r.summary()
    assert s.total == len(hosts) + 1 and s.ok == len(hosts), str(r)
    assert set(s.reasons) == {bad}, str(r)
    return s


def ok_cmd():
    return 'set -- $SSH_CONNECTION; echo "ok $3:$4"'


def test_closed_port(farm, tpush):
    addr, port = faults_mod.unused_address_port()
    bad = f"{addr}:{port}"
    hosts = farm.hosts[:8]
    r = tpush(*host_args(hosts + [bad]), ok_cmd(), timeout=30)
    assert r.returncode == 255, str(r)
    s = check_others_ok(r, hosts, bad)
    assert s.reasons[bad] == f"connect refused ({addr} port {port})", str(r)
    assert s.unreachable == 1, str(r)


def test_unreachable_wins_over_failed(farm, tpush):
    addr, port = faults_mod.unused_address_port()
    hosts = farm.hosts[:4] + [f"{addr}:{port}"]
    r = tpush(*host_args(hosts), "exit $((TPUSH_WORKER == 1 ? 3 : 0))", timeout=60)
    assert r.returncode == 255, str(r)
    s = r.summary()
    assert s.reasons[hosts[1]] == "exit 3", str(r)
    assert s.reasons[hosts[4]].startswith("connect refused"), str(r)
    assert (s.ok, s.failed, s.unreachable) == (3, 1, 1), str(r)


def test_blackholed_address_times_out(farm, tpush, faults):
    """SYNs to one worker are dropped: `connect timed out`, exit 255, others unaffected."""
    hosts = farm.hosts[:16]
    bad = hosts.pop(5)
    faults.blackhole(farm.addresses[5], farm.port)
    r = tpush("--connect-timeout", 2, *host_args(hosts + [bad]), ok_cmd(), timeout=30)
    assert r.returncode == 255, str(r)
    assert r.elapsed < 15, f"tpush took {r.elapsed:.1f}s with --connect-timeout 2\n{r}"
    s = check_others_ok(r, hosts, bad)
    # Its SYN was never answered: the connect, not the handshake, is what timed out.
    assert s.reasons[bad] == "connect timed out after 2s (waiting for TCP connect)", str(r)
    assert s.timed_out == 1, str(r)


def test_blackholed_address_does_not_delay_others(farm, tpush, faults):
    """Output from reachable workers streams out while the black-holed one is still
    waiting for its connect deadline (it is not held back to the end)."""
    hosts = farm.hosts[:8]
    bad = hosts.pop(3)
    faults.blackhole(farm.addresses[3], farm.port)
    st = tpush.stream("--connect-timeout", 8, *host_args(hosts + [bad]), ok_cmd())
    r = st.finish(timeout=60)
    assert r.returncode == 255, str(r)
    check_others_ok(r, hosts, bad)
    last_other = max(t for t, line in st.lines["out"])
    assert last_other < st.exit_time - 3, (
        f"others' output arrived at {last_other:.1f}s, tpush exited at {st.exit_time:.1f}s: "
        f"output was held back until the timed-out worker finished\n{r}")


@pytest.mark.parametrize("mode", ["silent", "banner_then_silence", "no_accept"])
def test_silent_servers_bounded_by_connect_timeout(farm, tpush, faults, mode):
    """A listener that accepts and says nothing, or sends a banner and stalls (OpenSSH's own
    ConnectTimeout does not bound the latter), fails within --connect-timeout."""
    server = faults.server(mode)
    hosts = farm.hosts[:4]
    r = tpush("--connect-timeout", 2, *host_args(hosts + [server.host]), ok_cmd(), timeout=30)
    assert r.returncode == 255, str(r)
    assert r.elapsed < 15, f"tpush took {r.elapsed:.1f}s with --connect-timeout 2\n{r}"
    s = check_others_ok(r, hosts, server.host)
    assert s.reasons[server.host].startswith("connect timed out"), str(r)
    assert s.timed_out == 1, str(r)


@pytest.mark.parametrize("mode", ["garbage", "junk_lines", "ssh1", "http", "rst"])
def test_garbage_servers_fail_fast(farm, tpush, faults, mode):
    """Non-SSH peers (bytes without newline, endless junk lines, SSH-1, HTTP, RST) fail that
    worker with exit 255, bounded by the connect timeout."""
    server = faults.server(mode)
    hosts = farm.hosts[:4]
    r = tpush("--connect-timeout", 2, *host_args(hosts + [server.host]), ok_cmd(), timeout=30)
    assert r.returncode == 255, str(r)
    assert r.elapsed < 15, f"tpush took {r.elapsed:.1f}s with --connect-timeout 2\n{r}"
    s = check_others_ok(r, hosts, server.host)
    assert s.reasons[server.host].startswith(BAD_BANNER_REASONS), str(r)
    assert s.unreachable + s.timed_out == 1, str(r)
