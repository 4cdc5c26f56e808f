"""The remote side of a run: stdin streamed to every worker, -e values with awkward
characters (and never in logs), --cd, and --timeout ending the remote process."""

import hashlib
import os
import subprocess
import time

from conftest import host_args, split_prefixed

AWKWARD = "it's \"quoted\" $HOME `date` \\ back\nslash\ttab ünï ;|&*?"


def test_stdin_streamed_to_every_worker(farm, tpush):
    """50 MiB on stdin reach 16 workers byte for byte (each worker checksums what it read)."""
    hosts = farm.hosts[:16]
    data = os.urandom(50 << 20)
    want = hashlib.sha256(data).hexdigest()
    r = tpush(*host_args(hosts), "sha256sum | cut -d' ' -f1", input=data, timeout=300)
    assert r.returncode == 0, str(r)
    lines = split_prefixed(r.out, hosts)
    for h in hosts:
        assert lines[h] == [want], f"{h}: {lines[h]!r}\n{r}"


def test_no_stdin_flag_gives_eof(farm, tpush):
    hosts = farm.hosts[:2]
    r = tpush("-n", *host_args(hosts), "wc -c", input=b"ignored bytes")
    assert r.returncode == 0, str(r)
    assert all(v == ["0"] for v in split_prefixed(r.out, hosts).values()), str(r)


def test_env_values_arrive_intact_and_never_in_logs(farm, tpush):
    """-e NAME (from tpush's environment) and -e NAME=VALUE with quotes, newlines, $, backticks
    reach the command unchanged; -v debug output shows ******** instead of the values."""
    hosts = farm.hosts[:3]
    secret = f"s3cr3t-{os.getpid()}-{AWKWARD}"
    env = tpush.env(MY_SECRET=secret)
    r = tpush("-v", "-e", "MY_SECRET", "-e", f"OTHER={AWKWARD}", *host_args(hosts),
              'printf "%s" "$MY_SECRET" | od -An -tx1 | tr -d " \\n"; echo; '
              'printf "%s" "$OTHER" | od -An -tx1 | tr -d " \\n"; echo', env=env)
    assert r.returncode == 0, str(r)
    hexed = lambda s: s.encode().hex()
    for h, got in split_prefixed(r.out, hosts).items():
        assert got == [hexed(secret), hexed(AWKWARD)], f"{h}: {got!r}\n{r}"
    assert "remote command" in r.err and "********" in r.err, "the debug log shows the command line"
    assert "s3cr3t" not in r.err and "quoted" not in r.err, f"a value leaked into the log:\n{r.err}"


def test_env_name_not_set_is_a_usage_error(farm, tpush):
    env = tpush.env()
    env.pop("TPUSH_TEST_UNSET_VAR", None)
    r = tpush("-e", "TPUSH_TEST_UNSET_VAR", *host_args(farm.hosts[:1]), "true", env=env)
    assert r.returncode == 2 and "TPUSH_TEST_UNSET_VAR" in r.err, str(r)


def test_cd_runs_in_that_directory(farm, tpush, tmp_path):
    hosts = farm.hosts[:2]
    r = tpush("--cd", str(tmp_path), *host_args(hosts), "pwd")
    assert r.returncode == 0, str(r)
    assert all(v == [str(tmp_path)] for v in split_prefixed(r.out, hosts).values()), str(r)
    r = tpush("--cd", str(tmp_path / "missing"), *host_args(hosts), "pwd")
    assert r.returncode == 1, str(r)


def test_timeout_with_tty_ends_the_remote_process(farm, tpush, pty_farm):
    """-u: the worker is reported `timed out after 2s` and, with a pty, the hang-up ends the
    remote command (sshd refuses signal requests for the farm's root logins)."""
    hosts = farm.hosts[:2]
    marker = f"timeout-victim-{os.getpid()}-{time.monotonic_ns()}"
    r = tpush("--tty", "-u", 2, *host_args(hosts), f"sleep 62; echo {marker}", timeout=60)
    assert r.returncode == 255, str(r)
    s = r.summary()
    assert s.timed_out == 2 and all(v == "timed out after 2s" for v in s.reasons.values()), str(r)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
        if not left:
            return
        time.sleep(0.2)
    raise AssertionError(f"remote processes survived the timeout: {left}\n{r}")
