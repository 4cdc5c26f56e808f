"""A private fixture directory for the stand-in gcloud (tests/farm/gcloud), for reach tests.

    g = FakeGcloud(tmp_path / "gcloud")
    names = g.tpu("pod", farm.addresses[:8])    # describe + guest attributes with each
                                                # worker's hostname (t1v-n-XXXXXXXX-w-K)
    g.env(base_env, iap_port=farm.port)         # PATH with tests/farm first, the fixture
                                                # dir, TPUSH_FAKE_IAP_PORT
    g.proxy_command(names[3])                   # the ProxyCommand gcloud itself builds:
                                                # gcloud compute start-iap-tunnel NAME %p
                                                #   --listen-on-stdin --project=P --zone=Z
                                                #   --verbosity=warning
    g.os_login_profile("root")                  # os-login/profile.json whose primary POSIX
                                                # account is a user the farm accepts
    g.calls("start-iap-tunnel"), g.tunnels      # calls.log; iap.log (a RelayLog)

Shapes come from tests/fixtures/gcloud/generate.py, so they match the committed
fixtures.  kill_leftovers() kills tunnels still running (by PID, command line checked).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

try:
    from proxycmd import RelayLog
except ImportError:  # pragma: no cover
    from .proxycmd import RelayLog

FARM_DIR = Path(__file__).resolve().parent
GCLOUD = FARM_DIR / "gcloud"
_spec = importlib.util.spec_from_file_location(
    "gcloud_fixtures", FARM_DIR.parent / "fixtures" / "gcloud" / "generate.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)

PROJECT, ZONE = gen.PROJECT, gen.ZONE


class FakeGcloud:
    """One test's gcloud: its fixture files, its environment and what it was asked."""

    def __init__(self, directory, project: str = PROJECT, zone: str = ZONE):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config_dir = self.dir.parent / (self.dir.name + "-config")  # CLOUDSDK_CONFIG
        self.config_dir.mkdir(exist_ok=True)
        self.project, self.zone = project, zone
        self.tunnels = RelayLog(self.dir / "iap.log", must_contain=str(GCLOUD))

    # -- fixture files -----------------------------------------------------------
    def tpu(self, name: str, addresses: list[str], node_id: str = "8333333333333333333",
            external: bool = False, oslogin: bool = False, hostnames: bool = True,
            host_keys: dict[int, str] | None = None) -> list[str]:
        """Write a READY TPU whose worker k has internal address addresses[k] (no external
        IPs unless `external`); metadata enable-oslogin TRUE if `oslogin`.  Its guest
        attributes name each worker (unless hostnames=False) and carry `host_keys`
        (worker -> 'ssh-ed25519 AAAA...').  Returns the workers' hostnames."""
        workers = len(addresses)
        extra = {"metadata": {"enable-oslogin": "TRUE"}} if oslogin else None
        node = gen.node(name, node_id, workers, external=external, project=self.project, zone=self.zone,
                        internal_ip=lambda w, k: addresses[w], external_ip=lambda w, k: addresses[w],
                        extra=extra)
        gen.write(str(self.dir), "describe", name, node, project=self.project, zone=self.zone)
        names = [gen.tpu_hostname(node_id, w) for w in range(workers)]
        items = []
        for w in range(workers):
            if hostnames:
                items.append({"key": "hostname", "value": names[w], "worker_id": w})
            if host_keys and w in host_keys:
                items.append({"key": "ssh-ed25519", "namespace": "hostkeys",
                              "value": host_keys[w].split()[1], "worker_id": w})
        gen.write(str(self.dir), "guest-attributes", name, items, project=self.project, zone=self.zone)
        return names

    def queued_resource(self, name: str, slices: list[list[str]]) -> None:
        """Write an ACTIVE multislice queued resource NAME whose slice s is the TPU
        NAME-s, its worker k at slices[s][k] (as tpu())."""
        gen.write(str(self.dir), "queued-resources", name,
                  gen.queued_resource(name, node_specs=[gen.multislice_spec(name, len(slices))],
                                      project=self.project, zone=self.zone),
                  project=self.project, zone=self.zone)
        for s, addresses in enumerate(slices):
            self.tpu(f"{name}-{s}", addresses, node_id=str(8000000000000000000 + s))

    def iap_target(self, instance: str, address: str, port: int | None = None) -> None:
        """Map one IAP instance name to address[:port] explicitly (iap/P/Z/INSTANCE)."""
        p = self.dir / "iap" / self.project / self.zone / instance
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"{address}:{port}\n" if port else f"{address}\n")

    def numpy_warning(self, on: bool = True) -> None:
        """Make start-iap-tunnel print gcloud's NumPy warning on stderr, as a real one does."""
        p = self.dir / "iap" / "numpy-warning"
        p.parent.mkdir(parents=True, exist_ok=True)
        if on:
            p.write_text("")
        else:
            p.unlink(missing_ok=True)

    def os_login_profile(self, username: str, account: str = "tester@example.com",
                         keys=(), **kw) -> dict:
        """Write os-login/profile.json with `username` as the primary POSIX account."""
        profile = gen.oslogin_profile(account, username, project=self.project, keys=keys, **kw)
        gen.write_profile(str(self.dir), profile)
        (self.dir / "account").write_text(account + "\n")
        return profile

    def error(self, command: str, kind: str, name: str | None = None, **extra) -> None:
        """error/COMMAND[/P/Z/NAME] = {"error": KIND, ...} (see tests/farm/gcloud)."""
        p = self.dir / "error" / command
        if name is not None:
            p = p / self.project / self.zone / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({"error": kind, **extra}))

    # -- running ---------------------------------------------------------------------
    def env(self, base: dict | None = None, iap_port: int | None = None) -> dict[str, str]:
        """`base` (default os.environ) with tests/farm first on PATH, this fixture dir, a
        private CLOUDSDK_CONFIG and, if given, TPUSH_FAKE_IAP_PORT (where every IAP
        tunnel to a TPU worker lands: the farm's sshd port)."""
        env = dict(os.environ if base is None else base)
        env["PATH"] = f"{FARM_DIR}:{env.get('PATH', '/usr/bin:/bin')}"
        env["TPUSH_FAKE_GCLOUD_DIR"] = str(self.dir)
        env["CLOUDSDK_CONFIG"] = str(self.config_dir)
        for k in ("CLOUDSDK_CORE_PROJECT", "CLOUDSDK_COMPUTE_ZONE", "TPUSH_FAKE_IAP_PORT"):
            env.pop(k, None)
        if iap_port is not None:
            env["TPUSH_FAKE_IAP_PORT"] = str(iap_port)
        return env

    def proxy_command(self, instance: str, port: str = "%p", verbosity: str | None = "warning",
                      track: str = "", gcloud: str | None = None) -> str:
        """The ProxyCommand `gcloud compute ssh/tpu-vm ssh --tunnel-through-iap` builds
        (gcloud's ssh_utils: [track] compute start-iap-tunnel INSTANCE %p --listen-on-stdin
        --project=P --zone=Z [--verbosity=V])."""
        argv = [gcloud or str(GCLOUD)] + ([track] if track else []) + [
            "compute", "start-iap-tunnel", instance, port, "--listen-on-stdin",
            f"--project={self.project}", f"--zone={self.zone}"]
        if verbosity:
            argv.append(f"--verbosity={verbosity}")
        return " ".join(argv)

    def calls(self, needle: str = "") -> list[list[str]]:
        log = self.dir / "calls.log"
        if not log.exists():
            return []
        calls = [json.loads(l) for l in log.read_text().splitlines()]
        return [c for c in calls if needle in " ".join(c)]

    def kill_leftovers(self) -> list[int]:
        """Kill start-iap-tunnel processes still running (by PID from iap.log)."""
        return self.tunnels.kill_leftovers()
