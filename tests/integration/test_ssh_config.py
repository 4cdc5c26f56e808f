"""~/.ssh/config, -F, -o and ProxyCommand: tpush reaches what `ssh` reaches, as ssh would.

The values tpush settles for each worker are compared with `ssh -G` on the same config
(OpenSSH is the oracle); runs then prove those values are the ones used.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import FARM_WORKERS, USER, host_args, output_lines

ECHO = 'set -- $SSH_CONNECTION; echo "$3 $4"'


def config(home: Path, text: str) -> Path:
    p = home / ".ssh" / "config"
    p.write_text(text)
    p.chmod(0o600)
    return p


def ssh_g(cfg: Path, host: str, *args: str) -> dict[str, list[str]]:
    """`ssh -G -F cfg [args] host`: keyword -> values (lines may repeat)."""
    r = subprocess.run(["ssh", "-G", "-F", str(cfg), *args, host], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    out: dict[str, list[str]] = {}
    for line in r.stdout.splitlines():
        k, _, v = line.partition(" ")
        out.setdefault(k, []).append(v)
    return out


def workers_json(tpush, *args) -> list[dict]:
    r = tpush(*args, "workers", "--json")
    assert r.returncode == 0, str(r)
    return json.loads(r.out)


def test_per_host_user_port_hostname_match_ssh_g(farm, tpush, home):
    """Aliases, wildcards, negation, first-wins and Match, settled as ssh -G settles them."""
    a = farm.addresses
    cfg = config(home, f"""
Host w-one
  HostName {a[0]}
Host w-* !w-three
  Port {farm.port}
Host w-two
  HostName {a[1]}
  Port 1
Host w-three
  HostName {a[2]}
  Port {farm.port}
  User {USER}
Match originalhost w-one
  User nobody-{USER}
Host *
  User {USER}
""")
    names = ["w-one", "w-two", "w-three"]
    got = {w["label"]: w["reach"] for w in workers_json(tpush, "-F", cfg, "-w", ",".join(names))}
    for n in names:
        g = ssh_g(cfg, n)
        assert got[n]["hostname"]["value"] == g["hostname"][0], (n, got[n], g["hostname"])
        assert str(got[n]["port"]["value"]) == g["port"][0], (n, got[n]["port"], g["port"])
        assert got[n]["user"]["value"] == g["user"][0], (n, got[n]["user"], g["user"])
    lines = cfg.read_text().splitlines()
    assert got["w-one"]["user"]["from"] == f"~/.ssh/config:{lines.index(f'  User nobody-{USER}') + 1}"
    # the first value obtained wins: w-two's Port comes from `Host w-* !w-three`
    assert got["w-two"]["port"]["from"] == f"~/.ssh/config:{lines.index(f'  Port {farm.port}') + 1}"


def test_runs_use_the_settled_host_port_and_user(farm, tpush, home):
    hosts = {f"cfg{i}": a for i, a in enumerate(farm.addresses[:8])}
    text = "".join(f"Host {n}\n  HostName {a}\n" for n, a in hosts.items())
    cfg = config(home, text + f"Host cfg*\n  Port {farm.port}\n  User {USER}\n")
    r = tpush("-F", cfg, "-w", "cfg[0-7]", ECHO)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, list(hosts))
    for n, a in hosts.items():
        assert lines[n] == [f"{a} {farm.port}"], str(r)


def test_the_default_config_is_home_ssh_config_and_F_none_skips_it(farm, tpush, home):
    config(home, f"Host alias0\n  HostName {farm.addresses[0]}\n  Port {farm.port}\n")
    r = tpush("-w", "alias0", ECHO)
    assert r.returncode == 0 and r.out.strip() == f"alias0: {farm.addresses[0]} {farm.port}", str(r)
    r = tpush("-F", "none", "--connect-timeout", 3, "-w", "alias0", "true")
    assert r.returncode == 255 and "cannot resolve host" in r.err, str(r)


def test_o_lines_come_first_and_flags_win_over_the_config(farm, tpush, home):
    cfg = config(home, f"Host *\n  Port 1\n  User nobody\n")
    wj = workers_json(tpush, "-F", cfg, "-o", f"Port={farm.port}", "-l", USER, "-w", farm.addresses[0])[0]
    assert wj["reach"]["port"] == {"value": farm.port, "from": "-o"}
    assert wj["reach"]["user"] == {"value": USER, "from": "-l"}
    r = tpush("-F", cfg, "-o", f"Port={farm.port}", "-l", USER, "-w", farm.addresses[0], ECHO)
    assert r.returncode == 0, str(r)
    # user@ and :port in the host list win over the config, and over -l and -p (the
    # defaults for the hosts that name none).
    wj = workers_json(tpush, "-F", cfg, "-w", f"{USER}@{farm.addresses[0]}:{farm.port}")[0]
    assert wj["reach"]["user"] == {"value": USER, "from": "host list"}
    assert wj["reach"]["port"] == {"value": farm.port, "from": "host list"}
    wj = workers_json(tpush, "-F", cfg, "-p", 2, "-l", "alice", "-w",
                      f"{USER}@{farm.addresses[0]}:{farm.port},{farm.addresses[1]}")
    assert wj[0]["reach"]["port"] == {"value": farm.port, "from": "host list"}
    assert wj[0]["reach"]["user"] == {"value": USER, "from": "host list"}
    assert wj[1]["reach"]["port"] == {"value": 2, "from": "-p"}
    assert wj[1]["reach"]["user"] == {"value": "alice", "from": "-l"}


def test_identity_file_and_identities_only_from_the_config(farm, tpush, bare_home):
    """No default key exists; the config names the test key for these hosts only."""
    key = bare_home / ".ssh" / "test_ecdsa"
    cfg = config(bare_home, f"Host {farm.addresses[0]}\n  IdentityFile {key}\n  IdentitiesOnly yes\n")
    r = tpush("-F", cfg, *host_args(farm.hosts[:2]), "true")
    assert r.returncode == 255, str(r)
    s = r.summary()
    assert s.ok == 1 and s.unreachable == 1, str(r)
    assert "no keys found" in s.reasons[farm.hosts[1]], str(r)
    wj = workers_json(tpush, "-F", cfg, "-w", farm.hosts[0])[0]
    assert wj["reach"]["identity_files"] == [{"value": str(key), "from": "~/.ssh/config:2"}]
    assert wj["reach"]["identities_only"]["value"] is True


def test_a_config_ssh_refuses_is_a_usage_error_naming_file_and_line(tpush, home):
    cfg = config(home, "Host *\n  Prot 22\n")
    r = tpush("-F", cfg, "-w", "h", "true")
    assert r.returncode == 2, str(r)
    assert "~/.ssh/config:2" in r.err and "prot" in r.err and '"Port"' in r.err, str(r)
    assert len(r.err.strip().splitlines()) == 1, str(r)


def test_match_exec_warns_once_and_does_not_apply(farm, tpush, home):
    cfg = config(home, f"Match exec true\n  Port 1\nHost *\n  Port {farm.port}\n")
    r = tpush("-F", cfg, *host_args(farm.addresses[:3]), "true")
    assert r.returncode == 0, str(r)
    assert r.err.count("Match exec") == 1, str(r)


def test_proxy_jump_from_the_config(farm, tpush, home, bastion):
    bastion.add_to_known_hosts(home / ".ssh" / "known_hosts")
    cfg = config(home, f"Host {' '.join(farm.addresses[:16])}\n  ProxyJump {bastion.jump(USER)}\n")
    r = tpush("-F", cfg, *host_args(farm.hosts[:16] + farm.hosts[16:20]), ECHO)
    assert r.returncode == 0, str(r)
    counts = bastion.counts()
    assert counts["sessions"] == 1 and counts["channels"] == 16, counts  # the 4 others go direct


def test_proxy_command_from_the_config(farm, tpush, home, relay):
    cfg = config(home, f"Host *\n  ProxyCommand {relay.command()}\n")
    hosts = farm.hosts[:8]
    r = tpush("-F", cfg, *host_args(hosts), ECHO)
    assert r.returncode == 0, str(r)
    lines = output_lines(r.out, hosts)
    for h, a in zip(hosts, farm.addresses):
        assert lines[h] == [f"{a} {farm.port}"] or lines[h][0].split()[0] == "127.0.0.1", str(r)
    assert sorted(relay.log.targets()) == sorted((a, farm.port) for a in farm.addresses[:8])
    relay.log.wait_for(started=8)
    end = time.monotonic() + 30
    while relay.log.running() and time.monotonic() < end:  # killed and reaped with the run
        time.sleep(0.05)
    assert relay.log.running() == []


def test_a_failing_proxy_command_is_the_reason(farm, tpush, home, relay):
    cfg = config(home, f"Host *\n  ProxyCommand {relay.command(fail='tunnel refused by policy')}\n")
    r = tpush("-F", cfg, *host_args(farm.hosts[:3]), "true")
    assert r.returncode == 255, str(r)
    s = r.summary()
    for h in farm.hosts[:3]:
        assert s.reasons[h].startswith("proxy command '"), str(r)
        assert "tunnel refused by policy" in s.reasons[h], str(r)


def test_proxy_command_none_disables_an_inherited_one(farm, tpush, home, relay):
    cfg = config(home, f"Host {farm.addresses[0]}\n  ProxyCommand none\nHost *\n  ProxyCommand {relay.command()}\n")
    r = tpush("-F", cfg, *host_args(farm.hosts[:2]), "true")
    assert r.returncode == 0, str(r)
    assert relay.log.targets() == [(farm.addresses[1], farm.port)]


def test_connect_timeout_and_attempts_from_the_config(tpush, home, faults):
    """ConnectTimeout bounds each worker; ConnectionAttempts retries a refused connect."""
    from faults import unused_address_port
    addr, port = unused_address_port()
    cfg = config(home, "Host *\n  ConnectTimeout 3\n  ConnectionAttempts 3\n")
    wj = workers_json(tpush, "-F", cfg, "-w", f"{addr}:{port}")[0]
    assert wj["reach"]["connect_timeout"]["value"] == 3
    t0 = time.monotonic()
    r = tpush("-F", cfg, "-w", f"{addr}:{port}", "true")
    elapsed = time.monotonic() - t0
    assert r.returncode == 255 and "connect refused" in r.err, str(r)
    assert 1.8 <= elapsed, f"3 attempts 1 s apart took {elapsed:.2f}s"
