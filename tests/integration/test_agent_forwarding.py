"""-A, -o ForwardAgent=yes and ForwardAgent in ssh_config forward the user's ssh-agent to
the remote command, as ssh -A does; off by default and with -a. tpush serves the agent
channels itself and passes every request on to the user's agent; a command on a session
without forwarding that finds an agent socket anyway (a kept connection forwarded it for an
earlier run) gets nothing from it."""

import subprocess

from conftest import host_args, split_prefixed, ssh_add


def fingerprint_line(key) -> str:
    """`ssh-add -l`'s line for the key (bits, SHA256 fingerprint, comment, type)."""
    return subprocess.run(["ssh-keygen", "-l", "-f", f"{key}.pub"], capture_output=True, text=True,
                          check=True, timeout=30).stdout.strip()


LIST = "ssh-add -l 2>&1; echo status $?"


def listed(r, hosts) -> dict[str, list[str]]:
    return split_prefixed(r.out, hosts)


def test_with_A_the_remote_ssh_add_lists_the_users_keys(farm, tpush, agent):
    key = farm.key("id_ed25519")
    ssh_add(agent, key)
    hosts = farm.hosts[:3]
    env = tpush.env(SSH_AUTH_SOCK=agent)
    for how in (["-A"], ["-o", "ForwardAgent=yes"], ["-o", f"ForwardAgent={agent}"]):
        r = tpush(*how, *host_args(hosts), LIST, env=env)
        assert r.returncode == 0, str(r)
        assert all(lines == [fingerprint_line(key), "status 0"] for lines in listed(r, hosts).values()), str(r)


def test_without_A_or_with_a_the_command_sees_no_agent(farm, tpush, agent, tmp_path):
    ssh_add(agent, farm.key("id_ed25519"))
    hosts = farm.hosts[:2]
    env = tpush.env(SSH_AUTH_SOCK=agent)
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n    ForwardAgent yes\n")
    for how in ([], ["-a", "-F", config], ["-o", "ForwardAgent=no"]):
        r = tpush(*how, *host_args(hosts), LIST, env=env)
        assert r.returncode == 0, str(r)
        assert all(lines == ["Could not open a connection to your authentication agent.", "status 2"]
                   for lines in listed(r, hosts).values()), str(r)
    # ForwardAgent yes in ssh_config alone forwards it
    r = tpush("-F", config, *host_args(hosts), LIST, env=env)
    assert all(lines[-1] == "status 0" for lines in listed(r, hosts).values()), str(r)


def test_with_A_and_no_agent_here_the_remote_agent_refuses(farm, tpush):
    """-A without an agent on the client (SSH_AUTH_SOCK unset): the remote ssh-add is
    told the agent refused, the run goes on, nothing hangs."""
    hosts = farm.hosts[:2]
    r = tpush("-A", *host_args(hosts), LIST)
    assert r.returncode == 0, str(r)
    assert all(lines == ["error fetching identities: agent refused operation", "status 1"]
               for lines in listed(r, hosts).values()), str(r)
