#!/usr/bin/env bash
# Build libssh2 1.11.1 as a static library (OpenSSL backend) into DEST.
#
#   scripts/build-libssh2.sh DEST           build (or keep) it
#   scripts/build-libssh2.sh --check DEST   exit 0 when DEST holds a finished build
#                                           of this recipe, else say why and exit 1
#
# Result: DEST/include/libssh2.h, DEST/lib/libssh2.a, DEST/.tpush-stamp.
# Nothing is done when DEST already holds a finished build of this recipe.
# CMake only checks (--check); the Makefile runs the build before configuring,
# so configuring never downloads anything.
#
# Why: Debian 12 ships libssh2 1.10, which cannot log in with RSA keys to
# OpenSSH >= 8.8 (it only signs ssh-rsa/SHA-1). See DEVELOPERS.md.
#
# Source, in order (TPUSH_LIBSSH2_SOURCE=auto, the default):
#   trixie   Debian trixie's source package at the pinned revision below,
#            fetched with `apt-get source libssh2=REVISION` through a private
#            apt configuration (the system's /etc/apt is never touched) and
#            unpacked with `dpkg-source -x`, which applies Debian's patches.
#            When trixie no longer carries that revision, this says so (bump
#            debian_revision after checking the new one) and auto falls back.
#   tarball  the upstream release tarball (TPUSH_LIBSSH2_TARBALL=FILE to use a
#            local copy instead of downloading it).
# Both are checked against the pinned SHA-256 of libssh2-1.11.1.tar.gz.
# Then tpush's own patches, scripts/patches/libssh2-*.patch, are applied
# (each says what it changes and why); the stamp records their checksum, so
# editing one rebuilds.
#
# The build happens in a temporary directory beside DEST and is moved into
# place only when complete, under a lock, so an interrupted or concurrent run
# is never mistaken for a good build.
set -euo pipefail

readonly prog="build-libssh2"
readonly version="1.11.1"
readonly sha256="d9ec76cbe34db98eec3539fe2c899d26b0c837cb3eb466a56b0f109cabf658f7"
readonly tarball_url="https://www.libssh2.org/download/libssh2-${version}.tar.gz"
readonly suite="trixie"
# The Debian revision built: two clones build the same library. The stamp
# records it (and which source was used), so changing it rebuilds.
readonly debian_revision="1.11.1-1+deb13u2"
readonly keyring="/usr/share/keyrings/debian-archive-keyring.gpg"
readonly mirror="${TPUSH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# Bump when the build options below change, so existing builds are redone.
readonly recipe=2
readonly cmake_options=(
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON
  -DCRYPTO_BACKEND=OpenSSL -DENABLE_ZLIB_COMPRESSION=OFF
  -DBUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DCMAKE_EXPORT_NO_PACKAGE_REGISTRY=ON
  -DCMAKE_INSTALL_LIBDIR=lib
)

die() { echo "$prog: error: $*" >&2; exit 1; }
note() { echo "$prog: $*" >&2; }

check_only=0
if [[ "${1:-}" == --check ]]; then
  check_only=1
  shift
fi
[[ $# -eq 1 && -n "$1" ]] || { echo "usage: scripts/build-libssh2.sh [--check] DEST" >&2; exit 2; }
source_mode="${TPUSH_LIBSSH2_SOURCE:-auto}"
case "$source_mode" in
  auto | trixie | tarball) ;;
  *) die "TPUSH_LIBSSH2_SOURCE='$source_mode' is not one of auto, trixie, tarball" ;;
esac

for tool in cmake make cc sha256sum tar flock patch; do
  command -v "$tool" >/dev/null 2>&1 ||
    die "'$tool' not found; run scripts/install-deps.sh build (as root) first"
done

mkdir -p "$(dirname -- "$1")" || die "cannot create the parent directory of '$1'"
dest="$(cd -- "$(dirname -- "$1")" && pwd -P)/$(basename -- "$1")"
readonly dest
patch_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)/patches"
readonly patch_dir
shopt -s nullglob
readonly patches=("$patch_dir"/libssh2-*.patch)
shopt -u nullglob
patch_sum="none"
if [[ ${#patches[@]} -gt 0 ]]; then
  patch_sum="$(cat -- "${patches[@]}" | sha256sum | cut -c1-16)"
fi
readonly patch_sum
readonly stamp_text="libssh2 ${version} sha256=${sha256} debian=${debian_revision} recipe=${recipe} patches=${patch_sum}"

is_good() {
  [[ -f "$dest/.tpush-stamp" && -f "$dest/lib/libssh2.a" && -f "$dest/include/libssh2.h" ]] &&
    [[ "$(head -n 1 "$dest/.tpush-stamp")" == "$stamp_text" ]]
}

is_good && exit 0 # fast path: nothing to do, say nothing
if [[ $check_only -eq 1 ]]; then
  if [[ -f "$dest/.tpush-stamp" ]]; then
    echo "$prog: $dest was built by another recipe ($(head -n 1 "$dest/.tpush-stamp")); expected: $stamp_text" >&2
  else
    echo "$prog: $dest holds no finished libssh2 build" >&2
  fi
  exit 1
fi

# One builder at a time per DEST (a normal and a sanitizer configure may race).
exec 9>"$dest.lock"
flock 9
is_good && exit 0 # someone else finished it while we waited
# Leftovers of a run that was killed outright (SIGKILL, power loss); we hold
# the lock, so no live builder owns them.
rm -rf -- "$dest".tmp.*

work="$(mktemp -d "$dest.tmp.XXXXXX")" || die "cannot create a work directory beside '$dest'"
cleanup() { rm -rf -- "$work"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
log="$work/log"
: >"$log"

show_log_and_die() {
  # Keep the log beside DEST (the work dir is removed) and show its tail.
  cp -f "$log" "$dest.log" 2>/dev/null || true
  tail -n 25 "$log" >&2 || true
  die "$* (full log: $dest.log)"
}

check_sha256() { # FILE WHAT
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  if [[ "$got" != "$sha256" ]]; then
    echo "$prog: $2 has SHA-256 $got, expected $sha256" >&2
    return 1
  fi
}

# --- source: Debian trixie's source package -----------------------------------
fetch_trixie() { # unpacks into $work/src and sets source_desc
  local apt="$work/apt"
  local -a opts
  command -v apt-get >/dev/null 2>&1 || { note "apt-get not found"; return 1; }
  command -v dpkg-source >/dev/null 2>&1 ||
    { note "dpkg-source not found (package dpkg-dev; run scripts/install-deps.sh build)"; return 1; }
  [[ -r "$keyring" ]] ||
    { note "$keyring missing (package debian-archive-keyring)"; return 1; }
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/preferences.d" "$work/deb-src"
  echo "deb-src [signed-by=$keyring] $mirror $suite main" >"$apt/etc/sources.list"
  opts=(
    -o "Dir::Etc::sourcelist=$apt/etc/sources.list"
    -o "Dir::Etc::sourceparts=-"
    -o "Dir::Etc::preferencesparts=$apt/etc/preferences.d"
    -o "Dir::State::Lists=$apt/lists"
    -o "Dir::Cache=$apt/cache"
    -o "Acquire::Retries=2"
    -o "Acquire::http::Timeout=30"
  )
  # As root, apt hands downloads to the _apt user, which cannot write into our
  # private directories; keep them ours. A normal user downloads as itself.
  [[ $EUID -ne 0 ]] || opts+=(-o "APT::Sandbox::User=root")
  note "fetching Debian $suite's libssh2 source package from $mirror"
  if ! apt-get -q "${opts[@]}" --error-on=any update >>"$log" 2>&1; then
    note "'apt-get update' of a private $suite deb-src list failed (network or mirror unreachable?)"
    return 1
  fi
  if ! (cd "$work/deb-src" && apt-get -q "${opts[@]}" source --download-only "libssh2=$debian_revision") >>"$log" 2>&1; then
    note "'apt-get source --download-only libssh2=$debian_revision' from $suite failed: $suite may have" \
      "moved to a newer revision ('apt-cache showsrc libssh2' with the same options tells); after checking it," \
      "update debian_revision in scripts/build-libssh2.sh"
    return 1
  fi
  local orig="$work/deb-src/libssh2_${version}.orig.tar.gz" dsc
  if [[ ! -f "$orig" ]]; then
    note "$suite no longer carries libssh2 $version (found: $(cd "$work/deb-src" && echo *))"
    return 1
  fi
  check_sha256 "$orig" "$suite's libssh2_${version}.orig.tar.gz" || return 1
  dsc="$work/deb-src/libssh2_${debian_revision}.dsc"
  [[ -f "$dsc" ]] || { note "no libssh2_${debian_revision}.dsc in the $suite download"; return 1; }
  # The files were checked by apt against the signed Sources index; dpkg-source
  # may still warn that it cannot verify the uploader's signature itself.
  if ! dpkg-source -x "$dsc" "$work/src" >>"$log" 2>&1; then
    note "'dpkg-source -x $(basename "$dsc")' failed (Debian's patches did not apply?)"
    return 1
  fi
  source_desc="Debian $suite $(basename "$dsc" .dsc | sed 's/^libssh2_//')"
}

# --- source: upstream tarball ---------------------------------------------------
fetch_tarball() {
  local tgz="$work/libssh2-${version}.tar.gz"
  if [[ -n "${TPUSH_LIBSSH2_TARBALL:-}" ]]; then
    [[ -f "$TPUSH_LIBSSH2_TARBALL" ]] || { note "TPUSH_LIBSSH2_TARBALL='$TPUSH_LIBSSH2_TARBALL' does not exist"; return 1; }
    cp -- "$TPUSH_LIBSSH2_TARBALL" "$tgz"
    source_desc="upstream tarball $TPUSH_LIBSSH2_TARBALL"
  else
    command -v curl >/dev/null 2>&1 || { note "curl not found (run scripts/install-deps.sh build)"; return 1; }
    note "downloading $tarball_url"
    if ! curl -fsSL --proto '=https' --connect-timeout 15 --max-time 300 --retry 2 \
         -o "$tgz" "$tarball_url" >>"$log" 2>&1; then
      note "download of $tarball_url failed (host unreachable? set TPUSH_LIBSSH2_TARBALL=FILE to use a local copy)"
      return 1
    fi
    source_desc="upstream tarball $tarball_url"
  fi
  if ! check_sha256 "$tgz" "libssh2-${version}.tar.gz"; then
    note "refusing to build from a tarball whose checksum does not match"
    return 1
  fi
  mkdir -p "$work/src"
  tar -xzf "$tgz" -C "$work/src" --strip-components=1 >>"$log" 2>&1 ||
    { note "cannot unpack libssh2-${version}.tar.gz"; return 1; }
}

source_desc=""
case "$source_mode" in
  trixie) fetch_trixie || show_log_and_die "could not get libssh2 $version from Debian $suite's source package;" \
    "check access to $mirror, or try TPUSH_LIBSSH2_SOURCE=tarball" ;;
  tarball) fetch_tarball || show_log_and_die "could not get the libssh2 $version upstream tarball;" \
    "check access to $tarball_url, or set TPUSH_LIBSSH2_TARBALL=FILE" ;;
  auto)
    if ! fetch_trixie; then
      note "falling back to the upstream tarball"
      rm -rf -- "$work/src"
      fetch_tarball || show_log_and_die "could not get libssh2 $version from Debian $suite nor from upstream;" \
        "check network access to deb.debian.org, or set TPUSH_LIBSSH2_TARBALL=FILE (libssh2-$version.tar.gz)"
    fi
    ;;
esac

# --- tpush's patches -------------------------------------------------------------
for p in "${patches[@]}"; do
  patch -d "$work/src" -p1 --forward --batch <"$p" >>"$log" 2>&1 ||
    show_log_and_die "patch $(basename -- "$p") does not apply to libssh2 $version ($source_desc)"
  source_desc+=" + $(basename -- "$p" .patch)"
done

# --- build and install into a staging copy of DEST -----------------------------
jobs="$(nproc 2>/dev/null || echo 2)"
note "building libssh2 $version ($source_desc) into $dest"
# Run outside any make jobserver we might have been started from.
unset MAKEFLAGS MFLAGS MAKELEVEL
cmake -S "$work/src" -B "$work/build" -G "Unix Makefiles" -DCMAKE_INSTALL_PREFIX="$dest" \
  "${cmake_options[@]}" >>"$log" 2>&1 || show_log_and_die "configuring libssh2 with CMake failed (is libssl-dev installed?)"
cmake --build "$work/build" -j"$jobs" >>"$log" 2>&1 || show_log_and_die "compiling libssh2 failed"
DESTDIR="$work/stage" cmake --install "$work/build" >>"$log" 2>&1 || show_log_and_die "installing libssh2 into the staging directory failed"

staged="$work/stage$dest"
[[ -f "$staged/lib/libssh2.a" && -f "$staged/include/libssh2.h" ]] ||
  show_log_and_die "the libssh2 build did not produce lib/libssh2.a and include/libssh2.h"
grep -q "^#define LIBSSH2_VERSION[[:space:]]*\"$version\"" "$staged/include/libssh2.h" ||
  show_log_and_die "the built libssh2.h does not say version $version"

printf '%s\nsource: %s\nbuilt: %s\n' "$stamp_text" "$source_desc" "$(date -u +%FT%TZ)" >"$staged/.tpush-stamp"
cp -f "$log" "$staged/.tpush-build.log"

# Swap into place: DEST either is absent or holds a complete, stamped build.
if [[ -e "$dest" ]]; then
  mv -- "$dest" "$work/old"
fi
mv -- "$staged" "$dest"
rm -f -- "$dest.log"
note "libssh2 $version ready in $dest"
