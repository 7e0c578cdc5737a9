#!/usr/bin/env bash
# The GPU check of `kernelduel optimize` with Python candidates (issue 15), in one command of a few
# minutes on a lent GPU machine: the LLM policy on KernelDuel's own ReLU problem
# (bench/python-optimize/task), answered by scripts/scripted-llm.py with the five candidates of
# bench/python-optimize/answers (a correct custom kernel, a lazy one, a fallback, a PyTorch rewrite,
# a second custom kernel) — scripted answers, NOT a language model: it checks the measuring path on
# a GPU (labels custom / pytorch-only / fallback, custom share, GPU times vs eager, duels, the
# session), never what a model would write. Expected: 01 and 05 custom and timed, 02 correctness,
# 03 fallback (compile), 04 pytorch-only; every result's source a GPU, none CPU.
# Run from the repository root with the GPU bundle built here (npm run bundle:gpu -> dist-gpu,
# carried to the machine). Writes $OUT/python-optimize.tgz (session, CLI output, the prompts).
#
#   scripts/device-python-optimize.sh [BUDGET]        (default 5)
# KD_CLI="npx tsx main/doors/cli/index.ts" runs the sources instead of the bundle (a check here, on
# the CPU, with KD_DEVICE=cpu: there the custom kernels fail to build, which is the expected outcome).
set -uo pipefail
ROOT=$(pwd -P)
BUDGET=${1:-5}
export KERNELDUEL_RUNTIME_DIR=${KERNELDUEL_RUNTIME_DIR:-/tmp/kd}
KD_CLI=${KD_CLI:-$ROOT/dist-gpu/kernelduel/kernelduel}
PY=${KERNELDUEL_PYTHON:-$(command -v python3)}
export KERNELDUEL_PYTHON=$PY
WORK=${KD_WORK:-/tmp/kd-python-optimize}
OUTDIR=${OUT:-$ROOT/device-out}
TASK=${KD_PY_TASK:-$ROOT/bench/python-optimize/task}
rm -rf "$WORK" && mkdir -p "$WORK/home" "$OUTDIR"
export KERNELDUEL_HOME="$WORK/home"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem,driver_version --format=csv 2>&1
  "$PY" -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.is_available() and torch.cuda.get_device_name(0))' 2>&1
} > "$WORK/machine.txt"
"$PY" "$ROOT/scripts/scripted-llm.py" --answers "$ROOT/bench/python-optimize/answers" --port-file "$WORK/port" --log "$WORK/requests.jsonl" &
SRV=$!
trap 'kill $SRV 2>/dev/null' EXIT
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.2; done
PORT=$(cat "$WORK/port" 2>/dev/null) || { echo "the scripted LLM server did not start" >&2; exit 2; }
# shellcheck disable=SC2086
# 2026-12-02 on the H200: 9.5 min for budget 5 (builds, gated per-call samples, two-round duels);
# 560 s cut the last duel, so the limit is KD_PY_OPT_LIMIT_S (default 780)
timeout -k 10 "${KD_PY_OPT_LIMIT_S:-780}" $KD_CLI optimize "$TASK" --candidates python --strategy llm --budget "$BUDGET" --duel-rounds 2 \
  ${KD_DEVICE:+--device $KD_DEVICE} --llm-base-url "http://127.0.0.1:$PORT/v1" --llm-model scripted > "$WORK/optimize.out" 2> "$WORK/optimize.log"
rc=$?
# shellcheck disable=SC2086
$KD_CLI sessions > "$WORK/sessions.txt" 2>&1
tar czf "$OUTDIR/python-optimize.tgz" -C "$WORK" home/sessions machine.txt optimize.out optimize.log requests.jsonl sessions.txt 2>/dev/null
tail -25 "$WORK/optimize.log"
echo "exit $rc; $OUTDIR/python-optimize.tgz"
exit "$rc"
