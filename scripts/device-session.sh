#!/usr/bin/env bash
# One batch of GPU work for a leased GPU machine (docs/GPU-RUNS.md), run from the repository root
# with the bundle built (npm run bundle:gpu -> dist-gpu/kernelduel). The work runs detached
# (setsid), so a lease made of several commands of at most 10 minutes keeps it going:
#
#   scripts/device-session.sh start          start the work once (later calls do nothing)
#   scripts/device-session.sh wait SECONDS   wait until the work is done or SECONDS pass, then
#                                            pack what is there into $OUT (or ./device-out)
# Read at start: KD_TESTS (GPU suites to run, default "foundation hostile"; "" for none),
# KD_LIVE_TASKS, KD_LIVE_AGAIN=1 (run listed tasks even if results have them), KD_LIVE_BUDGET,
# KD_RECORD_TASKS, KD_RECORD_MINUTES.
#
# With two or more GPUs the work is split over the first two, each pinned with CUDA_VISIBLE_DEVICES:
#   GPU 0: GPU test suites (foundation, hostile corpus), then records spaces, then live runs;
#   GPU 1: records every configuration of the suite spaces, then live contrastive runs.
# Both take recordings (one task at a time) and live runs (one task per run) from shared lists.
# With one GPU it all runs in turn.
# Nothing here changes clocks or settings of the GPU.
set -uo pipefail
S=${KD_SESSION_DIR:-/tmp/kd-session}
ROOT=$(pwd -P)
KD="$ROOT/dist-gpu/kernelduel"
export KERNELDUEL_RUNTIME_DIR=${KERNELDUEL_RUNTIME_DIR:-/tmp/kd}
LIVE_TASKS=${KD_LIVE_TASKS:-softmax reduce_sum matmul layernorm axpy transpose stencil2d histogram}
# Largest first; finished recordings are skipped by the recorder itself.
RECORD_TASKS=${KD_RECORD_TASKS:-reduce_sum softmax matmul transpose stencil2d layernorm axpy histogram}
OUTDIR=${OUT:-$ROOT/device-out}

stamp() { date -u +%FT%TZ; }

live_worker() { # $1 = stream name
  for t in $LIVE_TASKS; do
    # Tasks already in the repository's results are not run again (KD_LIVE_AGAIN=1 runs them).
    if [ -z "${KD_LIVE_AGAIN:-}" ] && grep -q "\"task\": \"$t\"" "$ROOT/bench/results/h200-contrastive-live.json" 2>/dev/null; then continue; fi
    mkdir "$S/claims/$t" 2>/dev/null || continue
    mkdir -p "$S/live/$t"
    cp "$ROOT/bench/results/h200-foundation.json" "$S/live/$t/" 2>/dev/null
    [ -e "$S/separate-timing" ] && export KERNELDUEL_SEPARATE_TIMING=1
    echo "$(stamp) [$1] live $t"
    "$KD/bench" contrastive-live --tasks "$t" --budget "${KD_LIVE_BUDGET:-100}" --out "$S/live/$t" > "$S/live/$t/log.txt" 2>&1
    rc=$?; echo "$(stamp) [$1] live $t exit $rc"
  done
}

stream_tests() {
  if [[ " ${KD_TESTS-foundation hostile} " == *" foundation "* ]]; then
    echo "$(stamp) [tests] foundation"
    "$KD/test-gpu" foundation > "$S/res/h200-gpu-tests.log" 2>&1
    rc=$?; echo "$(stamp) [tests] foundation exit $rc"
    # Insurance: if checking and timing in one process is broken on this machine, the rest of the
    # batch measures the two-process way (KERNELDUEL_SEPARATE_TIMING=1).
    if grep -q "^not ok .*check and time in one harness process" "$S/res/h200-gpu-tests.log"; then
      touch "$S/separate-timing"; echo "$(stamp) [tests] checktime failed: separate timing from now on"
    fi
  fi
  [[ " ${KD_TESTS-foundation hostile} " == *" hostile "* ]] || return 0
  [ -e "$S/separate-timing" ] && export KERNELDUEL_SEPARATE_TIMING=1
  echo "$(stamp) [tests] hostile"
  KERNELDUEL_RESULTS_DIR="$S/res" "$KD/test-gpu" hostile > "$S/res/h200-hostile-tests.log" 2>&1
  rc=$?; echo "$(stamp) [tests] hostile exit $rc"
}

stream_record() { # $1 = stream name; tasks are claimed one at a time, so both GPUs can record
  for t in $RECORD_TASKS; do
    mkdir "$S/claims/record-$t" 2>/dev/null || continue
    echo "$(stamp) [$1] record $t"
    nice -n 5 "$KD/bench" record-spaces --tasks "$t" --out "$S/spaces" --minutes "${KD_RECORD_MINUTES:-30}" >> "$S/record.log" 2>&1
    rc=$?; echo "$(stamp) [$1] record $t exit $rc"
  done
}

case ${1:-} in
start)
  . "$ROOT/scripts/lib-detached.sh"
  kd_start_once "$S" "$KD" || exit 0
  mkdir -p "$S/res" "$S/spaces" "$S/claims" "$S/live"
  # Recordings already in the repository (complete ones are skipped, partial ones resumed).
  cp "$ROOT"/bench/spaces/h200/*.json "$ROOT"/bench/spaces/h200/*.partial.jsonl "$S/spaces/" 2>/dev/null
  stamp > "$S/started"
  nvidia-smi > "$S/res/nvidia-smi.txt" 2>&1
  nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv >> "$S/res/nvidia-smi.txt" 2>&1
  "$KD/kernelduel" --version > "$S/res/version.txt" 2>&1
  ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  echo "$(stamp) $ngpu GPU(s)" > "$S/session.log"
  if [ "$ngpu" -ge 2 ]; then
    setsid bash -c "export CUDA_VISIBLE_DEVICES=0; $(declare -f stamp live_worker stream_tests stream_record); S='$S' KD='$KD' ROOT='$ROOT' LIVE_TASKS='$LIVE_TASKS' RECORD_TASKS='$RECORD_TASKS'; stream_tests; stream_record gpu0; live_worker gpu0; echo done > '$S/done-gpu0'" >> "$S/session.log" 2>&1 < /dev/null &
    setsid bash -c "export CUDA_VISIBLE_DEVICES=1; $(declare -f stamp live_worker stream_record); S='$S' KD='$KD' ROOT='$ROOT' LIVE_TASKS='$LIVE_TASKS' RECORD_TASKS='$RECORD_TASKS'; stream_record gpu1; live_worker gpu1; echo done > '$S/done-gpu1'" >> "$S/session.log" 2>&1 < /dev/null &
  else
    echo done > "$S/done-gpu1"
    setsid bash -c "$(declare -f stamp live_worker stream_tests stream_record); S='$S' KD='$KD' ROOT='$ROOT' LIVE_TASKS='$LIVE_TASKS' RECORD_TASKS='$RECORD_TASKS'; stream_tests; stream_record gpu0; live_worker gpu0; echo done > '$S/done-gpu0'" >> "$S/session.log" 2>&1 < /dev/null &
  fi
  echo "started"
  ;;
wait)
  . "$ROOT/scripts/lib-detached.sh"
  kd_require_started "$S" || exit 3
  end=$(( $(date +%s) + ${2:-60} ))
  while [ "$(date +%s)" -lt "$end" ]; do
    [ -e "$S/done-gpu0" ] && [ -e "$S/done-gpu1" ] && break
    sleep 5
  done
  mkdir -p "$OUTDIR"
  cat "$S/session.log"
  tail -n 3 "$S/record.log" 2>/dev/null
  for d in "$S"/live/*/; do [ -e "$d/log.txt" ] && { echo "== $d"; tail -n 2 "$d/log.txt"; }; done
  tar czf "$OUTDIR/spaces.tgz" -C "$S" spaces 2>/dev/null
  tar czf "$OUTDIR/results.tgz" -C "$S" --exclude=spaces . 2>/dev/null
  ls -la "$OUTDIR"
  [ -e "$S/done-gpu0" ] && [ -e "$S/done-gpu1" ] && echo ALL-DONE
  ;;
*)
  echo "usage: $0 start | wait SECONDS" >&2
  exit 2
  ;;
esac
