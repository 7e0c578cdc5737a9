#!/usr/bin/env bash
# KernelDuel's best against PyTorch on one GPU (issue 17): `bench vs-pytorch` from the GPU bundle
# (bench/vs-pytorch.ts: PyTorch timed by bench/torch-timing.py, the copy bandwidth, and a
# contrastive optimisation of each suite task from its naive baseline), writing
# bench/results/<gpu>-vs-pytorch.json and .md. Run from the repository root with the bundle built
# here (npm run bundle:gpu -> dist-gpu/kernelduel; the GPU host has no Node) and python3 with torch
# on the GPU host. The work runs detached (setsid), so it can outlast one command of the lease:
#
#   scripts/device-vs-pytorch.sh run [SECONDS]     start, then wait until done (at most SECONDS, default 400)
#   scripts/device-vs-pytorch.sh start             start once (later calls do nothing)
#   scripts/device-vs-pytorch.sh wait SECONDS      wait until done or SECONDS pass; copy results into $OUT
#
# Read at start: KD_VS_MODE (optimize: budget-KD_VS_BUDGET contrastive runs, each stopped after
# KD_VS_TASK_LIMIT_S seconds, default 100 and 50 s: about 5.5 minutes on one H200 at today's
# evaluation rate, so a task may stop before its budget is used up, which the results file says per
# task; expert: the configurations of bench/expert-configs.json instead, about 1.5 minutes),
# KD_VS_TASKS (default all five), KD_VS_LIMIT_S (hard stop of the whole run, default 390 s: what
# was measured by then is already in the results files), KD_VS_SEED (the search's seed, default 1),
# KD_VS_OUT (the results folder, default bench/results: give another for a second seed, whose
# files would otherwise replace the first's; set it for `wait` too). Nothing here changes clocks or settings of the GPU.
set -uo pipefail
S=${KD_SESSION_DIR:-/tmp/kd-vs-pytorch}
ROOT=$(pwd -P)
KD="$ROOT/dist-gpu/kernelduel"
export KERNELDUEL_RUNTIME_DIR=${KERNELDUEL_RUNTIME_DIR:-/tmp/kd}
OUTDIR=${OUT:-$ROOT/device-out}
stamp() { date -u +%FT%TZ; }

work() {
  cd "$ROOT" || exit 1
  "$KD/kernelduel" --version > "$S/version.txt" 2>&1 # unpacks the runtime
  local args=(--out "${KD_VS_OUT:-$ROOT/bench/results}")
  [ -n "${KD_VS_SEED:-}" ] && args+=(--seed "$KD_VS_SEED")
  [ -n "${KD_VS_TASKS:-}" ] && args+=(--tasks "$KD_VS_TASKS")
  if [ "${KD_VS_MODE:-optimize}" = expert ]; then args+=(--configs expert)
  else args+=(--budget "${KD_VS_BUDGET:-100}" --task-limit-s "${KD_VS_TASK_LIMIT_S:-50}"); fi
  echo "$(stamp) bench vs-pytorch ${args[*]}"
  timeout --signal=TERM --kill-after=10 "${KD_VS_LIMIT_S:-390}" "$KD/bench" vs-pytorch "${args[@]}" > "$S/vs-pytorch.log" 2>&1
  rc=$?; echo "$(stamp) bench vs-pytorch exit $rc"
  echo done > "$S/done"
}

pack() {
  mkdir -p "$OUTDIR"
  cat "$S/session.log" 2>/dev/null
  tail -n 30 "$S/vs-pytorch.log" 2>/dev/null
  local res=${KD_VS_OUT:-$ROOT/bench/results}
  cat "$res"/*-vs-pytorch.md 2>/dev/null
  cp "$res"/*-vs-pytorch.json "$res"/*-vs-pytorch.md "$S/vs-pytorch.log" "$OUTDIR/" 2>/dev/null
  [ -e "$S/done" ] && echo ALL-DONE
}

start() {
  . "$ROOT/scripts/lib-detached.sh"
  kd_start_once "$S" "$KD" || return 0
  [ -x "$KD/bench" ] || { echo "no bundle at $KD: run npm run bundle:gpu first" >&2; exit 2; }
  mkdir -p "$S"
  stamp > "$S/started"
  nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv > "$S/nvidia-smi.txt" 2>&1
  setsid bash -c "$(declare -f stamp work); S='$S' KD='$KD' ROOT='$ROOT'; work" >> "$S/session.log" 2>&1 < /dev/null &
  echo started
}

waitfor() {
  . "$ROOT/scripts/lib-detached.sh"
  kd_require_started "$S" || exit 3
  local end=$(( $(date +%s) + ${1:-60} ))
  while [ "$(date +%s)" -lt "$end" ] && [ ! -e "$S/done" ]; do sleep 5; done
  pack
}

case ${1:-} in
run) start && waitfor "${2:-400}" ;;
start) start ;;
wait) waitfor "${2:-60}" ;;
*)
  echo "usage: $0 run [SECONDS] | start | wait SECONDS" >&2
  exit 2
  ;;
esac
