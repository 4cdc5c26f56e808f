"""Running one command on many workers: output prefixes, environment, summary, exit codes,
and command-line errors that must stop tpush before any connection."""

import re

from conftest import FARM_WORKERS, USER, host_args, output_lines, split_prefixed


def test_all_workers_ok(farm, tpush):
    """Every one of >= 64 workers runs the command; each line appears once, prefixed."""
    assert FARM_WORKERS >= 64
    r = tpush("-H", farm.hosts_file, "set -- $SSH_CONNECTION; echo hello from $3")
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, farm.hosts)
    for host, addr in zip(farm.hosts, farm.addresses):
        assert lines[host] == [f"hello from {addr}"], f"{host}: {lines[host]!r}\n{r}"
    s = r.summary()
    assert (s.total, s.ok, s.failed, s.unreachable, s.timed_out) == (FARM_WORKERS, FARM_WORKERS, 0, 0, 0), str(r)
    assert s.reasons == {}, str(r)


def test_some_workers_fail(farm, tpush):
    """Non-zero exits make tpush exit 1; the summary lists exactly those workers as `exit N`."""
    hosts = farm.hosts[:12]
    r = tpush(*host_args(hosts), "echo run $TPUSH_WORKER; case $TPUSH_WORKER in 3) exit 3;; 7) exit 42;; esac")
    assert r.returncode == 1, str(r)
    lines = split_prefixed(r.out, hosts)
    for i, h in enumerate(hosts):
        assert lines[h] == [f"run {i}"], str(r)
    s = r.summary()
    assert (s.total, s.ok, s.failed, s.unreachable, s.timed_out) == (12, 10, 2, 0, 0), str(r)
    assert s.reasons == {hosts[3]: "exit 3", hosts[7]: "exit 42"}, str(r)


def test_worker_environment(farm, tpush):
    """The remote command sees TPUSH_WORKER (its index) and TPUSH_NUM_WORKERS."""
    r = tpush("-H", farm.hosts_file, 'echo "$TPUSH_WORKER/$TPUSH_NUM_WORKERS"')
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, farm.hosts)
    for i, h in enumerate(farm.hosts):
        assert lines[h] == [f"{i}/{FARM_WORKERS}"], str(r)


def test_expression_with_range_and_default_port(farm, tpush):
    """-w with a bracket range and -p: labels are the host names as written (no port)."""
    r = tpush("-w", "127.0.1.[1-8]", "-p", farm.port, "-l", USER,
              "set -- $SSH_CONNECTION; echo $3 $4")
    assert r.returncode == 0, str(r)
    labels = [f"127.0.1.{k}" for k in range(1, 9)]
    lines = split_prefixed(r.out, labels)
    for l in labels:
        assert lines[l] == [f"{l} {farm.port}"], str(r)


def test_label_index(farm, tpush):
    """--label index labels workers w0, w1, ... in host order."""
    hosts = farm.hosts[:12]
    r = tpush("--label", "index", *host_args(hosts), "set -- $SSH_CONNECTION; echo $3")
    assert r.returncode == 0, str(r)
    labels = [f"w{i}" for i in range(12)]
    lines = split_prefixed(r.out, labels)
    for i, l in enumerate(labels):
        assert lines[l] == [farm.addresses[i]], str(r)


def test_no_prefix(farm, tpush):
    """-N prints the raw lines."""
    hosts = farm.hosts[:8]
    r = tpush("-N", *host_args(hosts), "echo line-$TPUSH_WORKER; echo second-$TPUSH_WORKER")
    assert r.returncode == 0, str(r)
    got = r.out.splitlines()
    assert sorted(got) == sorted([f"line-{i}" for i in range(8)] + [f"second-{i}" for i in range(8)]), str(r)
    for i in range(8):  # per-worker order kept
        assert got.index(f"line-{i}") < got.index(f"second-{i}"), str(r)


def test_stderr_goes_to_stderr(farm, tpush):
    hosts = farm.hosts[:4]
    r = tpush(*host_args(hosts), "echo out-$TPUSH_WORKER; echo err-$TPUSH_WORKER >&2")
    assert r.returncode == 0, str(r)
    out = split_prefixed(r.out, hosts)
    err = output_lines(r.err, hosts)
    for i, h in enumerate(hosts):
        assert out[h] == [f"out-{i}"], str(r)
        assert err[h] == [f"err-{i}"], str(r)


def test_quiet_suppresses_clean_summary(farm, tpush):
    hosts = farm.hosts[:4]
    r = tpush("-q", *host_args(hosts), "true")
    assert r.returncode == 0, str(r)
    assert r.err == "", str(r)
    r = tpush("-q", *host_args(hosts), "test $TPUSH_WORKER != 2")
    assert r.returncode == 1, str(r)
    s = r.summary()
    assert s.head_line is not None and s.reasons == {hosts[2]: "exit 1"}, str(r)


def test_summary_always(farm, tpush):
    hosts = farm.hosts[:6]
    r = tpush("-S", *host_args(hosts), "exit $((TPUSH_WORKER == 4 ? 5 : 0))")
    assert r.returncode == 1, str(r)
    s = r.summary()
    assert s.reasons == {h: ("exit 5" if i == 4 else "ok") for i, h in enumerate(hosts)}, str(r)
    # the per-worker summary lines are aligned like the output prefixes
    worker_lines = [l for l in r.err.splitlines() if l.startswith("tpush: ") and l != s.head_line]
    assert len(worker_lines) == 6, str(r)
    starts = {re.match(r"^tpush: \S+:\s+", l).end() for l in worker_lines}
    assert len(starts) == 1, str(r)


def test_version_mentions_libssh2(tpush):
    r = tpush("--version", timeout=20)
    assert r.returncode == 0, str(r)
    assert re.search(r"^tpush \S+ \(libssh2 1\.11\.\d+\)", r.out, re.M), str(r)


def test_bad_host_expression_is_usage_error(farm, tpush, faults):
    """A bad -w expression: exit 2, `tpush: error:` naming the text, no connection made."""
    witness = faults.server("silent")
    r = tpush("-w", witness.host, "-w", "node[01-", "true", timeout=30)
    assert r.returncode == 2, str(r)
    assert re.search(r"^tpush: error: .*node\[01-", r.err, re.M), str(r)
    assert r.out == "", str(r)
    assert witness.connections_before_now() == 0, "tpush connected before rejecting the expression"


def test_unreadable_hosts_file_is_usage_error(farm, tpush, faults, tmp_path):
    witness = faults.server("silent")
    missing = tmp_path / "no-such-hosts-file"
    r = tpush("-w", witness.host, "-H", missing, "true", timeout=30)
    assert r.returncode == 2, str(r)
    assert re.search(r"^tpush: error: .*" + re.escape(str(missing)), r.err, re.M), str(r)
    assert witness.connections_before_now() == 0, "tpush connected before rejecting the hosts file"
    # a directory is not a readable hosts file either
    r = tpush("-w", witness.host, "-H", tmp_path, "true", timeout=30)
    assert r.returncode == 2, str(r)
    assert re.search(r"^tpush: error: .*" + re.escape(str(tmp_path)), r.err, re.M), str(r)
    assert witness.connections_before_now() == 0


def test_hosts_file_comments_and_blank_lines(farm, tpush, tmp_path):
    hosts = farm.hosts[:3]
    f = tmp_path / "hosts"
    f.write_text(f"# a comment\n\n{hosts[0]}\n   \n{USER}@{hosts[1]}\n{hosts[2]}\n")
    r = tpush("-H", f, "echo $TPUSH_WORKER")
    assert r.returncode == 0, str(r)
    assert len(r.out.splitlines()) == 3, str(r)
    s = r.summary()
    assert s.total == 3 and s.ok == 3, str(r)
