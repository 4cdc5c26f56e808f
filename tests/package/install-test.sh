#!/usr/bin/env bash
# Install the tpush .deb on a clean Debian root, use it, and take it out again.
#
#   tests/package/install-test.sh DEB       (`make package-test`; root only)
#
# The root: `debootstrap --variant=minbase SUITE` from deb.debian.org, plus
# man-db and the three shells tpush completes for (bash-completion, zsh,
# fish), so each can be asked to load tpush's completion. debootstrap takes
# minutes, so that root is kept as a tarball, keyed on the suite, the
# architecture and this recipe (KEY: a hash of the mirror and the package list):
#   $PACKAGE_TEST_CACHE (default /var/cache/tpush/package-test)/SUITE-minbase-ARCH-KEY.tar
# It lives outside the clone so that fresh clones (CI) share it; the test is
# root-only anyway. PACKAGE_TEST_FRESH=1 builds it again (e.g. to pick up a
# point release); `rm -r /var/cache/tpush` removes it.
#
# Each run unpacks a copy in a temporary directory and, in a private mount
# namespace (so no mount outlives the test, however it ends), mounts proc,
# sys, dev, run and tmp into it and checks, in the root:
#   - `apt-get install ./tpush_*.deb` works: apt resolves the Depends that
#     dpkg-shlibdeps computed, and every library tpush loads comes from a
#     package tpush depends on;
#   - `tpush --version` prints the package's version;
#   - `man -w tpush` finds the man page;
#   - the completions are where bash-completion, zsh and fish look, and each
#     shell loads them (bash: complete -p; zsh: compinit's _comps; fish:
#     complete -C offers tpush's options and values);
#   - `apt-get purge --autoremove tpush` leaves nothing: no file of the
#     package, and the root's file list equals the one before the install
#     (apt and dpkg state, logs and caches aside).
# The temporary root is removed at the end, whether the test passed or not.
set -euo pipefail

readonly prog="package-test"
readonly suite="${PACKAGE_TEST_SUITE:-bookworm}"
readonly mirror="${PACKAGE_TEST_MIRROR:-http://deb.debian.org/debian}"
# What the cached root gets on top of minbase. Changing it changes the key.
readonly extra_pkgs=(man-db bash-completion zsh fish)
readonly recipe=1

die() { echo "$prog: error: $*" >&2; exit 1; }
say() { echo "$prog: $*"; }

# ---------------------------------------------------------------------------
# Inside the private mount namespace.

# mount_root ROOT: what apt, dpkg and the shells need in the root.
mount_root() {
  local root=$1
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
  mount --bind /dev "$root/dev"
  mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
  mount -t tmpfs tmpfs "$root/run"
  mount -t tmpfs tmpfs "$root/tmp"
  # The host's resolver (the cached root has a copy that may be stale).
  mount --bind /etc/resolv.conf "$root/etc/resolv.conf"
}

in_root() { # in_root ROOT CMD...: run CMD in ROOT with a plain environment
  local root=$1
  shift
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

apt_in_root() { # apt_in_root ROOT ARGS...
  local root=$1
  shift
  in_root "$root" apt-get -q -o Dpkg::Use-Pty=0 -o APT::Color=0 "$@"
}

# inside_make_root ROOT: debootstrap ROOT and add extra_pkgs (the cache).
inside_make_root() {
  local root=$1
  debootstrap --variant=minbase "$suite" "$root" "$mirror"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  mount_root "$root"
  apt_in_root "$root" update
  apt_in_root "$root" install -y --no-install-recommends "${extra_pkgs[@]}"
  apt_in_root "$root" clean
}

# The root's files, one "TYPE PATH" line each, without what apt and dpkg keep
# changing (their state, logs and caches) and without the mounted file systems.
list_root() { # list_root ROOT
  (cd "$1" && find . -xdev -printf '%y %p\n') |
    grep -Ev '^. \./(var/lib/(apt|dpkg)|var/cache/(apt|debconf|man|ldconfig)|var/log)(/|$)' |
    LC_ALL=C sort
}

# names_of DEPENDS-FIELD: the package names in a Depends or Provides field, one a line.
names_of() {
  tr ',|' '\n\n' <<<"$1" | sed -E 's/\(.*\)//; s/:any//; s/[[:space:]]//g' | { grep . || true; }
}

# owner ROOT PATH: the package that ships PATH in ROOT (usr-merged: the path
# may be recorded with or without /usr).
owner() {
  local root=$1 path=$2 p
  for p in "$path" "${path#/usr}" "/usr$path"; do
    in_root "$root" dpkg-query -S "$p" 2>/dev/null | sed -n '1s/:.*//p' | grep . && return 0
  done
  return 1
}

inside_test() { # inside_test ROOT DEB VERSION
  local root=$1 deb=$2 version=$3 t
  mount_root "$root"
  cp "$deb" "$root/tmp/"
  mkdir -p "$root/tmp/zsh" "$root/tmp/fish" # the shells' homes, on the tmpfs
  local debname
  debname=$(basename "$deb")

  t=$SECONDS
  apt_in_root "$root" update >/dev/null
  say "apt-get update in the root: $((SECONDS - t))s"
  list_root "$root" >"$root.before"
  in_root "$root" dpkg-query -W -f '${Package}\n' | LC_ALL=C sort >"$root.pkgs-before"

  # --- install: apt resolves the Depends -------------------------------------------
  t=$SECONDS
  in_root "$root" sh -c 'cd /tmp && exec apt-get -q -o Dpkg::Use-Pty=0 -o APT::Color=0 install -y "./$1"' \
    sh "$debname" || die "apt-get install ./$debname failed in a clean $suite root"
  say "apt-get install ./$debname: $((SECONDS - t))s"
  local depends
  depends=$(in_root "$root" dpkg-query -W -f '${Depends}' tpush)
  say "Depends: $depends"
  in_root "$root" dpkg-query -W -f '${Package}\n' | LC_ALL=C sort |
    comm -13 "$root.pkgs-before" - | { grep -vx tpush || true; } | tr '\n' ' ' |
    sed 's/^/package-test: apt added for tpush: /; s/ $/\n/'

  # check DESCRIPTION CMD...: one verdict line; a failure is counted, the
  # checks go on (and the script's errexit is not tripped).
  local fail=0
  check() {
    local what=$1
    shift
    if "$@"; then
      say "ok: $what"
    else
      echo "$prog: FAILED: $what" >&2
      fail=1
    fi
  }

  # Every library tpush loads is there and comes from a package it depends on.
  local ldd_out lib path pkg
  ldd_out=$(in_root "$root" ldd /usr/bin/tpush) || die "ldd /usr/bin/tpush failed: $ldd_out"
  grep -q "not found" <<<"$ldd_out" && echo "$ldd_out" >&2
  check "ldd finds every library of /usr/bin/tpush" eval '! grep -q "not found" <<<"$ldd_out"'
  local dep_names names
  dep_names=$(names_of "$depends")
  while read -r lib path; do
    pkg=$(owner "$root" "$path") || { check "a package ships $path (for $lib)" false; continue; }
    # The package itself, or a name it provides (libspdlog1.10 provides libspdlog1.10-fmt9).
    names=$(printf '%s\n%s\n' "$pkg" "$(names_of "$(in_root "$root" dpkg-query -W -f '${Provides}' "$pkg")")")
    check "$lib comes from $pkg, which tpush depends on" \
      test -n "$(grep -xF -f <(grep . <<<"$names") <<<"$dep_names")"
  done < <(sed -nE 's/^[[:space:]]*([^ ]+) => (\/[^ ]+) .*/\1 \2/p' <<<"$ldd_out")

  # The binary, the man page.
  local got
  got=$(in_root "$root" tpush --version 2>&1) || true
  check "tpush --version says $version (it said: $got)" eval '[[ "$got" == "tpush $version "* ]]'
  got=$(in_root "$root" dpkg-query -W -f '${Version}' tpush)
  check "the package's version is $version (it is $got)" test "$got" == "$version"
  got=$(in_root "$root" man -w tpush 2>&1) || true
  check "man -w tpush finds /usr/share/man/man1/tpush.1.gz (it found: $got)" \
    test "$got" == /usr/share/man/man1/tpush.1.gz

  # The completions, where each shell looks, and each shell loading them.
  local files
  files=$(in_root "$root" dpkg-query -L tpush)
  for path in /usr/share/bash-completion/completions/tpush /usr/share/zsh/vendor-completions/_tpush \
    /usr/share/fish/vendor_completions.d/tpush.fish; do
    check "the package ships $path" eval 'grep -qx "$path" <<<"$files" && test -f "$root$path"'
  done
  got=$(in_root "$root" bash --norc --noprofile -c \
    '. /usr/share/bash-completion/bash_completion; __load_completion tpush && complete -p tpush' 2>&1) || true
  check "bash-completion loads tpush's completion on demand (complete -p: $got)" \
    test "$got" == "complete -F _tpush tpush"
  got=$(in_root "$root" env HOME=/tmp/zsh zsh -f -c 'autoload -Uz compinit && compinit -D -u && print -r -- ${_comps[tpush]}' 2>&1) || true
  check "zsh's compinit finds _tpush on its default fpath (_comps[tpush]: $got)" test "$got" == _tpush
  got=$(in_root "$root" env HOME=/tmp/fish fish -c 'complete -C "tpush --fan"; complete -C "tpush --color "' 2>&1 |
    cut -f1 | tr '\n' ' ') || true
  check "fish loads tpush.fish and completes options and values (offered: $got)" \
    test "$got" == "--fanout always auto never "

  # --- purge: nothing of the package is left ---------------------------------------------
  t=$SECONDS
  apt_in_root "$root" purge -y --autoremove tpush || die "apt-get purge --autoremove tpush failed"
  say "apt-get purge --autoremove tpush: $((SECONDS - t))s"
  check "dpkg no longer knows tpush" eval '! in_root "$root" dpkg-query -W tpush >/dev/null 2>&1'
  local left=()
  cut -d' ' -f2- "$root.before" >"$root.before-paths"
  while read -r path; do
    [[ "$path" != /. && -e "$root$path" ]] && ! grep -qxF ".$path" "$root.before-paths" && left+=("$path")
  done <<<"$files"
  [[ ${#left[@]} -eq 0 ]] || printf '  left: %s\n' "${left[@]}" >&2
  check "no file or directory of the package is left" test ${#left[@]} -eq 0
  list_root "$root" >"$root.after"
  check "the root's files are those it had before the install" diff -u "$root.before" "$root.after"
  return $fail
}

if [[ "${1:-}" == --inside ]]; then
  shift
  case "$1" in
    make-root) inside_make_root "$2" ;;
    test) inside_test "$2" "$3" "$4" ;;
    *) die "unknown inside step $1" ;;
  esac
  exit
fi

# ---------------------------------------------------------------------------
# Outside: checks, the cache, the run.

[[ $# -eq 1 ]] || { echo "usage: tests/package/install-test.sh DEB" >&2; exit 2; }
if [[ $EUID -ne 0 ]]; then
  echo "$prog: needs root (debootstrap, chroot, mounts): run 'sudo make package-test'" >&2
  exit 2
fi
deb=$(realpath "$1")
[[ -f "$deb" ]] || die "no package $1 (make deb builds it)"
version=$(dpkg-deb -f "$deb" Version)
arch=$(dpkg-deb -f "$deb" Architecture)
for tool in debootstrap unshare chroot; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh package installs it)"
done

self=$(realpath "${BASH_SOURCE[0]}")
# shellcheck source=tests/package/cached-root.sh
source "$(dirname "$self")/cached-root.sh"
cache_dir="${PACKAGE_TEST_CACHE:-/var/cache/tpush/package-test}"
key=$(printf '%s\n' "$recipe" "$mirror" "${extra_pkgs[@]}" | sha256sum | cut -c1-12)
cache="$cache_dir/$suite-minbase-$arch-$key.tar"
mkdir -p "$cache_dir"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/tpush-package-test.XXXXXX")
inner=''
cleanup() {
  # An inside step that an interrupt cut short; then whatever still runs in a
  # root of ours (nothing, after a normal end): end them, by pid.
  if [[ -n "$inner" ]] && kill -0 "$inner" 2>/dev/null; then
    kill -TERM "$inner" 2>/dev/null || true
    wait "$inner" 2>/dev/null || true
  fi
  local pid
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    if [[ "$(readlink "/proc/$pid/root" 2>/dev/null)" == "$work"/* ]]; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  # The mounts were made in a namespace that is gone: these are plain files.
  rm -rf --one-file-system -- "$work"
  rm -f -- "$cache.tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

inside() { # inside STEP ARGS...: this script's STEP, in a private mount namespace
  unshare --mount --propagation private -- "$self" --inside "$@" &
  inner=$!
  local rc=0
  wait "$inner" || rc=$?
  inner=''
  return $rc
}

start=$SECONDS
unpack_cached_root PACKAGE_TEST_FRESH "debootstrap from $mirror, then ${extra_pkgs[*]}"

rc=0
inside test "$work/root" "$deb" "$version" || rc=$?
if [[ $rc -eq 0 ]]; then
  say "passed: $(basename "$deb") installs, works and purges cleanly on $suite ($((SECONDS - start))s)"
else
  say "FAILED (${SECONDS}s; see above)" >&2
fi
exit $rc
