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


def test_64_workers_through_iap_tunnels(farm, tpush, fake_gcloud):
    g = fake_gcloud
    names = g.tpu("pod", farm.addresses[:64])
    env = g.env(tpush.env(), iap_port=farm.port)
    # 64 tunnels are 64 Python stand-ins starting at once on this machine's cores (under
    # ASan in CI): the connect deadline is not what this test is about.
    r = run(tpush, env, "-t", "pod", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap",
            "--connect-timeout", "60", ECHO)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, [f"w{k}" for k in range(64)])
    for k in range(64):
        assert lines[f"w{k}"] == [farm.addresses[k]], str(r)
    tunnels = g.calls("start-iap-tunnel")
    assert sorted(c[c.index("start-iap-tunnel") + 1] for c in tunnels) == sorted(names)
    assert all("--listen-on-stdin" in c and f"--zone={g.zone}" in c and f"--project={g.project}" in c
               for c in tunnels), tunnels[:2]
    end = time.monotonic() + 30  # every tunnel is stopped and reaped with the run
    while g.tunnels.running() and time.monotonic() < end:
        time.sleep(0.05)
    assert g.tunnels.running() == []
    # workers --json says how
    wj = json.loads(run(tpush, env, "-t", "pod", "--project", g.project, "--zone", g.zone,
                        "--tunnel-through-iap", "workers", "--json").out)
    assert wj[3]["reach"]["via"]["kind"] == "command"
    assert wj[3]["reach"]["via"]["from"] == "--tunnel-through-iap"
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
    r = run(tpush, g.env(tpush.env(), iap_port=farm.port), "-t", "pod", "--project", g.project, "--zone", g.zone,
            "--tunnel-through-iap", "true")
    assert r.returncode == 255, str(r)
    s = r.summary()
    for w in ("w0", "w1"):
        assert s.reasons[w].startswith("proxy command 'gcloud compute start-iap-tunnel"), str(r)
        assert "4033" in s.reasons[w] or "not authorized" in s.reasons[w].lower(), str(r)


def test_os_login_user_comes_from_the_profile(farm, tpush, fake_gcloud):
    g = fake_gcloud
    g.tpu("ol", farm.addresses[:4], oslogin=True)
    g.os_login_profile(USER)
    env = g.env(tpush.env(), iap_port=farm.port)
    args = ["-t", "ol", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap"]
    wj = json.loads(run(tpush, env, *args, "workers", "--json").out)
    assert wj[0]["reach"]["user"] == {"value": USER, "from": "OS Login profile"}
    assert wj[0]["oslogin"] is True
    r = run(tpush, env, *args, "whoami")
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
    r = tp("-t", "nokey", "--project", g.project, "--zone", g.zone, "--tunnel-through-iap", "true",
           env=g.env(tp.env(), iap_port=farm.port))
    assert r.returncode == 255, str(r)
    hints = [l for l in r.err.splitlines() if l.startswith("tpush: hint: ")]
    assert len(hints) == 1, str(r)
    assert f"gcloud compute tpus tpu-vm ssh nokey --zone {g.zone} --project {g.project} --worker=all" in hints[0]
