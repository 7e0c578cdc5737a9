#!/usr/bin/env bash
# The GPU batch of the measurement-truth work (issue 12), for a leased GPU machine: the hostile
# corpus on the new bundle, then `bench measure-truth` (legitimate variant shapes; the good control
# and the suite's best configurations, old bundle against new, alternating; evaluations per minute,
# old then new). Run from the repository root with the new bundle built (npm run bundle:gpu ->
# dist-gpu/kernelduel) and the bundle of the commit before the change at $KD_OLD (its runtime/
# may hold only node.sha256: the runtime of the same Node version the new bundle unpacks is reused).
# The work runs detached (setsid), so it can outlast one command of the lease:
#
#   scripts/device-truth.sh start           start once (later calls do nothing)
#   scripts/device-truth.sh wait SECONDS    wait until done or SECONDS pass; pack results into $OUT
#
# Read at start: KD_OLD (default .kd-old/kernelduel), KD_TRUTH_PARTS (default legit,suite,throughput),
# KD_TRUTH_ROUNDS (2), KD_TRUTH_BUDGET (10), KD_TRUTH_TASKS (softmax,layernorm,reduce_sum: the throughput
# part's tasks), KD_STABILITY (options of `bench timing-stability`, run after the rest when set), KD_TESTS (GPU test files among "hostile foundation"; default "hostile", "" for none).
# Nothing here changes clocks or settings of the GPU.
set -uo pipefail
S=${KD_SESSION_DIR:-/tmp/kd-truth}
ROOT=$(pwd -P)
KD="$ROOT/dist-gpu/kernelduel"
OLD=$(cd "${KD_OLD:-.kd-old/kernelduel}" 2>/dev/null && pwd -P)
export KERNELDUEL_RUNTIME_DIR=${KERNELDUEL_RUNTIME_DIR:-/tmp/kd}
OUTDIR=${OUT:-$ROOT/device-out}
stamp() { date -u +%FT%TZ; }

work() {
  cd "$ROOT" || exit 1
  "$KD/kernelduel" --version > "$S/res/version.txt" 2>&1 # unpacks the runtime the old bundle reuses
  if [[ " ${KD_TESTS-hostile} " == *" hostile "* ]]; then
    echo "$(stamp) hostile"
    KD_HOSTILE_RECHECK=${KD_HOSTILE_RECHECK:-light} KERNELDUEL_RESULTS_DIR="$S/res" "$KD/test-gpu" hostile > "$S/res/hostile-tests.log" 2>&1
    rc=$?; echo "$(stamp) hostile exit $rc"
  fi
  if [[ " ${KD_TESTS-hostile} " == *" foundation "* ]]; then
    echo "$(stamp) foundation"
    KERNELDUEL_RESULTS_DIR="$S/res" "$KD/test-gpu" foundation > "$S/res/foundation-tests.log" 2>&1
    rc=$?; echo "$(stamp) foundation exit $rc"
  fi
  if [ "${KD_TRUTH_PARTS-x}" != "" ]; then
    echo "$(stamp) measure-truth"
    "$KD/bench" measure-truth ${OLD:+--old "$OLD"} --parts "${KD_TRUTH_PARTS:-legit,suite,throughput}" --rounds "${KD_TRUTH_ROUNDS:-2}" \
      --budget "${KD_TRUTH_BUDGET:-10}" --tasks "${KD_TRUTH_TASKS:-softmax,layernorm,reduce_sum}" --spaces "$ROOT/bench/spaces/h200" --out "$S/res" > "$S/res/measure-truth.log" 2>&1
    rc=$?; echo "$(stamp) measure-truth exit $rc"
  fi
  if [ -n "${KD_STABILITY:-}" ]; then
    echo "$(stamp) timing-stability $KD_STABILITY"
    # shellcheck disable=SC2086 # KD_STABILITY is a list of options
    "$KD/bench" timing-stability $KD_STABILITY --out "$S/res" > "$S/res/timing-stability.log" 2>&1
    rc=$?; echo "$(stamp) timing-stability exit $rc"
  fi
  echo done > "$S/done"
}

case ${1:-} in
start)
  . "$ROOT/scripts/lib-detached.sh"
  kd_start_once "$S" "$KD" || exit 0
  mkdir -p "$S/res"
  stamp > "$S/started"
  nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv > "$S/res/nvidia-smi.txt" 2>&1
  [ -n "$OLD" ] || echo "$(stamp) no old bundle at ${KD_OLD:-.kd-old/kernelduel}: the new one only" >> "$S/session.log"
  setsid bash -c "$(declare -f stamp work); S='$S' KD='$KD' OLD='$OLD' ROOT='$ROOT'; work" >> "$S/session.log" 2>&1 < /dev/null &
  echo started
  ;;
wait)
  . "$ROOT/scripts/lib-detached.sh"
  kd_require_started "$S" || exit 3
  end=$(( $(date +%s) + ${2:-60} ))
  while [ "$(date +%s)" -lt "$end" ] && [ ! -e "$S/done" ]; do sleep 5; done
  mkdir -p "$OUTDIR"
  cat "$S/session.log"
  tail -n 4 "$S/res/hostile-tests.log" 2>/dev/null
  grep -E "^(not ok|# (pass|fail|skip))" "$S/res/foundation-tests.log" 2>/dev/null
  tail -n 25 "$S/res/measure-truth.log" 2>/dev/null
  tail -n 12 "$S/res/timing-stability.log" 2>/dev/null
  tar czf "$OUTDIR/truth.tgz" -C "$S" . 2>/dev/null
  [ -e "$S/done" ] && echo ALL-DONE
  ;;
*)
  echo "usage: $0 start | wait SECONDS" >&2
  exit 2
  ;;
esac
