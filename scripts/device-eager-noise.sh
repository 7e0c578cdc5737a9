#!/usr/bin/env bash
# Is a short eager forward's time (the Python runner's baseline, resources/python/kd_candidate.py) the
# same from process to process, and what moves it? (issue 15: on 2026-12-01 the CUDA-L1 audit's eager
# times for forwards under 0.3 ms differed by up to 2.7x between runs and between the audit and its
# torch.compile processes, though the timer was CUDA events; forwards of 3-4 ms agreed within 2%,
# alone and beside 14 busy CPU loops.) For each problem, N fresh processes per condition, one at a
# time, nothing else on the GPU:
#   plain        the runner's defaults
#   warm         --warmup-ms 50 --prewarm-ms 1 (warm-up calls for 50 ms; GPU busy 1 ms before each sample)
#   plain+load   the defaults while LOAD busy loops keep CPU cores busy
#   warm+load    both
# Every run also takes 20 samples behind a gate (--gated-samples: the GPU's own time for the call)
# and reports the host's time for the call to return: if the gated time holds still while the
# reported one moves with the host-call time, the figure is Python's launch speed, not the GPU's.
# One JSON line per run to $OUT/eager-noise.jsonl, and a summary (per problem and condition: the
# medians of the runs and their spread, for each of the three) at the end. Problems are
# KernelBench files or CUDA-L1 ids (1/20: the reference CUDA-L1 used for level 1 task 20, read from
# shared/peers/cuda-l1/h100-levels-1-2.json). Run from the repository root with the GPU bundle at
# dist-gpu/kernelduel (KD_NOISE_DEVICE=cpu runs it on the CPU, to try the script). Changes no GPU setting.
#   scripts/device-eager-noise.sh [N=3] [LOAD=14] [problem ...]
#     LOAD=0: no rounds under load; KD_NOISE_WARM=0: no warm condition (plain only).
set -uo pipefail
N=${1:-3}; LOAD=${2:-14}; shift 2 2>/dev/null || shift $#
PROBLEMS=("$@")
[ ${#PROBLEMS[@]} -gt 0 ] || PROBLEMS=(1/20 1/76 2/1 2/80)
PY=${KERNELDUEL_PYTHON:-python3}
RUNNER=dist-gpu/kernelduel/resources/python/kd_candidate.py
L1=${KD_CUDA_L1_JSON:-shared/peers/cuda-l1/h100-levels-1-2.json}
OUTDIR=${OUT:-/tmp/eager-noise}; mkdir -p "$OUTDIR"; W=$(mktemp -d)
J="$OUTDIR/eager-noise.jsonl"; : > "$J"
nvidia-smi --query-gpu=name,uuid,clocks.sm,clocks.max.sm --format=csv,noheader > "$OUTDIR/eager-noise-gpu.txt" 2>&1
files=()
for p in "${PROBLEMS[@]}"; do
  if [ -f "$p" ]; then files+=("$p"); continue; fi
  f="$W/cuda-l1-${p/\//_}.py"
  "$PY" - "$L1" "$p" "$f" <<'PYEOF' || { echo "no CUDA-L1 reference for $p" >&2; continue; }
import json, sys
lvl, task = sys.argv[2].split("/")
for e in json.load(open(sys.argv[1]))[lvl]:
    if str(e["task_id"]) == task:
        open(sys.argv[3], "w").write(e["ref_code"]); break
else:
    sys.exit(1)
PYEOF
  files+=("$f")
done
run() { # run CONDITION PROBLEM [runner args...]
  local c=$1 p=$2; shift 2
  local f="$W/r.json"; rm -f "$f"
  "$PY" "$RUNNER" baseline "$p" --out "$f" --device "${KD_NOISE_DEVICE:-cuda}" --gated-samples 20 "$@" > "$W/log" 2>&1 || { echo "{\"condition\": \"$c\", \"problem\": \"$p\", \"failed\": true}" >> "$J"; return; }
  "$PY" - "$f" "$c" "$p" <<'PYEOF' >> "$J"
import json, sys
d = json.load(open(sys.argv[1])); e = d.get("eager") or {}
g = e.get("gated") or {}
print(json.dumps({"condition": sys.argv[2], "problem": sys.argv[3].split("/")[-1], **{k: e.get(k) for k in ("medianMs", "eventMedianMs", "wallMedianMs", "hostCallMedianMs", "floorMs", "timer", "rsd", "samples", "warmupCalls", "prewarmMs")}, "deviceMedianMs": g.get("deviceMedianMs"), "gateMs": g.get("gateMs"), "gateStarved": g.get("starved")}))
PYEOF
}
rounds() { # rounds SUFFIX: each problem, N times per condition, the conditions interleaved
  for k in $(seq "$N"); do for p in "${files[@]}"; do
    run "plain$1" "$p"
    [ "${KD_NOISE_WARM:-1}" = 0 ] || run "warm$1" "$p" --warmup-ms 50 --prewarm-ms 1
  done; done
}
rounds ""
if [ "$LOAD" -gt 0 ]; then
  pids=(); for _ in $(seq "$LOAD"); do "$PY" -c 'while True: pass' & pids+=($!); done
  rounds "+load"
  kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null
fi
"$PY" - "$J" <<'PYEOF' | tee "$OUTDIR/eager-noise-summary.txt"
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    if r.get("medianMs"): by.setdefault((r["problem"], r["condition"]), []).append(r)
spread = lambda xs: (max(xs) - min(xs)) / statistics.median(xs) * 100
print("problem | condition | reported medians (ms) | spread | host call medians | spread | GPU's own time behind a gate | spread")
for (p, c), rs in sorted(by.items()):
    cols = []
    for key in ("medianMs", "hostCallMedianMs", "deviceMedianMs"):
        xs = [r[key] for r in rs if r.get(key)]
        cols += [" ".join(f"{x:.4f}" for x in xs) or "-", f"{spread(xs):.1f}%" if xs else "-"]
    print(f"{p} | {c} | " + " | ".join(cols))
PYEOF
rm -rf "$W"
