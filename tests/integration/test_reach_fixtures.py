"""The reach fixtures themselves (bastion, hidden farm, ProxyCommand relay, IAP and OS Login
through the stand-in gcloud), checked with OpenSSH's own client: they pass before tpush
supports any of it, so a failing reach test of tpush is tpush's failure.

OpenSSH takes ~ from the passwd entry, not $HOME, and the inner ssh of a ProxyJump gets
only `-F FILE`: every test gives its settings in a config file (jump.ssh_defaults) or
as -o options with -F none.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import resource
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import FARM_WORKERS, USER
import fake_gcloud as fake_gcloud_mod
import jump as jump_mod
from farm import known_hosts_lines, public_key
from faults import unused_address_port

TIMEOUT = 120  # seconds for one ssh; the machine may be loaded


def ssh_run(argv, timeout=TIMEOUT, env=None, input=None) -> subprocess.CompletedProcess:
    return subprocess.run(["ssh", *map(str, argv)], capture_output=True, text=True, timeout=timeout,
                          env=env, input=input, stdin=None if input is not None else subprocess.DEVNULL)


def write_config(path: Path, home: Path, extra: str = "", known_hosts=None) -> Path:
    """An OpenSSH config: `extra` blocks, then Host * with the farm key and known_hosts."""
    path.write_text(extra + jump_mod.ssh_defaults(home / ".ssh" / "id_ed25519",
                                                   known_hosts or home / ".ssh" / "known_hosts", USER))
    return path


def no_config_options(home: Path, known_hosts=None, connect_timeout: int = 60) -> list[str]:
    """The same settings as -o options, for `ssh -F none`. The connect timeout is long:
    ssh counts a ProxyCommand's start in it, and the stand-in gcloud burns a second of
    CPU to start, longer while other tests share the cores. (ssh takes the first
    ConnectTimeout it is given: a test that wants another passes it here.)"""
    return ["-F", "none", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
            "-i", home / ".ssh" / "id_ed25519", "-o", "StrictHostKeyChecking=yes",
            "-o", f"UserKnownHostsFile={known_hosts or home / '.ssh' / 'known_hosts'}",
            "-o", "GlobalKnownHostsFile=/dev/null", "-o", f"ConnectTimeout={connect_timeout}", "-l", USER]


ECHO = 'set -- $SSH_CONNECTION; echo "$3 $4"'


# ---------------------------------------------------------------------------
# ProxyCommand relay

def test_relay_is_a_proxycommand(farm, home, relay):
    r = ssh_run([*no_config_options(home), "-o", f"ProxyCommand={relay.command()}",
                 "-p", farm.port, farm.addresses[1], ECHO])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [farm.addresses[1], str(farm.port)]
    assert relay.log.started() == 1 and relay.log.connected() == 1
    assert relay.log.targets() == [(farm.addresses[1], farm.port)]
    ends = relay.log.events("end")
    assert len(ends) == 1 and ends[0]["up"] > 0 and ends[0]["down"] > 0, ends


def test_relay_half_closes_on_stdin_eof(farm, relay):
    """stdin EOF shuts the socket's write side; the relay keeps copying until the server
    closes: sshd sends its banner, sees EOF, closes, and the relay exits 0."""
    p = subprocess.run(relay.argv(farm.addresses[0], farm.port), input=b"", capture_output=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(b"SSH-2.0-OpenSSH"), p.stdout


def test_relay_fails_at_once(farm, home, relay):
    r = ssh_run([*no_config_options(home), "-o", f"ProxyCommand={relay.command(fail='relay: no route to w1')}",
                 "-p", farm.port, farm.addresses[1], "true"])
    assert r.returncode == 255
    assert "relay: no route to w1" in r.stderr
    assert relay.log.started() == 1 and relay.log.connected() == 0


def test_relay_connect_failure_names_the_target(relay):
    address, port = unused_address_port()
    p = subprocess.run(relay.argv(address, port), input="", capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 1
    assert p.stderr.startswith(f"relay: connect to {address}:{port} failed: Connection refused"), p.stderr


def test_relay_hangs_without_connecting_until_stdin_closes(farm, relay):
    p = subprocess.Popen(relay.argv(farm.addresses[0], farm.port, hang=True), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        relay.log.wait_for(started=1)
        with pytest.raises(subprocess.TimeoutExpired):
            p.wait(timeout=1)  # still hanging a second later
        assert relay.log.connected() == 0
        assert relay.log.running() == [p.pid]
        p.stdin.write(b"SSH-2.0-client\r\n")
        p.stdin.close()  # the client gave up
        assert p.wait(timeout=TIMEOUT) == 1
        assert p.stdout.read() == b""
    finally:
        p.kill()
        p.wait()
        for f in (p.stdout, p.stderr):
            f.close()


def test_relay_hang_times_out_openssh(farm, home, relay):
    t0 = time.monotonic()
    r = ssh_run([*no_config_options(home, connect_timeout=2),
                 "-o", f"ProxyCommand={relay.command(hang=True)}", "-p", farm.port, farm.addresses[1], "true"])
    assert r.returncode == 255
    assert "timed out" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 60
    assert relay.log.connected() == 0


def test_relay_dies_after_n_bytes(farm, home, relay):
    r = subprocess.run(["ssh", *map(str, no_config_options(home)),
                        "-o", f"ProxyCommand={relay.command(die_after=200_000)}",
                        "-p", str(farm.port), farm.addresses[2], "head -c 2000000 /dev/zero"],
                       capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert r.returncode == 255, r.stderr
    assert 0 < len(r.stdout) < 200_000
    faults = relay.log.events("fault")
    assert [f["fault"] for f in faults] == ["die_after"]
    assert faults[0]["up"] + faults[0]["down"] == 200_000
    assert b"relay: dying after 200000 bytes" in r.stderr


# ---------------------------------------------------------------------------
# Bastion on loopback (any user)

def bastion_config(tmp_path, home, bastion) -> Path:
    bastion.add_to_known_hosts(home / ".ssh" / "known_hosts")
    return write_config(tmp_path / "ssh_config", home)


def test_bastion_carries_a_proxyjump(farm, home, tmp_path, bastion):
    cfg = bastion_config(tmp_path, home, bastion)
    r = ssh_run(["-F", cfg, "-J", bastion.jump(USER), "-p", farm.port, farm.addresses[3], ECHO])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [farm.addresses[3], str(farm.port)]
    assert bastion.sessions() == 1 and bastion.channels() == 1
    assert bastion.log.targets() == [(farm.addresses[3], farm.port)]
    assert bastion.log.logins()[0][0] == USER


def test_bastion_counts_from_a_mark(farm, home, tmp_path, bastion):
    cfg = bastion_config(tmp_path, home, bastion)
    assert ssh_run(["-F", cfg, "-J", bastion.jump(USER), "-p", farm.port, farm.addresses[0], "true"]).returncode == 0
    m = bastion.mark()
    assert ssh_run(["-F", cfg, "-J", bastion.jump(USER), "-p", farm.port, farm.addresses[1], "true"]).returncode == 0
    assert bastion.counts() == {"sessions": 2, "channels": 2, "confirmed": 2, "refused": 0}
    assert bastion.counts(since=m) == {"sessions": 1, "channels": 1, "confirmed": 1, "refused": 0}
    assert bastion.log.targets(since=m) == [(farm.addresses[1], farm.port)]


class Master:
    """An OpenSSH ControlMaster connection to a bastion: ssh -W through it multiplexes
    every worker over ONE bastion session, as tpush's in-process ProxyJump does."""

    def __init__(self, cfg: Path, sock: Path, target: list[str]):
        self.cfg, self.sock = cfg, sock
        self.proc = subprocess.Popen(["ssh", "-F", str(cfg), "-M", "-S", str(sock), "-N", *target],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self.target = target
        end = time.monotonic() + TIMEOUT
        while subprocess.run(["ssh", "-F", str(cfg), "-S", str(sock), "-O", "check", *target],
                             capture_output=True, timeout=TIMEOUT).returncode != 0:
            if self.proc.poll() is not None:
                raise RuntimeError(f"control master exited: {self.proc.stderr.read()!r}")
            if time.monotonic() > end:
                raise TimeoutError("control master not ready")
            time.sleep(0.05)  # poll interval

    def proxy_command(self) -> str:
        return f"ssh -F {self.cfg} -S {self.sock} -W %h:%p {' '.join(self.target)}"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        self.proc.stderr.close()


def run_many_through(master: Master, cfg: Path, addresses: list[str], port: int) -> list[str]:
    def one(address):
        r = ssh_run(["-F", cfg, "-o", f"ProxyCommand={master.proxy_command()}", "-p", port, address, ECHO])
        assert r.returncode == 0, (address, r.stderr)
        return r.stdout.strip()
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(one, addresses))


def test_one_bastion_session_carries_every_worker(farm, home, tmp_path, bastion):
    cfg = bastion_config(tmp_path, home, bastion)
    master = Master(cfg, tmp_path / "ctl", ["-p", str(bastion.port), f"{USER}@{bastion.address}"])
    try:
        out = run_many_through(master, cfg, farm.addresses, farm.port)
    finally:
        master.close()
    assert out == [f"{a} {farm.port}" for a in farm.addresses]
    counts = bastion.counts()
    assert counts["sessions"] == 1, counts
    assert counts["channels"] == counts["confirmed"] == FARM_WORKERS, counts
    assert sorted(bastion.log.targets()) == sorted((a, farm.port) for a in farm.addresses)


def test_bastion_with_a_changed_host_key(farm, home, tmp_path, bastions):
    b = bastions(fault="wrong_host_key")
    cfg = bastion_config(tmp_path, home, b)
    r = ssh_run(["-F", cfg, "-J", b.jump(USER), "-p", farm.port, farm.addresses[0], "true"])
    assert r.returncode == 255
    assert "REMOTE HOST IDENTIFICATION HAS CHANGED" in r.stderr and "Host key verification failed" in r.stderr
    assert b.sessions() == 0


def test_bastion_refusing_auth(farm, home, tmp_path, bastions):
    b = bastions(fault="refuse_auth")
    cfg = bastion_config(tmp_path, home, b)
    r = ssh_run(["-F", cfg, "-J", b.jump(USER), "-p", farm.port, farm.addresses[0], "true"])
    assert r.returncode == 255
    assert "Permission denied (publickey)" in r.stderr
    assert b.sessions() == 0 and b.channels() == 0


def test_bastion_refusing_forwarding(farm, home, tmp_path, bastions):
    b = bastions(fault="no_forwarding")
    cfg = bastion_config(tmp_path, home, b)
    r = ssh_run(["-F", cfg, "-J", b.jump(USER), "-p", farm.port, farm.addresses[0], "true"])
    assert r.returncode == 255
    assert "administratively prohibited" in r.stderr, r.stderr
    assert b.counts() == {"sessions": 1, "channels": 1, "confirmed": 0, "refused": 1}


def test_bastion_killed_mid_run(farm, home, tmp_path, bastion):
    cfg = bastion_config(tmp_path, home, bastion)
    p = subprocess.Popen(["ssh", "-F", str(cfg), "-J", bastion.jump(USER), "-p", str(farm.port),
                          farm.addresses[4], "echo started; sleep 300"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        assert p.stdout.readline() == "started\n"
        assert bastion.kill_sessions() >= 1
        t0 = time.monotonic()
        assert p.wait(timeout=TIMEOUT) == 255
        assert time.monotonic() - t0 < 30
    finally:
        if p.poll() is None:
            os.killpg(p.pid, 9)
        p.wait()
        p.stdout.close()
        p.stderr.close()
    # The killed sessions' processes are reaped by the listener in its own time.
    end = time.monotonic() + 10
    while bastion.connection_pids() and time.monotonic() < end:
        time.sleep(0.05)
    assert bastion.connection_pids() == []
    r = ssh_run(["-F", cfg, "-J", bastion.jump(USER), "-p", farm.port, farm.addresses[4], "true"])
    assert r.returncode == 0, r.stderr  # the listener survived; only the sessions died


# ---------------------------------------------------------------------------
# Hidden farm: workers only the bastion reaches (root)

def hidden_config(tmp_path, home, hf) -> Path:
    p = tmp_path / "hidden_ssh_config"
    p.write_text(hf.ssh_config(home / ".ssh" / "id_ed25519", USER))
    return p


def test_hidden_workers_are_unreachable_directly(hidden_farm, home, tmp_path):
    cfg = hidden_config(tmp_path, home, hidden_farm)
    r = ssh_run(["-F", cfg, "-o", "ProxyJump=none", "-p", hidden_farm.port, hidden_farm.addresses[0], "true"])
    assert r.returncode == 255 and "Connection refused" in r.stderr, r.stderr
    # The namespace's end of the veth admits only the bastion's port.
    for port in (hidden_farm.port, 22):
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((hidden_farm.bastion.address, port), timeout=10).close()
    socket.create_connection((hidden_farm.bastion.address, hidden_farm.bastion.port), timeout=10).close()


def test_hidden_workers_through_the_bastion(hidden_farm, home, tmp_path):
    cfg = hidden_config(tmp_path, home, hidden_farm)
    m = hidden_farm.bastion.mark()
    last = hidden_farm.workers - 1
    r = ssh_run(["-F", cfg, f"w{last}", ECHO])
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [hidden_farm.addresses[last], str(hidden_farm.port)]
    assert hidden_farm.bastion.counts(since=m)["channels"] == 1
    assert hidden_farm.bastion.log.targets(since=m) == [(hidden_farm.addresses[last], hidden_farm.port)]
    # -J with the bastion's address works the same way (the alias is not needed).
    r = ssh_run(["-F", cfg, "-J", hidden_farm.bastion.jump(USER), "-p", hidden_farm.port,
                 hidden_farm.addresses[0], ECHO])
    assert r.returncode == 0, r.stderr
    assert hidden_farm.bastion.counts(since=m)["sessions"] == 2


def test_one_hidden_bastion_session_carries_every_worker(hidden_farm, home, tmp_path):
    cfg = hidden_config(tmp_path, home, hidden_farm)
    m = hidden_farm.bastion.mark()
    master = Master(cfg, tmp_path / "ctl", ["bastion"])
    try:
        out = run_many_through(master, cfg, hidden_farm.addresses, hidden_farm.port)
    finally:
        master.close()
    assert out == [f"{a} {hidden_farm.port}" for a in hidden_farm.addresses]
    counts = hidden_farm.bastion.counts(since=m)
    assert counts["sessions"] == 1 and counts["channels"] == hidden_farm.workers, counts


def test_hidden_farm_leaves_nothing_behind(farm):
    ok, reason = jump_mod.netns_available()
    if not ok:
        pytest.skip(f"hidden farm: {reason}")
    hf = jump_mod.HiddenFarm(farm, workers=2).start()
    pids = [hf.sshd.pid, hf.bastion.pid]
    assert hf.namespace in jump_mod.list_namespaces()
    hf.stop()
    assert hf.namespace not in jump_mod.list_namespaces()
    assert subprocess.run(["ip", "link", "show", hf.veth_host], capture_output=True).returncode != 0
    assert not any(jump_mod.alive(p) for p in pids)
    assert not hf.dir.exists()
    hf.stop()  # idempotent


# ---------------------------------------------------------------------------
# IAP tunnels and OS Login through the stand-in gcloud (any user)

def iap_known_hosts(tmp_path, farm, names) -> Path:
    """Trust the farm's host keys under the IAP instance names (port 22: plain names)."""
    keys = [public_key(k) for k in farm.host_key_files]
    p = tmp_path / "iap_known_hosts"
    p.write_text("".join(f"{n} {k}\n" for n in names for k in keys))
    return p


def test_iap_tunnel_is_a_proxycommand(farm, home, tmp_path, fake_gcloud):
    names = fake_gcloud.tpu("pod", farm.addresses[:4])
    assert names[2].startswith("t1v-n-") and names[2].endswith("-w-2")
    kh = iap_known_hosts(tmp_path, farm, names)
    r = ssh_run([*no_config_options(home, kh), "-o", f"ProxyCommand={fake_gcloud.proxy_command(names[2])}",
                 names[2], ECHO], env=fake_gcloud.env(iap_port=farm.port))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [farm.addresses[2], str(farm.port)]
    assert fake_gcloud.calls("start-iap-tunnel") == [[
        "compute", "start-iap-tunnel", names[2], "22", "--listen-on-stdin",
        f"--project={fake_gcloud.project}", f"--zone={fake_gcloud.zone}", "--verbosity=warning"]]
    assert fake_gcloud.tunnels.targets() == [(farm.addresses[2], farm.port)]
    assert fake_gcloud.tunnels.running() == []


def test_iap_tunnels_start_together(farm, fake_gcloud):
    """Tunnels started at once each relay to their own worker (stdin at EOF: each returns
    that sshd's banner and exits 0). Eight: each one costs a second of CPU to start, as a
    real gcloud does, and tpush starts a few at a time when it needs its own per worker."""
    addresses = farm.addresses[:8]
    names = fake_gcloud.tpu("pod", addresses)
    env = fake_gcloud.env(iap_port=farm.port)
    t0 = time.monotonic()
    procs = [subprocess.Popen(fake_gcloud.proxy_command(n, port="22").split(), env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for n in names]
    outs = [p.communicate(timeout=TIMEOUT) for p in procs]
    elapsed = time.monotonic() - t0
    assert [p.returncode for p in procs] == [0] * len(names), [e for _, e in outs if e]
    assert all(o.startswith(b"SSH-2.0-OpenSSH") for o, _ in outs)
    assert sorted(fake_gcloud.tunnels.targets()) == sorted((a, farm.port) for a in addresses)
    assert elapsed < TIMEOUT


def test_iap_unknown_instance_fails_like_gcloud(farm, home, tmp_path, fake_gcloud):
    fake_gcloud.tpu("pod", farm.addresses[:2])
    cmd = fake_gcloud.proxy_command("t1v-n-00000000-w-9", port="22").split()
    p = subprocess.run(cmd, env=fake_gcloud.env(iap_port=farm.port), capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert p.returncode == 1
    assert p.stderr == ("ERROR: (gcloud.compute.start-iap-tunnel) Could not fetch resource:\n"
                        f" - The resource 'projects/{fake_gcloud.project}/zones/{fake_gcloud.zone}/instances/"
                        "t1v-n-00000000-w-9' was not found\n")
    r = ssh_run([*no_config_options(home), "-o", f"ProxyCommand={' '.join(cmd)}", "t1v-n-00000000-w-9", "true"],
                env=fake_gcloud.env(iap_port=farm.port))
    assert r.returncode == 255 and "Could not fetch resource" in r.stderr


def iap_failure(stderr: str) -> tuple[str, str]:
    """A failed tunnel's stderr as gcloud writes it: its ERROR line, then the traceback
    it logs with it, ending in the exception.  Returns (ERROR line, last line)."""
    lines = stderr.splitlines()
    assert len(lines) > 3 and lines[1] == "Traceback (most recent call last):", stderr
    assert lines[0].startswith("ERROR: [0] Error during local connection to [stdin]: "), stderr
    return lines[0], lines[-1]


def test_iap_backend_refusing(fake_gcloud):
    """gcloud exits 0 after a tunnel that could not connect."""
    address, port = unused_address_port()
    fake_gcloud.iap_target("down-0", address, port)
    p = subprocess.run(fake_gcloud.proxy_command("down-0", port="22").split(), env=fake_gcloud.env(),
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert p.returncode == 0
    error, last = iap_failure(p.stderr)
    message = "Error while connecting [4003: 'failed to connect to backend']. (Failed to connect to port 22)"
    assert error == "ERROR: [0] Error during local connection to [stdin]: " + message
    assert last.endswith("ConnectionCreationError: " + message)


@pytest.mark.parametrize("kind, text", [
    ("NOT_AUTHORIZED", "Error while connecting [4033: 'not authorized']."),
    ("FAILED_LOOKUP", "Error while connecting [4047: 'Failed to lookup instance']."),
])
def test_iap_injected_errors(farm, fake_gcloud, kind, text):
    names = fake_gcloud.tpu("pod", farm.addresses[:2])
    fake_gcloud.error("start-iap-tunnel", kind, name=names[1])
    env = fake_gcloud.env(iap_port=farm.port)
    bad = subprocess.run(fake_gcloud.proxy_command(names[1], port="22").split(), env=env, capture_output=True,
                         text=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert bad.returncode == 0 and iap_failure(bad.stderr)[0].endswith(text), bad.stderr
    good = subprocess.run(fake_gcloud.proxy_command(names[0], port="22").split(), env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert good.returncode == 0 and good.stdout.startswith(b"SSH-2.0-")


def test_start_costs_what_gcloud_costs(fake_gcloud):
    """Every call burns about a second of CPU before it answers (the real gcloud needs
    ~1.4 s to start); TPUSH_FAKE_GCLOUD_START_CPU sets how much."""
    def cpu_of(env):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run([str(fake_gcloud_mod.GCLOUD), "config", "get-value", "core/project"], env=env,
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert p.returncode == 0 and p.stderr == "(unset)\n", p.stderr
        return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime

    env = fake_gcloud.env()
    env.pop("TPUSH_FAKE_GCLOUD_START_CPU", None)
    assert 0.9 <= cpu_of(env) < 2.0
    assert cpu_of({**env, "TPUSH_FAKE_GCLOUD_START_CPU": "0.3"}) < 0.6


@pytest.mark.parametrize("env, sentence", [
    ({}, "This command is authenticated as tester@example.com which is the active account specified by the "
         "[core/account] property"),
    ({"CLOUDSDK_AUTH_ACCESS_TOKEN_FILE": "/tmp/token"},
     "This command is authenticated with an access token from /tmp/token specified by the "
     "[auth/access_token_file] property"),
    ({"CLOUDSDK_AUTH_DISABLE_CREDENTIALS": "true"},
     "This command is unauthenticated because the [auth/disable_credentials] property is True"),
])
def test_errors_name_the_credentials_as_gcloud_does(fake_gcloud, env, sentence):
    fake_gcloud.error("describe", "PERMISSION_DENIED")
    p = subprocess.run([str(fake_gcloud_mod.GCLOUD), "compute", "tpus", "tpu-vm", "describe", "pod", "--zone",
                        fake_gcloud.zone, "--project", fake_gcloud.project, "--format=json"],
                       env={**fake_gcloud.env(), **env}, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert p.returncode == 1
    first = p.stderr.splitlines()[0]
    assert first.startswith("ERROR: (gcloud.compute.tpus.tpu-vm.describe) PERMISSION_DENIED: Permission "
                            "'tpu.nodes.get' denied on "), first
    assert first.endswith(". " + sentence), first


def test_iap_tunnel_dropping_mid_stream(farm, home, tmp_path, fake_gcloud):
    names = fake_gcloud.tpu("pod", farm.addresses[:1])
    fake_gcloud.error("start-iap-tunnel", "DIE_AFTER", bytes=100_000)
    kh = iap_known_hosts(tmp_path, farm, names)
    r = subprocess.run(["ssh", *map(str, no_config_options(home, kh)),
                        "-o", f"ProxyCommand={fake_gcloud.proxy_command(names[0])}", names[0],
                        "head -c 1000000 /dev/zero"], env=fake_gcloud.env(iap_port=farm.port),
                       capture_output=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert r.returncode == 255 and len(r.stdout) < 100_000


def test_iap_numpy_warning_and_verbosity(farm, fake_gcloud):
    names = fake_gcloud.tpu("pod", farm.addresses[:1])
    fake_gcloud.numpy_warning()
    env = fake_gcloud.env(iap_port=farm.port)
    for verbosity, warned in (("warning", True), ("error", False)):
        p = subprocess.run(fake_gcloud.proxy_command(names[0], port="22", verbosity=verbosity).split(), env=env,
                           capture_output=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT)
        assert p.returncode == 0 and p.stdout.startswith(b"SSH-2.0-")
        assert (b"consider installing NumPy" in p.stderr) == warned, p.stderr


def test_os_login_profile_logs_in(farm, home, tmp_path, fake_gcloud):
    """describe-profile's primary POSIX account is the user tpush should log in as; the
    fixture makes it this test's user, so the login works against the farm."""
    names = fake_gcloud.tpu("oslogin-pod", farm.addresses[:2], oslogin=True)
    fake_gcloud.os_login_profile(USER, keys=[public_key(home / ".ssh" / "id_ed25519")])
    env = fake_gcloud.env(iap_port=farm.port)
    out = subprocess.run(["gcloud", "compute", "os-login", "describe-profile", "--format=json"], env=env,
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    profile = json.loads(out.stdout)
    assert out.stdout == json.dumps(profile, indent=2, sort_keys=True) + "\n"  # gcloud's key order
    primary = [a for a in profile["posixAccounts"] if a.get("primary")]
    assert len(primary) == 1 and primary[0]["username"] == USER
    assert primary[0]["operatingSystemType"] == "LINUX" and primary[0]["uid"].isdigit()
    (fp, key), = profile["sshPublicKeys"].items()
    assert key["fingerprint"] == fp and key["key"] == public_key(home / ".ssh" / "id_ed25519")
    describe = json.loads((fake_gcloud.dir / "describe" / fake_gcloud.project / fake_gcloud.zone /
                           "oslogin-pod.json").read_text())
    assert describe["metadata"] == {"enable-oslogin": "TRUE"}
    kh = iap_known_hosts(tmp_path, farm, names)
    r = ssh_run([*no_config_options(home, kh), "-l", primary[0]["username"],
                 "-o", f"ProxyCommand={fake_gcloud.proxy_command(names[1])}", names[1], "id -un"], env=env)
    assert r.returncode == 0 and r.stdout.strip() == USER, r.stderr


# ---------------------------------------------------------------------------
# The committed fixtures

FIXTURES = Path(fake_gcloud_mod.__file__).resolve().parents[1] / "fixtures" / "gcloud"


def test_committed_fixtures_are_what_generate_py_writes(tmp_path):
    fake_gcloud_mod.gen.main(str(tmp_path))
    written = {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()}
    committed = {p.relative_to(FIXTURES) for p in FIXTURES.rglob("*.json")}
    assert written == committed
    for rel in written:
        assert (tmp_path / rel).read_bytes() == (FIXTURES / rel).read_bytes(), rel


def test_committed_reach_fixtures_have_the_shapes():
    loc = (fake_gcloud_mod.PROJECT, fake_gcloud_mod.ZONE)
    no_ext = json.loads(FIXTURES.joinpath("describe", *loc, "no-external-ip.json").read_text())
    assert no_ext["networkConfig"]["enableExternalIps"] is False
    assert all("accessConfig" not in ep for ep in no_ext["networkEndpoints"])
    oslogin = json.loads(FIXTURES.joinpath("describe", *loc, "oslogin.json").read_text())
    assert oslogin["metadata"]["enable-oslogin"] == "TRUE"
    for name, node in (("no-external-ip", no_ext), ("oslogin", oslogin)):
        items = json.loads(FIXTURES.joinpath("guest-attributes", *loc, f"{name}.json").read_text())
        hostnames = {i["worker_id"]: i["value"] for i in items if i["key"] == "hostname"}
        assert sorted(hostnames) == list(range(len(node["networkEndpoints"])))
        assert all(h.startswith("t1v-n-") and h.endswith(f"-w-{w}") for w, h in hostnames.items())
    profile = json.loads(FIXTURES.joinpath("os-login", "profile.json").read_text())
    assert set(profile) == {"name", "posixAccounts", "sshPublicKeys"}
    assert profile["posixAccounts"][0]["username"] == "tester_example_com"
