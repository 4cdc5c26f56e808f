#!/usr/bin/env bash
# `make test` from a clone, on a fresh minimal Debian 12: the shape of Debian's
# container image (no git, no make, no netbase, no /etc/hosts of its own).
#
#   tests/package/fresh-test.sh [--until STEP]   (`make fresh-test`; root only)
#
# The root: `debootstrap --variant=minbase SUITE` from deb.debian.org and
# nothing more, kept as a tarball (debootstrap takes minutes), keyed on the
# suite, the architecture and this recipe (KEY: a hash of the mirror):
#   $FRESH_TEST_CACHE (default /var/cache/tpush/fresh-test)/SUITE-minbase-ARCH-KEY.tar
# FRESH_TEST_FRESH=1 builds it again; `rm -r /var/cache/tpush` removes it.
#
# Each run unpacks a copy in a temporary directory and, in private mount and
# PID namespaces (no mount and no process outlives the test, however it ends),
# bind-mounts the root onto itself (tests use `unshare -m`), mounts proc, sys,
# dev, dev/pts and run into it, gives it the host's resolver and an /etc/hosts
# as a container's runtime writes one, and the repository of this clone,
# read-only. Then, as root in the root, the steps README.md gives:
#   clone  apt-get update; apt-get install -y git make; git clone the
#          repository; check out this clone's HEAD (committed work only)
#   deps   make deps: the Debian packages (apt, the network)
#   libssh2  make libssh2: its source (the network) and its static build
#   test   make test, in a network namespace of its own (loopback only): its
#          sshds, ports and nftables rules are its own on a shared machine,
#          and it shows that `make test` needs no network once those are in
# --until clone|deps|libssh2 stops after that step (clone, deps: no compile).
# Each step's time is printed. The temporary root is removed at the end,
# whether the test passed or not (FRESH_TEST_KEEP=1 keeps it, unmounted).
set -euo pipefail

readonly prog="fresh-test"
readonly suite="${FRESH_TEST_SUITE:-bookworm}"
readonly mirror="${FRESH_TEST_MIRROR:-http://deb.debian.org/debian}"
readonly recipe=1
# As `docker run debian:12` starts a shell: root, no locale, no terminal.
readonly root_env=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)

die() { echo "$prog: error: $*" >&2; exit 1; }
say() { echo "$prog: $*"; }

# ---------------------------------------------------------------------------
# Inside the private mount and PID namespaces (this script is PID 1 there).

in_root() { # in_root ROOT CMD...: CMD in ROOT, in /root, with a container's environment
  local root=$1
  shift
  chroot "$root" /usr/bin/env -i "${root_env[@]}" sh -c 'cd /root && exec "$@"' sh "$@"
}

inside_make_root() { # inside_make_root ROOT
  debootstrap --variant=minbase "$suite" "$1" "$mirror"
  # debootstrap copies the host's resolv.conf and hosts into its target when
  # there are any; the cached root gets neither (a run provides both).
  rm -f "$1/etc/resolv.conf" "$1/etc/hosts" "$1"/var/cache/apt/archives/*.deb
}

# step NAME CMD...: runs CMD, says how long it took; a failure ends the run.
step() {
  local name=$1 t=$SECONDS
  shift
  say "== $name"
  "$@" || die "step '$name' failed after $((SECONDS - t))s (output above)"
  say "== $name: $((SECONDS - t))s"
}

inside_test() { # inside_test ROOT REPO_GIT COMMIT UNTIL
  local root=$1 repo_git=$2 commit=$3 until=$4
  mount --bind "$root" "$root" # a mount point: the tests' `unshare -m` changes propagation
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
  mount --bind /dev "$root/dev"
  mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts "$root/dev/pts"
  mount -t tmpfs -o mode=0755 tmpfs "$root/run"
  mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm" 2>/dev/null || true
  touch "$root/etc/resolv.conf"
  mount --bind /etc/resolv.conf "$root/etc/resolv.conf"
  # A container's runtime writes this; debootstrap does not.
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
  mkdir -p "$root/mnt/tpush.git"
  mount --bind "$repo_git" "$root/mnt/tpush.git"
  mount -o remount,bind,ro "$root/mnt/tpush.git"

  step "clone: apt-get install -y git make, git clone" in_root "$root" bash -euc '
    export DEBIAN_FRONTEND=noninteractive
    apt-get -q update
    apt-get -q -o Dpkg::Use-Pty=0 install -y git make
    git -c safe.directory="*" clone -q /mnt/tpush.git tpush
    cd tpush && git -c advice.detachedHead=false checkout -q "$1" && git log -1 --format="%h %s" | cut -c1-100
  ' sh "$commit"
  [[ "$until" == clone ]] && return 0

  step "deps: make deps" in_root "$root" make -C tpush deps </dev/null
  [[ "$until" == deps ]] && return 0
  step "libssh2: make libssh2" in_root "$root" make -C tpush libssh2 </dev/null
  [[ "$until" == libssh2 ]] && return 0

  # The test alone, offline: a network namespace with only its loopback, and
  # sysfs remounted so /sys/class/net is that namespace's.
  step "test: make test" unshare --net -- bash -euc '
    ip link set lo up
    umount "$1/sys" && mount -t sysfs sysfs "$1/sys"
    exec chroot "$1" /usr/bin/env -i '"${root_env[*]}"' sh -c "cd /root/tpush && exec make test" </dev/null
  ' sh "$root"
}

if [[ "${1:-}" == --inside ]]; then
  shift
  case "$1" in
    make-root) inside_make_root "$2" ;;
    test) inside_test "$2" "$3" "$4" "$5" ;;
    *) die "unknown inside step $1" ;;
  esac
  exit
fi

# ---------------------------------------------------------------------------
# Outside: checks, the cache, the run.

usage() {
  echo "usage: tests/package/fresh-test.sh [--until clone|deps|libssh2|test]" >&2
  exit 2
}
until="test"
case "${1:-}" in
  "") ;;
  --until)
    [[ "${2:-}" =~ ^(clone|deps|libssh2|test)$ ]] || usage
    until=$2 ;;
  *) usage ;;
esac
if [[ $EUID -ne 0 ]]; then
  echo "$prog: needs root (debootstrap, chroot, namespaces, mounts): run 'sudo make fresh-test'" >&2
  exit 2
fi
for tool in debootstrap unshare chroot git ip flock; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh fresh installs debootstrap)"
done

self=$(realpath "${BASH_SOURCE[0]}")
# shellcheck source=tests/package/cached-root.sh
source "$(dirname "$self")/cached-root.sh"
repo=$(cd "$(dirname "$self")/../.." && pwd)
repo_git=$(realpath "$(git -C "$repo" rev-parse --git-common-dir)")
commit=$(git -C "$repo" rev-parse HEAD)
[[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ]] ||
  say "note: $repo has uncommitted changes; the test clones its HEAD, $(git -C "$repo" log -1 --format=%h)"

arch=$(dpkg --print-architecture)
cache_dir="${FRESH_TEST_CACHE:-/var/cache/tpush/fresh-test}"
key=$(printf '%s\n' "$recipe" "$mirror" | sha256sum | cut -c1-12)
cache="$cache_dir/$suite-minbase-$arch-$key.tar"
mkdir -p "$cache_dir"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/tpush-fresh-test.XXXXXX")
inner=''
cleanup() {
  # unshare --kill-child ends the whole PID namespace with its first process,
  # and the mounts end with the namespace: what is left are plain files.
  if [[ -n "$inner" ]] && kill -0 "$inner" 2>/dev/null; then
    kill -TERM "$inner" 2>/dev/null || true
    wait "$inner" 2>/dev/null || true
  fi
  if grep -qF " $work/" /proc/self/mountinfo; then
    echo "$prog: something is still mounted under $work: not removing it" >&2
  elif [[ "${FRESH_TEST_KEEP:-0}" == 1 ]]; then
    say "kept the root: $work/root"
  else
    rm -rf --one-file-system -- "$work"
  fi
  rm -f -- "$cache.tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

inside() { # inside STEP ARGS...: this script's STEP, in private mount and PID namespaces
  unshare --mount --propagation private --pid --kill-child -- "$self" --inside "$@" 9>&- &
  inner=$!
  local rc=0
  wait "$inner" || rc=$?
  inner=''
  return $rc
}

start=$SECONDS
unpack_cached_root FRESH_TEST_FRESH "debootstrap from $mirror"

rc=0
inside test "$work/root" "$repo_git" "$commit" "$until" || rc=$?
if [[ $rc -ne 0 ]]; then
  say "FAILED after $((SECONDS - start))s (see above)" >&2
elif [[ "$until" != test ]]; then
  say "stopped after '$until', as asked: $((SECONDS - start))s"
else
  say "passed: make test on a fresh $suite minbase root, from a clone of $(git -C "$repo" log -1 --format=%h "$commit"), in $((SECONDS - start))s"
fi
exit $rc
