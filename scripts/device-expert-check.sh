#!/usr/bin/env bash
# Quick GPU check of the suite spaces (issue 17): every expert configuration of
# bench/expert-configs.json (and with KD_CHECK_BASELINES=1 the naive baselines too), through
# `kernelduel eval <task> --config ...` (built, checked on every size of the task against the
# reference, timed at the timed size), plus the device-to-device copy of bench/tasks/copy for the
# bandwidth ceiling. The five tasks run side by side (builds overlap; the GPU lock lets one
# measurement run at a time, so timings are not disturbed). Run from the repository root with the
# bundle built here (npm run bundle:gpu -> dist-gpu/kernelduel; the GPU host has no Node):
#
#   scripts/device-expert-check.sh [TASK ...]        (default: softmax layernorm transpose reduce_sum matmul)
#
# Writes bench/results/<gpu>-expert-check.txt (one line per configuration: check, median, TB/s or
# TFLOP/s, % of the copy bandwidth) and the full eval logs in bench/results/<gpu>-expert-check.log;
# copies both into $OUT when set. Stops at KD_CHECK_LIMIT_S (default 110) seconds: what finished
# by then is kept, the rest is listed as not run. Expected: about 1.5 minutes on one H200.
# KD_CHECK_CONFIGS: another file of the same shape (e.g. bench/probes/transpose.json, configurations
# tried to see what a space holds); KD_CHECK_NAME: the results' name instead of expert-check;
# KD_CHECK_JOBS: evaluations of one task side by side (default 1); KD_CHECK_EVAL_ARGS: more options of
# `kernelduel eval` for every evaluation, the copy's too (e.g. '--buffer-sets 1', to compare with runs
# made before 4 sets were the default).
set -uo pipefail
ROOT=$(pwd -P)
KD=${KD:-$ROOT/dist-gpu/kernelduel/kernelduel}
# device-batch.sh exports KD as the bundle folder: take the folder or the launcher
[ -d "$KD" ] && KD="$KD/kernelduel"
LIMIT=${KD_CHECK_LIMIT_S:-110}
CONFIGS=${KD_CHECK_CONFIGS:-$ROOT/bench/expert-configs.json}
NAME=${KD_CHECK_NAME:-expert-check}
read -r -a EVAL_ARGS <<< "${KD_CHECK_EVAL_ARGS:-}"
[ -f "$CONFIGS" ] || { echo "no configuration file $CONFIGS" >&2; exit 2; }
export KERNELDUEL_RUNTIME_DIR=${KERNELDUEL_RUNTIME_DIR:-/tmp/kd}
TASKS=("$@")
[ ${#TASKS[@]} -gt 0 ] || TASKS=(softmax layernorm transpose reduce_sum matmul)
[ -x "$KD" ] || { echo "no bundle at $KD: run npm run bundle:gpu first (or set KD)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to read $CONFIGS" >&2; exit 2; }
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
SLUG=$(printf '%s' "${GPU:-gpu}" | tr 'A-Z' 'a-z' | sed -e 's/^nvidia //' -e 's/[^a-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//')
[ -n "$SLUG" ] || SLUG=gpu
W=$(mktemp -d /tmp/kd-expert-check.XXXXXX)
START=$(date +%s)
"$KD" --version > "$W/version.txt" 2>&1 # unpacks the runtime once, before the parallel runs

# One line per configuration: TASK<TAB>k=v,k=v (the baseline as "baseline").
python3 - "$CONFIGS" "${KD_CHECK_BASELINES:-0}" "${TASKS[@]}" > "$W/plan.tsv" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))["tasks"]
for t in sys.argv[3:]:
    if t not in cfg:
        sys.exit(f"{sys.argv[1]} has no task {t!r} (it has {', '.join(cfg)})")
    for c in cfg[t]:
        print(f"{t}\t{','.join(f'{k}={v}' for k, v in c.items())}")
    if sys.argv[2] == "1" and t != "matmul":  # the naive matmul takes ~30 ms a call: too slow for this check
        print(f"{t}\tbaseline")
PY
[ $? -eq 0 ] || exit 2

one() { # TASK CONFIG -> appends a summary line; full log in $W/logs
  local task=$1 conf=$2 log rc
  log="$W/logs/$task.$(printf '%s' "$conf" | tr -c 'A-Za-z0-9=' '_').log"
  local left=$(( LIMIT - ($(date +%s) - START) ))
  if [ "$left" -le 5 ]; then printf '%s\t%s\tNOT RUN (time limit)\n' "$task" "$conf" >> "$W/summary.tsv"; return; fi
  if [ "$conf" = baseline ]; then timeout "$left" "$KD" eval "$task" "${EVAL_ARGS[@]}" > "$log" 2>&1; rc=$?
  else timeout "$left" "$KD" eval "$task" --config "$conf" "${EVAL_ARGS[@]}" > "$log" 2>&1; rc=$?; fi
  local check time failed
  check=$(grep -m1 '^check:' "$log" | sed 's/ (.*worst/ (worst/')
  time=$(grep -m1 '^time (size 0)' "$log" | sed -E 's/^time \(size 0\): median ([^ ]+ [^ ]+).* samples \(([^)]*)\)(.*)$/\1 \3/')
  failed=$(grep -m1 '^FAILED' "$log")
  [ "$rc" -eq 124 ] && failed="TIMEOUT after ${left} s"
  printf '%s\t%s\t%s\t%s\t%s\n' "$task" "$conf" "${check:-no check}" "${time:--}" "${failed:-}" >> "$W/summary.tsv"
}
mkdir -p "$W/logs"
: > "$W/summary.tsv"
(
  "$KD" eval "$ROOT/bench/tasks/copy" "${EVAL_ARGS[@]}" > "$W/logs/copy.log" 2>&1
) &
JOBS=${KD_CHECK_JOBS:-1} # evaluations of one task at a time (builds overlap; the GPU lock serialises timing)
for t in "${TASKS[@]}"; do
  for ((lane = 0; lane < JOBS; lane++)); do
    ( i=0; while IFS=$'\t' read -r task conf; do
        [ "$task" = "$t" ] || continue
        [ $((i % JOBS)) -eq "$lane" ] && one "$task" "$conf"
        i=$((i + 1))
      done < "$W/plan.tsv" ) &
  done
done
wait

RES="$ROOT/bench/results"
mkdir -p "$RES"
COPY=$(grep -m1 '^time (size 0)' "$W/logs/copy.log" | grep -oE '[0-9.]+ TB/s' | cut -d' ' -f1)
{
  echo "# expert-configuration check (issue 17): kernelduel eval --config, one run"
  echo "# GPU: ${GPU:-unknown}   date: $(date -u +%FT%TZ)   bundle: $(tail -n1 "$W/version.txt")"
  echo "# command: scripts/device-expert-check.sh ${*:-}   (configurations: ${CONFIGS#$ROOT/})${KD_CHECK_EVAL_ARGS:+   (kernelduel eval $KD_CHECK_EVAL_ARGS)}"
  echo "# copy bandwidth (bench/tasks/copy, same harness): ${COPY:-not measured} TB/s"
  echo "# task  config  check  median [time unit]  achieved  failure"
  python3 - "$W/summary.tsv" "${COPY:-}" <<'PY'
import sys, re
copy = float(sys.argv[2]) if sys.argv[2] else None
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    extra = ""
    m = re.search(r"([0-9.]+) TB/s", line)
    if m and copy:
        extra = f"  = {100 * float(m.group(1)) / copy:.0f}% of copy"
    print("  ".join(x for x in f if x) + extra)
PY
} > "$RES/$SLUG-$NAME.txt"
for f in "$W"/logs/*.log; do echo "=== $(basename "$f")"; cat "$f"; done > "$RES/$SLUG-$NAME.log"
cat "$RES/$SLUG-$NAME.txt"
echo "($(( $(date +%s) - START )) s; full logs in bench/results/$SLUG-$NAME.log)"
if [ -n "${OUT:-}" ]; then cp "$RES/$SLUG-$NAME.txt" "$RES/$SLUG-$NAME.log" "$OUT/" 2>/dev/null; fi
rm -rf "$W"
grep -qE 'FAILED|TIMEOUT' "$RES/$SLUG-$NAME.txt" && exit 1
exit 0
