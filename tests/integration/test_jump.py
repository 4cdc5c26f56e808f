"""ProxyJump in-process: one session per jump host carries every worker (-J, ProxyJump)."""

from __future__ import annotations

import signal
import time

import pytest

from conftest import FARM_WORKERS, USER, Summary, host_args, output_lines


def trust(home, *bastions) -> None:
    for b in bastions:
        b.add_to_known_hosts(home / ".ssh" / "known_hosts")


def test_one_bastion_session_carries_every_worker(farm, tpush, home, bastion):
    trust(home, bastion)
    r = tpush("-J", bastion.jump(USER), *host_args(farm.hosts), 'echo "$SSH_CONNECTION"')
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, farm.hosts)
    for host, address in zip(farm.hosts, farm.addresses):
        assert len(lines[host]) == 1 and lines[host][0].split()[2] == address, str(r)
    counts = bastion.counts()
    assert counts["sessions"] == 1, counts
    assert counts["channels"] == counts["confirmed"] == FARM_WORKERS, counts
    assert sorted(bastion.log.targets()) == sorted((a, farm.port) for a in farm.addresses)


def test_a_far_bastion_gets_a_second_login_only_when_its_channel_opens_are_the_limit(
        farm, tpush, home, bastion, relay):
    """50 ms from the bastion, a session opens one channel per round trip: 64 workers
    would wait 3 s for their channels, so tpush logs in again and says why. Near, one
    session carries everyone (the test above)."""
    trust(home, bastion)
    (home / ".ssh" / "config").write_text(
        bastion.ssh_config_entry("far", USER) + f"  ProxyCommand {relay.command(latency=0.025)}\n")
    r = tpush("-v", "-J", "far", *host_args(farm.hosts), "true")
    assert r.returncode == 0, str(r)
    counts = bastion.counts()
    assert 2 <= counts["sessions"] <= 8, counts
    assert counts["channels"] == FARM_WORKERS, counts
    why = [l for l in r.err.splitlines() if "session 2: its channel opens are the limit" in l]
    assert len(why) == 1, str(r)


def test_a_worker_the_bastion_cannot_reach_does_not_hold_up_the_others(farm, tpush, home, bastion, faults):
    """The bastion's connect to a blackholed worker never ends, and libssh2 opens one
    channel at a time per session: the others get a second session after a second, and
    each worker is judged by its own deadline."""
    trust(home, bastion)
    hosts = farm.hosts[:9]
    faults.blackhole(farm.addresses[0], farm.port)
    r = tpush("-v", "--connect-timeout", 5, "-J", bastion.jump(USER), *host_args(hosts), "true", timeout=60)
    assert r.returncode == 255, str(r)
    s = r.summary()
    assert s.ok == 8 and s.timed_out == 1, str(r)
    assert s.reasons[hosts[0]].startswith("connect timed out after 5s"), str(r)
    assert bastion.counts()["sessions"] == 2, str(r)
    assert any("session 2: its channel open has waited" in l for l in r.err.splitlines()), str(r)


@pytest.mark.parametrize("fault,reason", [
    ("wrong_host_key", "host key changed"),
    ("refuse_auth", "auth failed"),
])
def test_a_failing_jump_host_fails_the_workers_behind_it_by_name(farm, tpush, home, bastions, fault, reason):
    b = bastions(fault=fault)
    trust(home, b)
    hosts = farm.hosts[:8]
    r = tpush("-J", b.jump(USER), *host_args(hosts), "true")
    assert r.returncode == 255, str(r)
    s = r.summary()
    assert s.unreachable == 8, str(r)
    for h in hosts:
        assert s.reasons[h].startswith(f"jump host {USER}@{b.host}: "), str(r)
        assert reason in s.reasons[h], str(r)
    assert b.sessions() == 0


def test_a_jump_host_that_cannot_forward_fails_each_worker_with_its_target(farm, tpush, home, bastions):
    b = bastions(fault="no_forwarding")
    trust(home, b)
    hosts = farm.hosts[:4]
    r = tpush("-J", b.jump(USER), *host_args(hosts), "true")
    assert r.returncode == 255, str(r)
    s = r.summary()
    for h in hosts:
        assert s.reasons[h].startswith(f"jump host {USER}@{b.host} could not open a connection to {h}"), str(r)
        assert "prohibited" in s.reasons[h], str(r)
    assert b.counts()["sessions"] == 1


def test_jump_host_lost_mid_run_loses_its_workers(farm, tpush, home, bastion):
    trust(home, bastion)
    hosts = farm.hosts[:6]
    st = tpush.stream("--label", "index", "-J", bastion.jump(USER), *host_args(hosts),
                      'echo "started $TPUSH_WORKER"; sleep 300')
    st.wait_for(lambda ls: sum("started" in l for l in ls) == 6, 60, "every worker to start")
    assert bastion.kill_sessions() >= 1
    r = st.finish(timeout=60)
    assert r.returncode == 255, str(r)
    s = r.summary()
    assert s.lost == 6, str(r)
    for w in ("w0", "w5"):
        assert f"jump host {USER}@{bastion.host}" in s.reasons[w], str(r)


ECHO = 'set -- $SSH_CONNECTION; echo "$3 $4"'


def test_hidden_workers_only_the_bastion_reaches(hidden_farm, tpush, home):
    """Workers in a network namespace of their own: direct, unreachable; through one
    bastion session, all of them (root: the fixture needs a netns)."""
    hf = hidden_farm
    (home / ".ssh" / "known_hosts").write_text(hf.known_hosts.read_text())
    r = tpush("--connect-timeout", 3, "-w", hf.hosts[0], "true")
    assert r.returncode == 255, str(r)
    m = hf.bastion.mark()
    r = tpush("-J", hf.bastion.jump(USER), *host_args(hf.hosts), ECHO)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, hf.hosts)
    for host, address in zip(hf.hosts, hf.addresses):
        assert lines[host] == [f"{address} {hf.port}"], str(r)
    counts = hf.bastion.counts(since=m)
    assert counts["sessions"] == 1 and counts["channels"] == hf.workers, counts


def test_a_chain_of_jump_hosts(farm, tpush, home, bastion, bastions):
    """-J a,b: tpush reaches b through a, then the workers through b; each jump host logs
    in once."""
    second = bastions()
    trust(home, bastion, second)
    hosts = farm.hosts[:8]
    r = tpush("-J", f"{bastion.jump(USER)},{second.jump(USER)}", *host_args(hosts), ECHO)
    assert r.returncode == 0, str(r)
    assert bastion.counts()["sessions"] == 1 and bastion.log.targets() == [(second.address, second.port)]
    assert second.counts()["sessions"] == 1 and second.counts()["channels"] == 8
    lines = output_lines(r.out, hosts)
    for h in hosts:
        assert lines[h][0].split()[0] == h.rsplit(":", 1)[0], str(r)


def test_interrupt_closes_tunnels_and_the_jump_session(farm, tpush, home, bastion):
    trust(home, bastion)
    hosts = farm.hosts[:4]
    st = tpush.stream("--label", "index", "-J", bastion.jump(USER), *host_args(hosts),
                      'trap "" INT; echo "started $TPUSH_WORKER"; sleep 300')
    st.wait_for(lambda ls: sum("started" in l for l in ls) == 4, 60, "every worker to start")
    st.proc.send_signal(signal.SIGINT)
    st.wait_for_stderr("interrupt sent to 4 running worker(s)", 15)
    st.proc.send_signal(signal.SIGINT)
    r = st.finish(timeout=30)
    assert r.returncode == 130, str(r)
    end = time.monotonic() + 30
    while bastion.connection_pids() and time.monotonic() < end:  # the bastion saw us go
        time.sleep(0.05)
    assert bastion.connection_pids() == []


def test_rsync_goes_through_the_same_jump_host(farm, tpush, home, bastion, tmp_path):
    """rsync's own ssh gets the same way there (-J, or ProxyJump from ssh_config)."""
    trust(home, bastion)
    src = tmp_path / "src"
    src.mkdir()
    (src / "f.txt").write_text("through the bastion\n")
    dst = tmp_path / "dst"
    r = tpush("-J", bastion.jump(USER), "-w", farm.hosts[0], "rsync", "-a", f"{src}/", f":{dst}/")
    assert r.returncode == 0, str(r)
    assert (dst / "f.txt").read_text() == "through the bastion\n"
    assert bastion.log.targets() == [(farm.addresses[0], farm.port)]
