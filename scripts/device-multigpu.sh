#!/usr/bin/env bash
# The GPU batch of issue 19 (one optimisation run on every GPU of a host), for a leased machine with
# two (or more) GPUs of one model: `bench multi-gpu` runs matmul, softmax and layernorm with the
# contrastive strategy on 1 GPU and on 2 GPUs, same budget and seed, and writes
# <gpu>x<N>-multi-gpu.json and .md (h200x2-multi-gpu.* on two H200s) after every run, so a batch
# cut short keeps what it measured. Run from the repository root with the bundle built
# (node scripts/bundle-gpu.mjs -> dist-gpu/kernelduel). The work runs detached (setsid) under a
# time limit, so it survives the end of the command that started it:
#
#   scripts/device-multigpu.sh start           start once (later calls do nothing)
#   scripts/device-multigpu.sh wait SECONDS    wait until done or SECONDS pass; copy the results
#                                              (also partial ones) into $OUT (or ./device-out)
#                                              and into bench/results/
#
# Read at start: KD_MG_TASKS (matmul,softmax,layernorm), KD_MG_BUDGETS (24,40,40: one per task),
# KD_MG_POOLS (1,2; 1,1c,2 adds one GPU with CUDA contexts created on the other), KD_MG_TRACE (set: a
# KERNELDUEL_TRACE per run, brought back as multi-gpu-traces.tgz), KD_MG_SEED (1), KD_MG_DEADLINE_S (275: the benchmark plans its runs to end by
# then), KD_MG_LIMIT_S (295: then it is sent SIGTERM, writes what it has and stops; killed 20 s later).
# Nothing here changes clocks or settings of the GPU.
set -uo pipefail
S=${KD_SESSION_DIR:-/tmp/kd-multigpu}
ROOT=$(pwd -P)
KD="$ROOT/dist-gpu/kernelduel"
export KERNELDUEL_RUNTIME_DIR=${KERNELDUEL_RUNTIME_DIR:-/tmp/kd}
OUTDIR=${OUT:-$ROOT/device-out}
stamp() { date -u +%FT%TZ; }

work() {
  cd "$ROOT" || exit 1
  echo "$(stamp) bench multi-gpu"
  timeout -s TERM -k 20 "${KD_MG_LIMIT_S:-295}" "$KD/bench" multi-gpu \
    --tasks "${KD_MG_TASKS:-matmul,softmax,layernorm}" --budgets "${KD_MG_BUDGETS:-24,40,40}" --pools "${KD_MG_POOLS:-1,2}" \
    --seed "${KD_MG_SEED:-1}" --deadline-s "${KD_MG_DEADLINE_S:-275}" ${KD_MG_TRACE:+--trace} --out "$S/res" > "$S/res/multi-gpu.log" 2>&1
  rc=$?; echo "$(stamp) bench multi-gpu exit $rc"
  echo done > "$S/done"
}

case ${1:-} in
start)
  if [ -e "$S/started" ]; then echo "already started $(cat "$S/started")"; exit 0; fi
  [ -x "$KD/bench" ] || { echo "no bundle at $KD: run node scripts/bundle-gpu.mjs first (and carry dist-gpu)" >&2; exit 2; }
  mkdir -p "$S/res"
  stamp > "$S/started"
  nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv > "$S/res/nvidia-smi.txt" 2>&1
  setsid bash -c "$(declare -f stamp work); S='$S' KD='$KD' ROOT='$ROOT'; work" >> "$S/session.log" 2>&1 < /dev/null &
  echo started
  ;;
wait)
  . "$ROOT/scripts/lib-detached.sh"
  kd_require_started "$S" || exit 3
  end=$(( $(date +%s) + ${2:-60} ))
  while [ "$(date +%s)" -lt "$end" ] && [ ! -e "$S/done" ]; do sleep 5; done
  mkdir -p "$OUTDIR" "$ROOT/bench/results"
  cat "$S/session.log"
  tail -n 30 "$S/res/multi-gpu.log" 2>/dev/null
  for f in "$S"/res/*-multi-gpu.json "$S"/res/*-multi-gpu.md; do
    [ -e "$f" ] && cp "$f" "$OUTDIR/" && cp "$f" "$ROOT/bench/results/"
  done
  cp "$S/res/multi-gpu.log" "$OUTDIR/multi-gpu.log" 2>/dev/null
  (cd "$S/res" && ls trace-*.jsonl >/dev/null 2>&1 && tar czf "$OUTDIR/multi-gpu-traces.tgz" trace-*.jsonl)
  # The runs' sessions (journals with every result's stages), for a closer look afterwards.
  (cd "${TMPDIR:-/tmp}" && ls -d kd-multigpu-*/sessions >/dev/null 2>&1 && tar czf "$OUTDIR/multi-gpu-sessions.tgz" kd-multigpu-*/sessions)
  cp "$S/res/nvidia-smi.txt" "$OUTDIR/nvidia-smi.txt" 2>/dev/null
  ls -la "$OUTDIR"
  [ -e "$S/done" ] && echo ALL-DONE
  ;;
*)
  echo "usage: $0 start | wait SECONDS" >&2
  exit 2
  ;;
esac
