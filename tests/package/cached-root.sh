# Sourced by install-test.sh and fresh-test.sh: the debootstrapped root both
# start from, built once and cached as a tar, then unpacked for each run.
#
#   unpack_cached_root FRESH_VAR WHAT
#
# Builds "$cache" (the caller's `inside make-root DIR` makes the root) unless it
# exists or the variable named FRESH_VAR is 1, then unpacks it into "$work/root".
# Uses the caller's $cache, $cache_dir, $suite, $work, say and die; holds
# "$cache_dir/.lock" (fd 9) while it reads or writes the cache.
unpack_cached_root() {
  local fresh_var=$1 what=$2 t
  exec 9>"$cache_dir/.lock"
  flock 9
  if [[ ! -f "$cache" || "${!fresh_var:-0}" == 1 ]]; then
    say "building the $suite minbase root ($what) into $cache"
    t=$SECONDS
    inside make-root "$work/new" || die "could not build the $suite root (output above)"
    tar -C "$work/new" --numeric-owner -cf "$cache.tmp" .
    mv -f "$cache.tmp" "$cache"
    rm -rf --one-file-system -- "$work/new"
    say "root cached in $((SECONDS - t))s: $cache ($(du -h "$cache" | cut -f1))"
  else
    say "cached $suite root: $cache ($fresh_var=1 builds it again)"
  fi
  t=$SECONDS
  mkdir "$work/root"
  tar -C "$work/root" --numeric-owner -xf "$cache"
  flock -u 9
  say "root unpacked in $((SECONDS - t))s"
}
