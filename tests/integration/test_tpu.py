"""TPU workers through gcloud (issue 3): `tpush -t NAME`, `--queued-resource`, `tpush workers`.

gcloud cannot be installed here, so tests/farm/gcloud (a stand-in answering from fixture
files in gcloud's exact JSON shape) is put first on PATH.  The fixture TPUs' endpoints point
at the farm's loopback addresses; the farm's sshd port is given with -p (TPU endpoints carry
no SSH port).  Internal addresses are the farm's 127.0.1.k, external ones 127.0.3.k (the
farm's sshd answers on every loopback address).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from conftest import REPO, USER, output_lines, split_prefixed
from farm import public_key

_spec = importlib.util.spec_from_file_location("gcloud_fixtures", REPO / "tests/fixtures/gcloud/generate.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)

PROJECT, ZONE = gen.PROJECT, gen.ZONE
LOC = ["--zone", ZONE, "--project", PROJECT]
ECHO = 'set -- $SSH_CONNECTION; echo "$3 $TPUSH_WORKER/$TPUSH_NUM_WORKERS"'


def internal(w: int, k: int = 0) -> str:
    return f"127.0.{1 + k * 4 + w // 254}.{1 + w % 254}"  # NIC 0 = the farm's worker addresses


def external(w: int, k: int = 0) -> str:
    return f"127.0.3.{1 + w}"


class Gcloud:
    """A fixture directory for the stand-in gcloud plus the environment that uses it."""

    def __init__(self, root: Path, tpush, farm):
        self.root, self.tpush, self.farm = root, tpush, farm
        self.dir = root / "gcloud"
        self.dir.mkdir()
        self.cache = root / "cache"
        (root / "gcloud-config").mkdir()
        self.path = f"{REPO / 'tests' / 'farm'}:{os.environ.get('PATH', '/usr/bin:/bin')}"

    # -- fixtures -------------------------------------------------------------
    def tpu(self, name, workers, node_id="6874917357421523817", **kw):
        kw.setdefault("internal_ip", internal)
        kw.setdefault("external_ip", external)
        gen.write(str(self.dir), "describe", name, gen.node(name, node_id, workers, **kw))

    def raw(self, kind, name, text):
        gen.write(str(self.dir), kind, name, None, raw=text)

    def guest_attributes(self, name, keys: dict[int, str]):
        """keys: worker -> 'ssh-ed25519 AAAA...' (only the base64 goes in, as on a TPU)."""
        items = [{"key": "ssh-ed25519", "namespace": "hostkeys", "value": k.split()[1], "worker_id": w}
                 for w, k in sorted(keys.items())]
        gen.write(str(self.dir), "guest-attributes", name, items)

    def error(self, command, kind, **extra):
        (self.dir / "error").mkdir(exist_ok=True)
        (self.dir / "error" / command).write_text(json.dumps({"error": kind, **extra}))

    def config(self, prop, value):
        p = self.dir / "config" / prop
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(value + "\n")

    def calls(self, needle="") -> list[list[str]]:
        log = self.dir / "calls.log"
        if not log.exists():
            return []
        calls = [json.loads(l) for l in log.read_text().splitlines()]
        return [c for c in calls if needle in " ".join(c)]

    def cache_file(self, name) -> Path:
        return self.cache / "tpush" / "tpu" / PROJECT / ZONE / f"{name}.json"

    # -- running tpush ------------------------------------------------------------
    def env(self, **extra):
        settings = dict(PATH=self.path, TPUSH_FAKE_GCLOUD_DIR=self.dir, XDG_CACHE_HOME=self.cache,
                        CLOUDSDK_CONFIG=self.root / "gcloud-config")
        settings.update(extra)
        env = self.tpush.env(**settings)
        for k in ("TPUSH_ZONE", "CLOUDSDK_COMPUTE_ZONE", "CLOUDSDK_CORE_PROJECT", "CLOUDSDK_ACTIVE_CONFIG_NAME"):
            if k not in extra:
                env.pop(k, None)
        return env

    def run(self, *args, env=None, timeout=120):
        return self.tpush("-p", self.farm.port, *args, env=env or self.env(), timeout=timeout)


@pytest.fixture
def gcloud(tmp_path, tpush, farm) -> Gcloud:
    return Gcloud(tmp_path, tpush, farm)


def labels(n, prefix="w"):
    return [f"{prefix}{i}" for i in range(n)]


def farm_ed25519(farm) -> str:
    return public_key(farm.sshd.dir / "ssh_host_ed25519_key")


def error_line(r) -> str:
    lines = [l for l in r.err.splitlines() if l.startswith("tpush: error: ")]
    assert len(lines) == 1, f"expected one error line\n{r}"
    return lines[0]


# ---------------------------------------------------------------------------
# Resolution and running

def test_four_workers_external_ips(farm, gcloud):
    gcloud.tpu("tpu4", 4)
    r = gcloud.run("-t", "tpu4", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, labels(4))
    for w in range(4):
        assert lines[f"w{w}"] == [f"{external(w)} {w}/4"], str(r)


def test_internal_ip(farm, gcloud):
    gcloud.tpu("tpu4", 4)
    r = gcloud.run("-t", "tpu4", *LOC, "--internal-ip", ECHO)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, labels(4))
    for w in range(4):
        assert lines[f"w{w}"] == [f"{internal(w)} {w}/4"], str(r)


def test_internal_only_tpu_uses_ip_address(farm, gcloud):
    gcloud.tpu("private", 2, external=False)
    r = gcloud.run("-t", "private", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    assert output_lines(r.out, labels(2))["w1"] == [f"{internal(1)} 1/2"], str(r)


def test_64_workers(farm, gcloud):
    if farm.workers < 64:
        pytest.skip("needs a farm of 64 workers")
    gcloud.tpu("big", 64, accelerator_type="v4-512", topology="4x8x8", node_id=9007199254740993993)
    r = gcloud.run("-t", "big", *LOC, "--internal-ip", ECHO)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, labels(64))
    for w in range(64):
        assert lines[f"w{w}"] == [f"{internal(w)} {w}/64"], str(r)
    s = r.summary()
    assert (s.ok, s.unreachable) == (64, 0), str(r)


def test_multi_nic_interleaving(farm, gcloud):
    """With 2 networkConfigs, worker w is endpoint 2w; the second NIC's addresses (127.0.5.k)
    must never be used (they would be the wrong workers)."""
    gcloud.tpu("nics", 4, nics=2, external=False)
    r = gcloud.run("-t", "nics", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, labels(4))
    for w in range(4):
        assert lines[f"w{w}"] == [f"{internal(w)} {w}/4"], str(r)


def test_worker_selection(farm, gcloud):
    gcloud.tpu("tpu8", 8)
    r = gcloud.run("-t", "tpu8", *LOC, "--worker", "1,4-5", ECHO)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, ["w1", "w4", "w5"])
    assert lines["w4"] == [f"{external(4)} 4/8"], str(r)
    r = gcloud.run("-t", "tpu8", *LOC, "--worker", "0", ECHO)
    assert output_lines(r.out, ["w0"])["w0"] == [f"{external(0)} 0/8"], str(r)


@pytest.mark.parametrize("selection", ["9", "8", "2-9"])
def test_worker_out_of_range(farm, gcloud, selection):
    gcloud.tpu("tpu8", 8)
    r = gcloud.run("-t", "tpu8", *LOC, "--worker", selection, ECHO)
    assert r.returncode == 2, str(r)
    assert "has 8 workers" in error_line(r) and "0-7" in error_line(r), str(r)
    assert r.out == "", str(r)


@pytest.mark.parametrize("selection", ["x", "3-1", "1,,2", "-1"])
def test_worker_bad_syntax_before_gcloud(farm, gcloud, selection):
    gcloud.tpu("tpu8", 8)
    r = gcloud.run("-t", "tpu8", *LOC, f"--worker={selection}", ECHO)
    assert r.returncode == 2, str(r)
    assert "--worker" in error_line(r), str(r)
    assert gcloud.calls("tpu-vm describe") == [], "gcloud ran before the usage error"


# ---------------------------------------------------------------------------
# States

@pytest.mark.parametrize("state", ["CREATING", "STARTING", "REPAIRING", "RESTARTING", "REIMAGING"])
def test_transitional_states_warn_and_run(farm, gcloud, state):
    gcloud.tpu("t", 2, state=state, health=None)
    r = gcloud.run("-t", "t", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    assert f"TPU t is {state}" in r.err and "warning" in r.err, str(r)
    assert len(output_lines(r.out, labels(2))["w1"]) == 1, str(r)


@pytest.mark.parametrize("state,hint", [("STOPPED", "tpu-vm start"), ("STOPPING", "tpu-vm start"),
                                        ("DELETING", "create a new"), ("HIDDEN", "recreate"),
                                        ("PREEMPTED", "create it again"), ("TERMINATED", "create it again")])
def test_unusable_states_fail_before_connecting(farm, gcloud, state, hint):
    gcloud.tpu("t", 2, state=state, health=None)
    r = gcloud.run("-t", "t", *LOC, "touch /tmp/tpush-should-not-run-$TPUSH_WORKER")
    assert r.returncode == 255, str(r)
    line = error_line(r)
    assert state in line and hint in line, str(r)
    assert r.out == "" and "workers:" not in r.err, str(r)


def test_unhealthy_maintenance_warns(farm, gcloud):
    gcloud.tpu("t", 2, health="UNHEALTHY_MAINTENANCE")
    r = gcloud.run("-t", "t", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    assert "UNHEALTHY_MAINTENANCE" in r.err, str(r)


# ---------------------------------------------------------------------------
# Queued resources

def _multislice(gcloud, name="ms", slices=2, workers=4):
    gcloud.raw("queued-resources", name, gen.dump(gen.queued_resource(
        name, node_specs=[gen.multislice_spec(name, slices)])))
    for s in range(slices):
        gcloud.tpu(f"{name}-{s}", workers, node_id=str(8000000000000000000 + s), accelerator_type="v5litepod-16",
                   topology="4x4", version="V5LITE_POD",
                   internal_ip=lambda w, k, s=s: internal(s * workers + w),
                   external_ip=lambda w, k, s=s: external(s * workers + w))


def test_multislice_queued_resource(farm, gcloud):
    _multislice(gcloud)
    r = gcloud.run("--queued-resource", "ms", *LOC, 'set -- $SSH_CONNECTION; echo "$3 $TPUSH_SLICE $TPUSH_WORKER/$TPUSH_NUM_WORKERS"')
    assert r.returncode == 0, str(r)
    names = [f"s{s}w{w}" for s in range(2) for w in range(4)]
    lines = output_lines(r.out, names)
    for s in range(2):
        for w in range(4):
            assert lines[f"s{s}w{w}"] == [f"{external(s * 4 + w)} {s} {w}/4"], str(r)


@pytest.mark.parametrize("state,text", [("WAITING_FOR_RESOURCES", "WAITING_FOR_RESOURCES"),
                                        ("FAILED", "no more capacity")])
def test_queued_resource_not_active(farm, gcloud, state, text):
    gcloud.raw("queued-resources", "qr", gen.dump(gen.queued_resource(
        "qr", state, [gen.multislice_spec("qr", 2)],
        failed_message="There is no more capacity in the zone" if state == "FAILED" else None)))
    r = gcloud.run("--queued-resource", "qr", *LOC, ECHO)
    assert r.returncode == 255, str(r)
    assert "queued resource qr" in error_line(r) and text in error_line(r), str(r)


# ---------------------------------------------------------------------------
# The cache

def test_cache_avoids_gcloud(farm, gcloud):
    gcloud.tpu("tpu4", 4)
    assert gcloud.run("-t", "tpu4", *LOC, ECHO).returncode == 0
    assert len(gcloud.calls("tpu-vm describe")) == 1
    assert gcloud.cache_file("tpu4").exists()
    r = gcloud.run("-t", "tpu4", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    assert len(gcloud.calls("tpu-vm describe")) == 1, "the second run described the TPU again"
    r = gcloud.run("-t", "tpu4", *LOC, "--refresh", ECHO)
    assert r.returncode == 0, str(r)
    assert len(gcloud.calls("tpu-vm describe")) == 2, "--refresh did not describe"


def test_a_queued_resource_asks_for_its_project_once(farm, gcloud):
    """Its slices are TPUs of one project: one project-info describe for them all (it
    was one per slice), and the next run asks gcloud nothing."""
    _multislice(gcloud, "ms4", slices=4, workers=2)
    r = gcloud.run("--queued-resource", "ms4", *LOC, "workers", "--json")
    assert r.returncode == 0, str(r)
    assert [w["label"] for w in json.loads(r.out)] == [f"s{s}w{w}" for s in range(4) for w in range(2)]
    assert len(gcloud.calls("tpu-vm describe")) == 4
    assert gcloud.calls("project-info") == [["compute", "project-info", "describe", "--project", PROJECT,
                                             "--format=json"]]
    before = len(gcloud.calls())
    assert gcloud.run("--queued-resource", "ms4", *LOC, "workers").returncode == 0
    assert gcloud.calls()[before:] == []


def test_a_refused_project_info_is_remembered_with_the_tpu(farm, gcloud):
    """Without compute.projects.get the project's metadata stays unread (OS Login off
    unless the TPU says): the refusal is cached with the TPU, so a repeated run makes no
    gcloud call; --refresh asks again."""
    gcloud.tpu("tpu4", 4)
    gcloud.error("project-info", "PERMISSION_DENIED")
    r = gcloud.run("-t", "tpu4", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    assert len(gcloud.calls("tpu-vm describe")) == 1 and len(gcloud.calls("project-info")) == 1
    refused = json.loads(gcloud.cache_file("tpu4").read_text())["project_info_error"]
    assert refused == f"Could not fetch resource: Required 'compute.projects.get' permission for 'projects/{PROJECT}'"
    before = len(gcloud.calls())
    r = gcloud.run("-t", "tpu4", *LOC, "-v", ECHO)
    assert r.returncode == 0, str(r)
    assert gcloud.calls()[before:] == [], "the repeated run asked gcloud"
    assert f"project {PROJECT}: metadata not readable ({refused}; remembered from " in r.err, str(r)
    assert gcloud.run("-t", "tpu4", *LOC, "--refresh", ECHO).returncode == 0
    assert len(gcloud.calls("tpu-vm describe")) == 2 and len(gcloud.calls("project-info")) == 2


def move_cached_worker(gcloud, name, w):
    """Worker w's cached address becomes one where nothing listens (the farm's sshd is IPv4
    only), as when the TPU was recreated and its VMs got new addresses."""
    entry = json.loads(gcloud.cache_file(name).read_text())
    entry["describe"] = entry["describe"].replace(f'"externalIp": "{external(w)}"', '"externalIp": "::1"')
    assert "::1" in entry["describe"]
    gcloud.cache_file(name).write_text(json.dumps(entry))


def test_redescribe_after_cached_address_fails(farm, gcloud):
    """A cached address that no longer answers (the TPU moved) makes tpush describe once more
    and reach the worker at its new address."""
    gcloud.tpu("tpu4", 4)
    assert gcloud.run("-t", "tpu4", *LOC, ECHO).returncode == 0
    move_cached_worker(gcloud, "tpu4", 1)
    r = gcloud.run("-t", "tpu4", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    assert output_lines(r.out, labels(4))["w1"] == [f"{external(1)} 1/4"], str(r)
    assert len(gcloud.calls("tpu-vm describe")) == 2, "no re-describe after the cached address failed"
    assert "::1" not in gcloud.cache_file("tpu4").read_text()


@pytest.mark.parametrize("sub", ["cp", "get"])
def test_redescribe_applies_to_file_copies(farm, gcloud, tmp_path, sub):
    """`cp` and `get` also retry a worker whose cached address failed, at the address a fresh
    describe gives, and every worker's copy arrives."""
    gcloud.tpu("tpu4", 4)
    assert gcloud.run("-t", "tpu4", *LOC, ECHO).returncode == 0
    move_cached_worker(gcloud, "tpu4", 2)
    src = tmp_path / "payload.txt"
    src.write_text("payload\n")
    if sub == "cp":  # the workers share this machine: each writes its own target name
        args = ["cp", src, str(tmp_path / "pushed") + "/"]
    else:
        args = ["get", src, tmp_path / "got"]
    r = gcloud.run("-t", "tpu4", *LOC, *args)
    assert r.returncode == 0, str(r)
    assert r.summary().ok == 4, str(r)
    assert len(gcloud.calls("tpu-vm describe")) == 2, "no re-describe after the cached address failed"
    if sub == "cp":
        assert (tmp_path / "pushed" / "payload.txt").read_text() == "payload\n"
    else:
        for w in labels(4):
            assert (tmp_path / "got" / w / "payload.txt").read_text() == "payload\n", w


def test_corrupt_cache_is_ignored(farm, gcloud):
    gcloud.tpu("tpu4", 4)
    assert gcloud.run("-t", "tpu4", *LOC, ECHO).returncode == 0
    gcloud.cache_file("tpu4").write_text('{"tpush_cache": 1, "describe": ')
    r = gcloud.run("-t", "tpu4", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    assert "ignoring corrupt cache file" in r.err, str(r)
    assert len(gcloud.calls("tpu-vm describe")) == 2
    json.loads(gcloud.cache_file("tpu4").read_text())  # rewritten whole


# ---------------------------------------------------------------------------
# Zone and project

def test_zone_and_project_from_gcloud_config(farm, gcloud):
    gcloud.tpu("tpu4", 4)
    gcloud.config("compute/zone", ZONE)
    gcloud.config("core/project", PROJECT)
    r = gcloud.run("-t", "tpu4", ECHO)
    assert r.returncode == 0, str(r)
    assert gcloud.calls("get-value"), "gcloud config was not asked"
    d = gcloud.calls("tpu-vm describe")[0]
    assert d[d.index("--zone") + 1] == ZONE and d[d.index("--project") + 1] == PROJECT


def test_zone_from_environment_beats_gcloud_config(farm, gcloud):
    gcloud.tpu("tpu4", 4)
    gcloud.config("compute/zone", "europe-west4-a")
    r = gcloud.run("-t", "tpu4", ECHO, env=gcloud.env(TPUSH_ZONE=ZONE, CLOUDSDK_CORE_PROJECT=PROJECT))
    assert r.returncode == 0, str(r)
    assert gcloud.calls("get-value") == []


def test_no_zone_is_a_usage_error(farm, gcloud):
    gcloud.tpu("tpu4", 4)
    r = gcloud.run("-t", "tpu4", "--project", PROJECT, ECHO)
    assert r.returncode == 2, str(r)
    assert "--zone" in error_line(r), str(r)


# ---------------------------------------------------------------------------
# Host keys

def test_pinned_host_keys_accepted(farm, gcloud, home):
    """With --fetch-host-keys the key from the guest attributes is authoritative: no
    known_hosts entry is needed even with --host-key-check yes."""
    gcloud.tpu("tpu4", 4)
    gcloud.guest_attributes("tpu4", {w: farm_ed25519(farm) for w in range(4)})
    (home / ".ssh" / "known_hosts").unlink()
    r = gcloud.run("-t", "tpu4", *LOC, "--fetch-host-keys", "--host-key-check", "yes", ECHO)
    assert r.returncode == 0, str(r)
    assert len(output_lines(r.out, labels(4))["w3"]) == 1, str(r)
    assert len(gcloud.calls("get-guest-attributes")) == 1


def test_wrong_pinned_host_key_refused(farm, gcloud, home):
    gcloud.tpu("tpu4", 4)
    wrong = "ssh-ed25519 " + gen.ed25519_blob("not the farm's key")
    keys = {w: farm_ed25519(farm) for w in range(4)}
    keys[2] = wrong
    gcloud.guest_attributes("tpu4", keys)
    r = gcloud.run("-t", "tpu4", *LOC, "--fetch-host-keys", ECHO)
    assert r.returncode == 255, str(r)
    lines = output_lines(r.out, labels(4))
    assert lines["w2"] == [], "the command ran despite a wrong pinned host key\n" + str(r)
    assert lines["w0"] == [f"{external(0)} 0/4"], str(r)
    s = r.summary()
    assert "host key" in s.reasons.get("w2", ""), str(r)
    assert set(s.reasons) == {"w2"}, str(r)


def test_google_compute_known_hosts_aliases(farm, gcloud, home):
    """gcloud's known hosts file (entries under tpu.<id>-<worker>) is enough under
    --host-key-check yes, with no other known_hosts entry."""
    gcloud.tpu("tpu4", 4, node_id="1234567890123456789")
    (home / ".ssh" / "known_hosts").unlink()
    key = farm_ed25519(farm)
    (home / ".ssh" / "google_compute_known_hosts").write_text(
        "".join(f"tpu.1234567890123456789-{w} {key}\n" for w in range(4)))
    r = gcloud.run("-t", "tpu4", *LOC, "--host-key-check", "yes", ECHO)
    assert r.returncode == 0, str(r)


def test_recreated_tpu_does_not_trip_old_entries(farm, gcloud, home):
    """Entries for an old incarnation (another id, another key) are not a 'host key changed'."""
    gcloud.tpu("tpu4", 4, node_id="2222222222222222222")
    old = "ssh-ed25519 " + gen.ed25519_blob("old incarnation")
    (home / ".ssh" / "google_compute_known_hosts").write_text(
        "".join(f"tpu.1111111111111111111-{w} {old}\n" for w in range(4)))
    r = gcloud.run("-t", "tpu4", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    assert "host key changed" not in r.err, str(r)


# ---------------------------------------------------------------------------
# Errors: one line each, exit 255 (2 for usage), before any connection

@pytest.mark.parametrize("kind,text", [
    ("NOT_FOUND", "zones tried: " + ZONE),
    ("PERMISSION_DENIED", "permission denied"),
    ("SERVICE_DISABLED", "gcloud services enable tpu.googleapis.com"),
    ("NOT_LOGGED_IN", "gcloud auth login"),
])
def test_gcloud_errors(farm, gcloud, kind, text):
    gcloud.tpu("tpu4", 4)
    gcloud.error("describe", kind)
    r = gcloud.run("-t", "tpu4", *LOC, ECHO)
    assert r.returncode == 255, str(r)
    assert text in error_line(r), str(r)
    assert r.out == "", str(r)


def test_tpu_not_found_lists_zones(farm, gcloud):
    r = gcloud.run("-t", "ghost", "--zone", f"europe-west4-a,{ZONE}", "--project", PROJECT, ECHO)
    assert r.returncode == 255, str(r)
    line = error_line(r)
    assert "TPU ghost not found" in line and f"europe-west4-a, {ZONE}" in line and "--zone" in line, str(r)


def test_gcloud_timeout(farm, gcloud):
    gcloud.tpu("tpu4", 4)
    gcloud.error("describe", "HANG")
    r = gcloud.run("-t", "tpu4", *LOC, "--gcloud-timeout", "1", ECHO, timeout=30)
    assert r.returncode == 255, str(r)
    assert "timed out after 1s" in error_line(r), str(r)
    assert r.elapsed < 15, str(r)


def test_gcloud_not_installed(farm, gcloud, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    r = gcloud.run("-t", "tpu4", *LOC, ECHO, env=gcloud.env(PATH=str(empty)))
    assert r.returncode == 255, str(r)
    assert "gcloud not found" in error_line(r), str(r)


def test_malformed_json(farm, gcloud):
    gcloud.raw("describe", "bad", '{"acceleratorType": "v4-32", "networkEndpoints": [')
    r = gcloud.run("-t", "bad", *LOC, ECHO)
    assert r.returncode == 255, str(r)
    assert "malformed" in error_line(r), str(r)


def test_zero_endpoints(farm, gcloud):
    node = gen.node("empty", "1", 1)
    node["networkEndpoints"] = []
    gcloud.raw("describe", "empty", gen.dump(node))
    r = gcloud.run("-t", "empty", *LOC, ECHO)
    assert r.returncode == 255, str(r)
    assert "no network endpoints" in error_line(r), str(r)


# ---------------------------------------------------------------------------
# tpush workers

def test_workers_subcommand(farm, gcloud):
    gcloud.tpu("tpu4", 4)
    r = gcloud.run("workers", "-t", "tpu4", *LOC)
    assert r.returncode == 0, str(r)
    rows = [l.split() for l in r.out.splitlines()]
    assert [row[0] for row in rows] == labels(4), str(r)
    assert rows[1][1] == f"{external(1)}:{farm.port}", str(r)
    assert rows[1][2] == USER, str(r)
    assert "gcloud" in r.out and f"{PROJECT}/{ZONE}/tpu4" in r.out, str(r)

    r = gcloud.run("workers", "-t", "tpu4", *LOC, "--json")
    assert r.returncode == 0, str(r)
    data = json.loads(r.out)
    assert [w["label"] for w in data] == labels(4)
    assert data[2]["host"] == external(2) and data[2]["port"] == farm.port
    assert data[2]["source"] == "cache" and data[2]["tpu"] == "tpu4"
    assert data[2]["internal_ip"] == internal(2)
    assert data[2]["host_key_aliases"] == ["tpu.6874917357421523817-2"]
    assert len(gcloud.calls("tpu-vm describe")) == 1
