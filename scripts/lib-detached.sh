# Sourced by the detached device scripts (device-batch.sh, device-session.sh, device-truth.sh,
# device-vs-pytorch.sh, device-multigpu.sh): a leased machine may keep /tmp from an earlier lease. On 2026-12-02 a
# batch's results folder held another day's files (an older audit, logs), and they came back in
# that batch's archive beside its own.
#
# kd_start_once DIR BUNDLE: returns 1 (saying "already started ...") when DIR holds a run of this
# very bundle (a second `start` of the same lease does nothing); otherwise moves an earlier run's
# DIR aside (DIR.old-<time>), creates DIR, records the bundle in it and returns 0. A bundle is
# known by the "Built <time>" line of its README.txt (scripts/bundle-gpu.mjs writes one per build).
kd_start_once() {
  local s=$1 id old
  id=$(grep -m1 '^Built ' "$2/README.txt" 2>/dev/null || echo "unknown bundle")
  if [ -e "$s/started" ] && [ "$(cat "$s/bundle" 2>/dev/null)" = "$id" ]; then
    echo "already started $(cat "$s/started")"
    return 1
  fi
  if [ -e "$s" ]; then
    old="$s.old-$(date -u +%Y%m%dT%H%M%S)"
    mv "$s" "$old" && echo "set aside $s of an earlier run ($(cat "$old/bundle" 2>/dev/null || echo 'bundle not recorded'); started $(cat "$old/started" 2>/dev/null || echo 'never')) as $old"
  fi
  mkdir -p "$s" && echo "$id" > "$s/bundle"
}

# kd_require_started DIR: for `wait`. Returns 3, saying so on stderr, when no run was started in DIR
# on this machine. A lost lease gives a new machine with an empty /tmp: on 2026-12-02 a `wait 560`
# waited out its 560 s of device time there for a batch that no longer existed.
kd_require_started() {
  [ -e "$1/started" ] && return 0
  echo "no run here ($1/started is missing): this is a new machine (the lease was lost, /tmp went with it), or start was never called; start again" >&2
  return 3
}
