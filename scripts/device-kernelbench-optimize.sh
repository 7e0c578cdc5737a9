#!/usr/bin/env bash
# The GPU check of issue 15's "What to show" for CUDA entry points: three KernelBench level-1
# problems imported as PyTorch-reference tasks, each given a CUDA entry-point baseline written for
# KernelDuel (bench/kernelbench-entry/<problem>/kernel.cu, with its tunables), checked and timed by
# the CUDA harness against reference data PyTorch computes on the GPU (docs/PYTHON-CANDIDATES.md,
# "The CUDA entry point of the same task"), then searched with `optimize --strategy contrastive`;
# PyTorch eager and torch.compile timed by the Python runner. Writes
# bench/results/h200-kernelbench-optimize.{json,md} (only when a GPU measured something) and the
# same files plus the logs into $OUT (device-out/ by default).
#
# Run from the repository root with the GPU bundle built here (npm run bundle:gpu -> dist-gpu,
# carried to the machine) and the KernelBench problem files in the git-ignored shared/ folder:
#
#   scripts/device-kernelbench-optimize.sh [BUDGET] [DEADLINE_S]     (defaults 20 and 560)
#
# Expected on an H200: ~5-8 min (import 20 s; the harness build ~40 s; PyTorch's reference data
# ~20 s per problem and evaluator; the three searches run at once; each torch.compile 20-60 s).
# No step starts after DEADLINE_S; a step is cut at what is left of it, and the summary says so.
# KD_KB_DIR: where the problem files are (default shared/kernelbench/level1).
# KD_CLI="npx tsx main/doors/cli/index.ts" runs the sources instead of the bundle: on a machine
# without a GPU this is a dry run of the script's logic (import works; every eval fails saying the
# variant was only built; nothing is measured, and the summary says so).
set -uo pipefail
ROOT=$(pwd -P)
BUDGET=${1:-20}
DEADLINE_S=${2:-560}
START=$(date +%s)
export KERNELDUEL_RUNTIME_DIR=${KERNELDUEL_RUNTIME_DIR:-/tmp/kd}
KD_CLI=${KD_CLI:-$ROOT/dist-gpu/kernelduel/kernelduel}
PY=${KERNELDUEL_PYTHON:-$(command -v python3)}
export KERNELDUEL_PYTHON=$PY
KB=${KD_KB_DIR:-$ROOT/shared/kernelbench/level1}
WORK=${KD_WORK:-/tmp/kd-kernelbench-optimize}
OUTDIR=${OUT:-$ROOT/device-out}
ENTRY=$ROOT/bench/kernelbench-entry
MAX_MS=${KD_MAX_MS:-1000}   # time cap of each variant's sampling (the harness stops earlier once the median is tight)
PROBLEMS=(88_MinGPTNewGelu 12_Matmul_with_diagonal_matrices_ 40_LayerNorm)
rm -rf "$WORK" && mkdir -p "$WORK/home" "$WORK/level1" "$OUTDIR"
export KERNELDUEL_HOME="$WORK/home"
left() { echo $((DEADLINE_S - ($(date +%s) - START))); }
# Runs a step with the smaller of its own limit and what is left of the deadline; "skipped" when nothing is left.
step() {
  local limit=$1 out=$2 err=$3
  shift 3
  local l
  l=$(left)
  [ "$l" -lt "$limit" ] && limit=$l
  if [ "$limit" -le 5 ]; then echo "skipped: the deadline (${DEADLINE_S} s) was reached" > "$err"; return 124; fi
  # shellcheck disable=SC2086
  timeout -k 10 "$limit" "$@" > "$out" 2> "$err"
  local rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "cut after ${limit} s (the step's limit or the deadline)" >> "$err"; fi
  return "$rc"
}

for p in "${PROBLEMS[@]}"; do
  [ -f "$KB/$p.py" ] || { echo "missing $KB/$p.py: copy KernelBench's level1 problem files into shared/kernelbench/level1 (or set KD_KB_DIR)" >&2; exit 2; }
  cp "$KB/$p.py" "$WORK/level1/"
done
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem,driver_version --format=csv 2>&1
  "$PY" -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available() and torch.cuda.get_device_name(0))' 2>&1
  df -h /dev/shm /tmp 2>&1 | tail -2
} > "$WORK/machine.txt"
cat "$WORK/machine.txt"

# KD_GPU_TEST=1: first the GPU test of this path on a tiny problem (test/gpu/pytorch-cuda.test.ts, ~1 min).
if [ "${KD_GPU_TEST:-0}" = 1 ] && [ -x "$ROOT/dist-gpu/kernelduel/test-gpu" ]; then
  step 120 "$WORK/gpu-test.out" "$WORK/gpu-test.log" "$ROOT/dist-gpu/kernelduel/test-gpu" pytorch-cuda
  echo "gpu test: exit $?"; tail -15 "$WORK/gpu-test.out"
fi

# shellcheck disable=SC2086
$KD_CLI import kernelbench "$WORK/level1" -o "$WORK/tasks" --force > "$WORK/import.out" 2> "$WORK/import.log"
echo "import: exit $?"; tail -5 "$WORK/import.log"

for p in "${PROBLEMS[@]}"; do
  num=${p%%_*}
  t=$(ls -d "$WORK"/tasks/*-"$num"-* 2>/dev/null | head -1)
  d="$WORK/run/$p"
  mkdir -p "$d"
  if [ -z "$t" ]; then echo "no task folder for $p (the import failed: $WORK/import.log)" > "$d/missing"; continue; fi
  echo "$t" > "$d/task"
  # Our baseline and its tunables (the import writes a placeholder kernel.cu and no tunables).
  cp "$ENTRY/$p/kernel.cu" "$t/kernel.cu"
  cat "$ENTRY/$p/tunables.yaml" >> "$t/task.yaml"
  # PyTorch eager as a candidate of its own: the reference with ModelNew = Model.
  { cat "$t/model.py"; printf '\n\nclass ModelNew(Model):\n    pass\n'; } > "$d/eager.py"
done

# The most telling results first: each baseline's check and time, then each search, then eager and
# torch.compile (each torch.compile costs its compile time).
for p in "${PROBLEMS[@]}"; do
  d="$WORK/run/$p"; [ -f "$d/task" ] || continue
  step 150 "$d/eval.json" "$d/eval.log" $KD_CLI eval "$(cat "$d/task")" --max-ms "$MAX_MS" --json
  echo "$p eval: exit $? ($(left) s left)"; tail -3 "$d/eval.log"
done
# The three searches at once: their builds overlap, while every GPU job (reference data, captures,
# checks, timing) waits for the GPU's lock, which one KernelDuel process holds at a time.
for p in "${PROBLEMS[@]}"; do
  d="$WORK/run/$p"; [ -f "$d/task" ] || continue
  ( step 240 "$d/optimize.jsonl" "$d/optimize.log" $KD_CLI optimize "$(cat "$d/task")" --candidates cuda --strategy contrastive --budget "$BUDGET" --seed 1 --max-ms "$MAX_MS" --json
    echo "$p optimize: exit $? ($(left) s left)"; tail -3 "$d/optimize.log" ) &
done
wait
for p in "${PROBLEMS[@]}"; do
  d="$WORK/run/$p"; [ -f "$d/task" ] || continue
  step 150 "$d/eager.json" "$d/eager.log" $KD_CLI eval "$(cat "$d/task")" "$d/eager.py" --compile --json
  echo "$p eager/compile: exit $? ($(left) s left)"; tail -3 "$d/eager.log"
done

"$PY" "$ROOT/scripts/kernelbench-optimize-summary.py" --work "$WORK" --budget "$BUDGET" --out "$OUTDIR" --results "$ROOT/bench/results" "${PROBLEMS[@]}"
rc=$?
tar czf "$OUTDIR/kernelbench-optimize.tgz" -C "$WORK" machine.txt import.out import.log run home/sessions $(cd "$WORK" && ls gpu-test.* 2>/dev/null) 2>/dev/null
echo "exit $rc; $OUTDIR/h200-kernelbench-optimize.md, $OUTDIR/kernelbench-optimize.tgz ($(( $(date +%s) - START )) s)"
exit "$rc"
