"""tpush's config file and host groups (issue 17): ~/.config/tpush/config and
~/.config/tpush/groups, as a user writes them, against the real farm.

What a user sees: the file's defaults act on runs, the command line wins, ssh_config
ranks above the file for how workers are reached, `@group` and `tpu:NAME` members work
in -w and -x, a mistake is one line naming FILE:LINE, and `tpush config` says where
every value came from."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import USER, host_args, output_lines, split_prefixed
from test_tpu import LOC, external, gcloud  # noqa: F401  (gcloud is a fixture)

ECHO = 'set -- $SSH_CONNECTION; echo "$3"'


def write(home: Path, name: str, text: str) -> Path:
    d = home / ".config" / "tpush"
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_text(text)
    return d / name


def addr(host: str) -> str:
    return host.rsplit(":", 1)[0]


def error_lines(r) -> list[str]:
    return [l for l in r.err.splitlines() if l.startswith("tpush: error: ")]


def test_the_config_file_acts_and_the_command_line_wins(farm, tpush, home):
    hosts = farm.hosts[:2]
    write(home, "config", "label = index   # w0, w1, ...\nquiet = yes\n")
    r = tpush(*host_args(hosts), ECHO)
    assert r.returncode == 0, str(r)
    assert sorted(r.out.splitlines()) == [f"w0: {addr(hosts[0])}", f"w1: {addr(hosts[1])}"], str(r)
    assert r.err == "", "quiet = yes: no summary when every worker succeeded\n" + str(r)

    r = tpush("--label", "host", *host_args(hosts), ECHO)
    assert split_prefixed(r.out, hosts) == {h: [addr(h)] for h in hosts}, str(r)
    r = tpush("--config", "none", *host_args(hosts), ECHO)
    assert split_prefixed(r.out, hosts) == {h: [addr(h)] for h in hosts}, str(r)
    assert "tpush: 2 workers: 2 ok" in r.err, str(r)


def test_a_key_named_only_in_the_config_file_logs_in(farm, tpush, bare_home):
    hosts = farm.hosts[:2]
    r = tpush(*host_args(hosts), ECHO)
    assert r.returncode == 255, "no default key: the login must fail\n" + str(r)
    write(bare_home, "config", "identity = ~/.ssh/test_ecdsa\n")
    r = tpush(*host_args(hosts), ECHO)
    assert r.returncode == 0, str(r)
    assert split_prefixed(r.out, hosts) == {h: [addr(h)] for h in hosts}, str(r)


def test_ssh_config_ranks_above_the_config_files_user(farm, tpush, home):
    host = farm.hosts[0]
    cfg = write(home, "config", "user = nosuchuser\n")
    r = tpush("workers", "-v", "-w", host)
    assert r.returncode == 0, str(r)
    assert f"user nosuchuser (config {cfg}:1)" in r.out, str(r)
    r = tpush("-w", host, ECHO)
    assert r.returncode == 255, "logged in as nosuchuser?\n" + str(r)

    (home / ".ssh" / "config").write_text(f"Host *\n  User {USER}\n")
    r = tpush("-w", host, ECHO)
    assert r.returncode == 0, str(r)
    r = tpush("workers", "-v", "-w", host)
    assert f"user {USER} (~/.ssh/config:2)" in r.out, str(r)


def test_groups_from_the_groups_file_and_the_config_file(farm, tpush, home):
    h = farm.hosts[:4]
    write(home, "groups", f"# clush's format\nrack1: {h[0]},{h[1]}\nrack2: {h[2]}\nboth: @rack[1-2]\n")
    write(home, "config", f"[groups]\nrack2 = {h[3]}\n")
    r = tpush("-w", "@both", "-x", h[1], ECHO)
    assert r.returncode == 0, str(r)
    assert split_prefixed(r.out, [h[0], h[2], h[3]]) == {x: [addr(x)] for x in (h[0], h[2], h[3])}, str(r)
    assert "tpush: 3 workers: 3 ok" in r.err, str(r)

    r = tpush("-w", "@rack3", ECHO)
    assert r.returncode == 2, str(r)
    assert error_lines(r) == [f"tpush: error: bad host list '@rack3': unknown group '@rack3' (groups come from "
                              f"groups file '{home}/.config/tpush/groups' and config file "
                              f"'{home}/.config/tpush/config' (source 'local'))"], str(r)


def test_a_tpu_in_a_group_mixes_with_hosts(farm, tpush, home, gcloud):
    gcloud.tpu("tpu4", 4)
    other = farm.hosts[10]
    write(home, "groups", f"all: tpu:tpu4 {addr(other)}\n")
    r = gcloud.run("-w", "@all", "-x", "tpu:nosuch", *LOC, ECHO)
    assert r.returncode == 0, str(r)
    got = sorted(l.split(": ", 1)[1] for l in r.out.splitlines())
    assert got == sorted([external(w) for w in range(4)] + [addr(other)]), str(r)
    assert "tpush: 5 workers: 5 ok" in r.err, str(r)
    # -x takes a TPU out again.
    r = gcloud.run("-w", "@all", "-x", "tpu:tpu4", *LOC, ECHO)
    assert r.out.splitlines() == [f"{addr(other)}: {addr(other)}"], str(r)


def test_a_mistake_is_one_line_with_file_line_and_fix(farm, tpush, home):
    cfg = write(home, "config", "fanout = 8\nconect-timeout = 5\n")
    r = tpush("-w", farm.hosts[0], "true")
    assert r.returncode == 2, str(r)
    assert r.out == "", str(r)
    lines = r.err.splitlines()
    assert len(lines) == 1, str(r)
    assert lines[0].startswith(f"tpush: error: {cfg}:2: unknown key 'conect-timeout' "
                               "(did you mean 'connect-timeout'?); the keys are user, "), str(r)

    write(home, "config", "fanout = lots\n")
    r = tpush("-w", farm.hosts[0], "true")
    assert r.returncode == 2, str(r)
    assert len(r.err.splitlines()) == 1, str(r)
    assert r.err.startswith(f"tpush: error: {cfg}:1: fanout = lots: "), str(r)
    assert r.err.rstrip().endswith("(fix the value, or remove the line)"), str(r)

    r = tpush("--config", str(home / "nope"), "-w", farm.hosts[0], "true")
    assert r.returncode == 2, str(r)
    assert r.err == (f"tpush: error: cannot read config file '{home}/nope' (from --config): No such file or "
                     "directory (create it, or give --config none)\n"), str(r)


def test_tpush_config_says_where_each_value_came_from(farm, tpush, home):
    cfg = write(home, "config", "fanout = 64\nuser = alice\nzone = cfg-zone\n[groups]\ngpu = n[1-2]\n")
    r = tpush("config", "-f", "8", env=tpush.env(TPUSH_ZONE="env-zone"))
    assert r.returncode == 0, str(r)
    rows = {l.split()[0]: l.split(None, 2)[1:] for l in r.out.splitlines()[3:]}
    assert r.out.splitlines()[0] == f"config file: {cfg} (from the default location)", str(r)
    assert r.out.splitlines()[1] == (f"groups: config file '{cfg}' (source 'local'): gpu"), str(r)
    assert rows["fanout"] == ["8", "command line"], str(r)
    assert rows["user"] == ["alice", f"config {cfg}:2 (per worker: ssh_config ranks above)"], str(r)
    assert rows["zone"] == ["env-zone", "TPUSH_ZONE"], str(r)
    assert rows["port"] == ["-", ":port in the host list, else ssh_config's Port, else 22"], str(r)
    assert rows["gcloud-timeout"] == ["60", "default"], str(r)

    j = json.loads(tpush("--json", "config").out)
    assert j["config_file"] == str(cfg) and j["groups"] == ["gpu"], j
    fanout = next(s for s in j["settings"] if s["key"] == "fanout")
    assert fanout == {"key": "fanout", "value": "64", "from": f"config {cfg}:1", "per_worker": False}, j

    r = tpush("--config", "none", "config")
    assert r.out.splitlines()[0] == "config file: none (--config says none)", str(r)
