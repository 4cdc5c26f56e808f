"""TPU workers without external IPs: IAP tunnels through the stand-in gcloud, OS Login
user names, and the hint when a worker refuses gcloud's key."""

from __future__ import annotations

import json
import time

import pytest

from conftest import USER, Tpush, output_lines

ECHO = 'set -- $SSH_CONNECTION; echo "$3"'


def run(tpush, env, *args, **kw):
    return tpush(*args, env=env, **kw)


def test_64_workers_through_one_iap_tunnel(farm, tpush, fake_gcloud):
    """One IAP tunnel, to the slice's first worker, carries all 64: the others are reached
    from it over their internal addresses (on this farm: the farm's port, hence -p),
    each with its own host key checked."""
    g = fake_gcloud
    names = g.tpu("pod", farm.addresses[:64])
    env = g.env(tpush.env(), iap_port=farm.port)
    r = run(tpush, env, "-t", "pod", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap",
            "-p", farm.port, ECHO)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, [f"w{k}" for k in range(64)])
    for k in range(64):
        assert lines[f"w{k}"] == [farm.addresses[k]], str(r)
    tunnels = g.calls("start-iap-tunnel")
    assert [c[c.index("start-iap-tunnel") + 1] for c in tunnels] == [names[0]], tunnels
    assert all("--listen-on-stdin" in c and f"--zone={g.zone}" in c and f"--project={g.project}" in c
               for c in tunnels), tunnels
    end = time.monotonic() + 30  # the tunnel is stopped and reaped with the run
    while g.tunnels.running() and time.monotonic() < end:
        time.sleep(0.05)
    assert g.tunnels.running() == []
    # workers --json says how: its slice's tunnel, else its own
    wj = json.loads(run(tpush, env, "-t", "pod", "--project", g.project, "--zone", g.zone,
                        "--tunnel-through-iap", "workers", "--json").out)
    assert wj[3]["reach"]["via"]["kind"] == "command"
    assert wj[3]["reach"]["via"]["from"] == "--tunnel-through-iap"
    assert wj[3]["reach"]["via"]["slice"] == f"pod ({g.project}/{g.zone})"
    assert names[3] in wj[3]["reach"]["via"]["proxy_command"]
    assert wj[3]["instance"] == names[3]


def test_a_tpu_without_external_ips_gets_a_hint(farm, tpush, fake_gcloud):
    g = fake_gcloud
    g.tpu("inner", farm.addresses[:2])
    r = run(tpush, g.env(tpush.env()), "-t", "inner", "--project", g.project, "--zone", g.zone,
            "--connect-timeout", 3, "true")
    hint = [l for l in r.err.splitlines() if "no external IP" in l]
    assert len(hint) == 1 and "--tunnel-through-iap" in hint[0] and "--internal-ip" in hint[0], str(r)


def test_an_iap_tunnel_that_fails_is_the_reason(farm, tpush, fake_gcloud):
    g = fake_gcloud
    g.tpu("pod", farm.addresses[:2])
    g.error("start-iap-tunnel", "NOT_AUTHORIZED")
    # Two gateways, then a tunnel of each worker's own: three gcloud start-ups in a row
    # before the reason is known, which a loaded machine stretches past the default
    # deadline. What is tested here is the reason, not the deadline.
    r = run(tpush, g.env(tpush.env(), iap_port=farm.port), "-t", "pod", "--project", g.project, "--zone", g.zone,
            "--tunnel-through-iap", "--connect-timeout", 60, "true")
    assert r.returncode == 255, str(r)
    s = r.summary()
    for w in ("w0", "w1"):
        # gcloud exits 0 after a failed connection: its ERROR line is the reason, not the
        # traceback it logs after it.
        assert s.reasons[w].startswith("proxy command 'gcloud compute start-iap-tunnel"), str(r)
        assert s.reasons[w].endswith(": ERROR: [0] Error during local connection to [stdin]: Error while "
                                     "connecting [4033: 'not authorized']."), str(r)


def test_os_login_user_comes_from_the_profile(farm, tpush, fake_gcloud):
    g = fake_gcloud
    g.tpu("ol", farm.addresses[:4], oslogin=True)
    g.os_login_profile(USER)
    env = g.env(tpush.env(), iap_port=farm.port)
    args = ["-t", "ol", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap"]
    wj = json.loads(run(tpush, env, *args, "workers", "--json").out)
    assert wj[0]["reach"]["user"] == {"value": USER, "from": "OS Login profile"}
    assert wj[0]["oslogin"] is True
    # The workers' internal addresses take no connections here (the farm's port is not
    # 22), so each worker gets a tunnel of its own, 4 starting at once, each burning
    # gcloud's start-up CPU inside the connect deadline: longer with other tests around.
    r = run(tpush, env, *args, "--connect-timeout", 60, "whoami")
    assert r.returncode == 0 and set(r.out.split()) >= {USER}, str(r)
    assert len(g.calls("describe-profile")) == 1
    # asked once: the profile is cached like the TPU; -l wins over it
    wj = json.loads(run(tpush, env, *args, "-l", "someone", "workers", "--json").out)
    assert wj[0]["reach"]["user"] == {"value": "someone", "from": "-l"}
    assert len(g.calls("describe-profile")) == 1


def test_os_login_from_the_project_metadata(farm, tpush, fake_gcloud):
    g = fake_gcloud
    g.tpu("po", farm.addresses[:2])
    g.os_login_profile("tester_example_com")
    (g.dir / "project-info").mkdir(exist_ok=True)
    (g.dir / "project-info" / f"{g.project}.json").write_text(json.dumps(
        {"commonInstanceMetadata": {"items": [{"key": "enable-oslogin", "value": "TRUE"}], "kind": "compute#metadata"},
         "kind": "compute#project", "name": g.project}, sort_keys=True))
    wj = json.loads(run(tpush, g.env(tpush.env()), "-t", "po", "--project", g.project, "--zone", g.zone,
                        "workers", "--json").out)
    assert wj[1]["reach"]["user"] == {"value": "tester_example_com", "from": "OS Login profile"}


def test_a_worker_refusing_gcloud_key_says_what_to_run_once(farm, tpush, bare_home, fake_gcloud):
    g = fake_gcloud
    g.tpu("nokey", farm.addresses[:3])
    tp = Tpush(tpush.binary, bare_home)
    # Both jump hosts refuse, so each worker gets a tunnel of its own, each burning gcloud's
    # start-up CPU inside the connect deadline: longer with other tests around.
    r = tp("-t", "nokey", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap",
           "--connect-timeout", "60", "true", env=g.env(tp.env(), iap_port=farm.port))
    assert r.returncode == 255, str(r)
    hints = [l for l in r.err.splitlines() if l.startswith("tpush: hint: ")]
    assert len(hints) == 1, str(r)
    assert f"gcloud compute tpus tpu-vm ssh nokey --zone {g.zone} --project {g.project} --worker=all" in hints[0]


def test_a_slow_tunnel_gets_a_second_one_to_another_worker_only_when_it_is_the_limit(farm, tpush, fake_gcloud):
    """An IAP tunnel 50 ms long opens one channel per round trip: 64 workers would wait 3 s
    for theirs, so a second tunnel goes to the slice's second worker, and -v says why."""
    g = fake_gcloud
    names = g.tpu("far", farm.addresses[:64])
    env = g.env(tpush.env(TPUSH_FAKE_IAP_LATENCY="0.025"), iap_port=farm.port)
    r = run(tpush, env, "-v", "-t", "far", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap",
            "-p", farm.port, "true", timeout=240)
    assert r.returncode == 0, str(r)
    targets = [c[c.index("start-iap-tunnel") + 1] for c in g.calls("start-iap-tunnel")]
    assert targets[:2] == names[:2], targets
    why = [l for l in r.err.splitlines() if "session 2: its channel opens are the limit" in l]
    assert len(why) == 1 and f"w1 ({names[1]})" in why[0], str(r)


# A farm whose sshd forbids forwarding on some addresses (`Match LocalAddress`): TPU "one"
# (its first 8 workers) has a first worker that cannot carry the others; TPU "none" (the
# next 8) has two, so no worker tpush tries as the way in can.
NO_FORWARDING = ["127.0.1.1", "127.0.1.9", "127.0.1.10"]


@pytest.fixture(scope="module")
def picky_farm():
    import farm as farm_mod
    yield from farm_mod.farm_fixture(
        16, f"Match LocalAddress {','.join(NO_FORWARDING)}\n  AllowTcpForwarding no")


@pytest.fixture
def picky(picky_farm, tpush_bin, tmp_path):
    return picky_farm, Tpush(tpush_bin, picky_farm.copy_home(tmp_path / "home"))


def tunnel_targets(g) -> list[str]:
    return [c[c.index("start-iap-tunnel") + 1] for c in g.calls("start-iap-tunnel")]


def test_a_first_worker_that_cannot_forward_hands_the_slice_to_the_next(picky, fake_gcloud):
    farm, tp = picky
    g = fake_gcloud
    names = g.tpu("one", farm.addresses[:8])
    # Two gcloud start-ups in a row before a worker's session: the hand-over is tested, not
    # the default deadline.
    r = tp("-t", "one", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap", "-p", farm.port,
           "--connect-timeout", 60, ECHO, env=g.env(tp.env(), iap_port=farm.port))
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, [f"w{k}" for k in range(8)])
    assert all(lines[f"w{k}"] == [farm.addresses[k]] for k in range(8)), str(r)
    assert tunnel_targets(g) == names[:2]
    said = [l for l in r.err.splitlines() if "warning:" in l]
    assert len(said) == 1, str(r)
    assert f"w0 ({names[0]}) does not forward connections" in said[0], str(r)
    assert f"going through w1 ({names[1]}) instead" in said[0], str(r)


def test_when_no_worker_can_forward_each_gets_its_own_tunnel_a_few_at_a_time(picky, fake_gcloud):
    farm, tp = picky
    g = fake_gcloud
    names = g.tpu("none", farm.addresses[8:16])
    # Each own tunnel burns gcloud's second of start-up CPU, four at once, and the connect
    # deadline counts it: with other tests on the same cores that takes longer than the
    # default 10 s allows. What is tested here is the order and the number at once.
    r = tp("-t", "none", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap", "-p", farm.port,
           "--connect-timeout", 60, ECHO, env=g.env(tp.env(), iap_port=farm.port))
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, [f"w{k}" for k in range(8)])
    assert all(lines[f"w{k}"] == [farm.addresses[8 + k]] for k in range(8)), str(r)
    # the two tried as the way in, then one per worker
    assert tunnel_targets(g)[:2] == names[:2] and sorted(tunnel_targets(g)[2:]) == sorted(names)
    said = [l for l in r.err.splitlines() if "warning:" in l]
    assert len(said) == 2, str(r)  # once per way given up, not per worker
    assert "each worker goes through its own IAP tunnel, 4 starting at once" in said[1], str(r)
    # No more than 4 of the workers' own tunnels were starting at the same time: from the
    # process's launch (each then burns gcloud's start-up CPU) to its connection.
    spans = {}
    for e in g.tunnels.events():
        spans.setdefault(e["pid"], {})[e["event"]] = e["time"]
    gateways = {e["pid"] for e in g.tunnels.events("launched")[:2]}
    starting = [(s["launched"], s["connected"]) for pid, s in spans.items() if pid not in gateways]
    assert len(starting) == 8, spans
    most = max(sum(1 for a, b in starting if a <= t < b) for t, _ in starting)
    assert 2 <= most <= 4, starting
