#!/usr/bin/env bash
# The CUDA-L1 audit (issue 15) on a leased GPU machine, in one command of at most ~8 minutes: runs
# `bench cuda-l1-audit` from the GPU bundle with a deadline, writing bench/results/h200-cuda-l1-audit
# .json/.md/.log as it goes (rows kept after every candidate) and copying them into $OUT. Run from
# the repository root with the bundle built here (node scripts/bundle-gpu.mjs -> dist-gpu/kernelduel,
# carried to the machine) and CUDA-L1's file at shared/peers/cuda-l1/h100-levels-1-2.json (or
# KD_CUDA_L1_JSON=...). A second run resumes: rows already in bench/results/h200-cuda-l1-audit.json
# are kept (carry that file back, or leave it committed); the build cache lives in /tmp and is reused
# only on the same machine.
#
#   scripts/device-cuda-l1-audit.sh [DEADLINE_S] [bench args...]
#     DEADLINE_S (default 400): no new candidate starts after it; the run ends within ~60 s of it.
#     e.g. scripts/device-cuda-l1-audit.sh 400 --shard 1/2     half the candidates
#          scripts/device-cuda-l1-audit.sh 300 --compile-pass  torch.compile baselines for measured rows
#          scripts/device-cuda-l1-audit.sh 60 --tasks control  only the control (toolchain check)
# The rows accumulate in /tmp/kd-cuda-l1-audit/results (seeded from bench/results when it has none):
# a lease's next call copies the working tree again, which would put the committed file back over
# the rows of the call before. Run nothing else on the GPU beside it (its lock keeps its own timing
# sections apart, not another tool's work): on 2026-12-01 a KernelBench import beside the compile
# pass disturbed its timing enough that those figures were rejected.
# Python: KERNELDUEL_PYTHON, else python3 (its torch, CUDA, triton, torch.compile and ninja are
# recorded in the results). Nothing here changes clocks or settings of the GPU.
set -uo pipefail
ROOT=$(pwd -P)
KD="$ROOT/dist-gpu/kernelduel"
DL=${1:-400}
[ $# -gt 0 ] && shift
export KERNELDUEL_RUNTIME_DIR=${KERNELDUEL_RUNTIME_DIR:-/tmp/kd}
DATA=${KD_CUDA_L1_JSON:-$ROOT/shared/peers/cuda-l1/h100-levels-1-2.json}
OUTDIR=${OUT:-$ROOT/device-out}
RES="$ROOT/bench/results"
if [ ! -x "$KD/bench" ]; then echo "no GPU bundle at $KD: run node scripts/bundle-gpu.mjs on the development machine and carry dist-gpu" >&2; exit 2; fi
if [ ! -f "$DATA" ]; then echo "CUDA-L1's candidates not found at $DATA: copy peers/cuda-l1/h100-levels-1-2.json there or set KD_CUDA_L1_JSON" >&2; exit 2; fi
WRES=/tmp/kd-cuda-l1-audit/results
mkdir -p "$RES" "$OUTDIR" "$WRES"
[ -f "$WRES/h200-cuda-l1-audit.json" ] || { [ -f "$RES/h200-cuda-l1-audit.json" ] && cp "$RES/h200-cuda-l1-audit.json" "$WRES/"; }
CORES=$(nproc 2>/dev/null || echo 16)
BUILD_JOBS=$(( CORES > 4 ? (CORES - 2) / 2 : 1 ))
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv 2>&1
  echo "cores $CORES, build jobs $BUILD_JOBS; python ${KERNELDUEL_PYTHON:-$(command -v python3)}; nvcc $(command -v nvcc); ninja $(command -v ninja)"
} > "$RES/h200-cuda-l1-audit.machine.txt"
# The bench stops starting work at the deadline; timeout is the backstop (rows written so far stay).
timeout -k 10 $(( DL + 90 )) "$KD/bench" cuda-l1-audit --data "$DATA" --out "$WRES" --work /tmp/kd-cuda-l1-audit \
  --deadline-s "$DL" --build-jobs "$BUILD_JOBS" --measure-jobs "${KD_MEASURE_JOBS:-3}" "$@" 2>&1 | tee "$RES/h200-cuda-l1-audit.log"
rc=${PIPESTATUS[0]}
cp "$WRES"/h200-cuda-l1-audit.json "$WRES"/h200-cuda-l1-audit.md "$RES"/ 2>/dev/null
cp "$RES"/h200-cuda-l1-audit.json "$RES"/h200-cuda-l1-audit.md "$RES"/h200-cuda-l1-audit.log "$RES"/h200-cuda-l1-audit.machine.txt "$OUTDIR"/ 2>/dev/null
echo "exit $rc; results in $RES and $OUTDIR"
exit "$rc"
