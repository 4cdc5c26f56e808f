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
