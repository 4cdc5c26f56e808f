#!/usr/bin/env bash
# Install the Debian packages tpush needs for one purpose.
#
#   scripts/install-deps.sh [--check] [build|dev|test|bench|fuzz|package|fresh]   (default: build)
#
#   build  what compiling and installing tpush needs
#   dev    + doctest, for the unit tests (`make`, `make build`)
#   test   + sshd, pytest and the oracles (`make test`, `make demo`, `make deps`)
#   bench  + the tools tpush is measured against (`make bench`)
#   fuzz   build + clang and libFuzzer (`make fuzz`, `make fuzz-smoke`)
#   package  build + debhelper, lintian and debootstrap (`make deb`, `make package-test`)
#   fresh  debootstrap alone (`make fresh-test`: everything else is installed in its root)
#
# Each of build, dev, test and bench includes the one before it. Packages
# already installed are found with dpkg alone, so a machine that has everything
# costs no apt call and prints nothing. As root the missing packages are
# installed with apt-get (refreshing the package lists first only when they are
# missing or stale);
# with --check, or when not root, the exact command to run as root is printed
# and the script exits 1.
set -euo pipefail

readonly prog="install-deps"
readonly lists_max_age_min=$((6 * 60)) # refresh lists older than this before installing

# Compiler, CMake and tpush's libraries, plus what scripts/build-libssh2.sh
# uses to fetch and unpack libssh2 1.11.1 (apt-get source → dpkg-source, or
# curl for the upstream tarball; xz for the Debian patch tarball; patch for
# tpush's own scripts/patches).
readonly build_pkgs=(
  g++ cmake make pkg-config
  libssl-dev libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libboost-dev libboost-filesystem-dev libedit-dev libncurses-dev
  dpkg-dev debian-archive-keyring xz-utils ca-certificates curl patch
)
# The unit tests.
readonly dev_pkgs=(doctest-dev)
# Real sshd on loopback, pytest, fault injection (nft, ip), process tools, and
# the oracles tests compare against (dshbak from pdsh; clubak and nodeset from
# clustershell), what checks the man page and the zsh and fish completions, and
# what drives tpush at a terminal (pexpect's pty, pyte's screen). netbase:
# /etc/services, where port names (`Port ssh`) are looked up, by tpush as by
# OpenSSH (a minimal root, as Debian's container image, has none). pytest-xdist
# runs the integration tests side by side; shellcheck reads the scripts tpush
# sends to workers, and busybox's shell runs them as a worker with busybox's
# userland would. sudo (and passwd's useradd, chpasswd) for --sudo's tests, as
# root: a login user with a password and sudoers rules of the test's. ccache keeps
# what the compiler made, so CI's next clone (same directory) builds in seconds.
readonly test_pkgs=(
  openssh-server openssh-client python3 python3-pytest netbase
  nftables iproute2 procps psmisc lsof rsync
  pdsh clustershell
  man-db zsh fish
  python3-pexpect python3-pyte
  python3-pytest-xdist shellcheck busybox sudo passwd ccache
)
# The tools tpush is measured against.
readonly bench_pkgs=(pssh hyperfine strace time)
# The libFuzzer targets of tests/fuzz: clang, its runtime libraries (libFuzzer,
# ASan, UBSan), and llvm-symbolizer for readable crash stacks.
readonly fuzz_pkgs=(clang-14 libclang-rt-14-dev llvm-14)
# The Debian package: dpkg-buildpackage's debhelper (dpkg-dev is in build), lintian
# to check the .deb, debootstrap for the clean root tests/package/ installs it on.
readonly package_pkgs=(debhelper lintian debootstrap)
# `make test` on a fresh debootstrapped root (tests/package/fresh-test.sh).
readonly fresh_pkgs=(debootstrap)

usage() {
  echo "usage: scripts/install-deps.sh [--check] [build|dev|test|bench|fuzz|package|fresh]" >&2
  exit 2
}

check_only=0
if [[ "${1:-}" == --check ]]; then
  check_only=1
  shift
fi
[[ $# -le 1 ]] || usage
purpose="${1:-build}"
case "$purpose" in
  build) wanted=("${build_pkgs[@]}") ;;
  dev) wanted=("${build_pkgs[@]}" "${dev_pkgs[@]}") ;;
  test) wanted=("${build_pkgs[@]}" "${dev_pkgs[@]}" "${test_pkgs[@]}") ;;
  bench) wanted=("${build_pkgs[@]}" "${dev_pkgs[@]}" "${test_pkgs[@]}" "${bench_pkgs[@]}") ;;
  fuzz) wanted=("${build_pkgs[@]}" "${fuzz_pkgs[@]}") ;;
  package) wanted=("${build_pkgs[@]}" "${package_pkgs[@]}") ;;
  fresh) wanted=("${fresh_pkgs[@]}") ;;
  -h | --help) usage ;;
  *) echo "$prog: unknown set '$purpose'" >&2; usage ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "$prog: error: dpkg-query not found; this script supports Debian/Ubuntu only" \
       "(install the packages listed in scripts/install-deps.sh by hand)" >&2
  exit 1
fi

# One dpkg-query call for the whole set. Packages dpkg has never heard of are
# reported on stderr and simply do not appear as installed.
declare -A installed=()
while read -r name status; do
  [[ "$status" == ii* ]] && installed["$name"]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${wanted[@]}" 2>/dev/null || true)

missing=()
for pkg in "${wanted[@]}"; do
  [[ -n "${installed[$pkg]:-}" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $EUID -ne 0 || $check_only -eq 1 ]]; then
  why="not root, not installing"
  [[ $check_only -eq 0 ]] || why="not installing here"
  echo "$prog: missing Debian packages for '$purpose' ($why); as root, run:" >&2
  echo "apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_quiet=(-qq -o Dpkg::Use-Pty=0 -o APT::Color=0)

lists_stale() {
  local lists=/var/lib/apt/lists
  # No index files at all, or none refreshed within the allowed age.
  compgen -G "$lists/*_Packages*" >/dev/null || return 0
  [[ -z "$(find "$lists" -maxdepth 1 -name '*_Packages*' -mmin -"$lists_max_age_min" -print -quit)" ]]
}

apt_update() {
  if ! apt-get "${apt_quiet[@]}" update >/dev/null; then
    echo "$prog: error: 'apt-get update' failed; check the network and /etc/apt/sources.list" >&2
    exit 1
  fi
}

log=$(mktemp "${TMPDIR:-/tmp}/tpush-install-deps.XXXXXX")
trap 'rm -f "$log"' EXIT

apt_install() {
  apt-get "${apt_quiet[@]}" install -y --no-install-recommends "${missing[@]}" >"$log" 2>&1
}

echo "$prog: installing for '$purpose': ${missing[*]}" >&2
updated=0
if lists_stale; then
  apt_update
  updated=1
fi
if ! apt_install; then
  # Lists that looked fresh can still lack a package (e.g. a new mirror): refresh once and retry.
  if [[ $updated -eq 0 ]]; then
    apt_update
    apt_install && exit 0
  fi
  tail -n 20 "$log" >&2
  echo "$prog: error: 'apt-get install ${missing[*]}' failed (output above);" \
       "check that these packages exist for this release ('apt-cache policy PKG')" >&2
  exit 1
fi
