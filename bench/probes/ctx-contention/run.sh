#!/usr/bin/env bash
# Does CUDA start-up on one GPU slow down while another process starts CUDA on another GPU (or the
# same one)? Issue 19's question: a 2-GPU run's lanes were each ~20% slower than a 1-GPU run, and a
# run on GPU 0 beside a loop of processes only creating contexts on GPU 1 was 38% slower
# (bench/results/h200x2-multi-gpu-*-1c*). On a host with 2+ GPUs, from the repository root:
#   bash bench/probes/ctx-contention/run.sh [RUNS] > OUT.txt
# Each phase runs RUNS (15) fresh probe processes one after another on GPU 0 and prints the median
# of each stage (ms; kernel in us). Nothing here changes any setting of a GPU.
set -uo pipefail
RUNS=${1:-15}
D=$(mktemp -d)
nvcc -O2 -o "$D/probe" "$(dirname "$0")/probe.cu" || exit 2
GPU0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | sed -n 1p)
GPU1=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | sed -n 2p)
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); kernel $(uname -r); GPU0 $GPU0 GPU1 ${GPU1:-none}"
echo "# runtime: $(dmesg 2>/dev/null | head -2 | tr '\n' ' ' | cut -c1-160)"
loop() { # $1 GPU, $2 mode: back-to-back processes until killed
  while :; do CUDA_VISIBLE_DEVICES=$1 "$D/probe" $2 > /dev/null 2>&1; done
}
phase() { # $1 name; runs on GPU 0
  local f="$D/$1.txt" s e
  s=$(date +%s.%N)
  for i in $(seq "$RUNS"); do CUDA_VISIBLE_DEVICES=$GPU0 "$D/probe" >> "$f" || echo "probe failed" >&2; done
  e=$(date +%s.%N)
  python3 - "$f" "$1" "$s" "$e" "$RUNS" <<'PY'
import sys, statistics as st
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
cols = list(zip(*rows)); med = [st.median(c) for c in cols]
wall = (float(sys.argv[4]) - float(sys.argv[3])) * 1000 / int(sys.argv[5])
print(f"{sys.argv[2]:<34} n={len(rows):>3}  process {wall:7.1f} ms  ctx {med[0]:7.1f}  malloc {med[1]:6.2f}  memset {med[2]:6.2f}  kernel {med[3]:7.2f} us  free {med[4]:6.2f}")
PY
}
bg() { "$@" > /dev/null 2>&1 & echo $!; }  # its output not in $(...), which would wait for it
stopbg() { kill "$1" 2>/dev/null; pkill -f "$D/probe" 2>/dev/null; wait "$1" 2>/dev/null; sleep 0.5; }
phase "alone"
if [ -n "$GPU1" ]; then
  p=$(bg loop "$GPU1" ctx); sleep 1; phase "beside contexts on GPU 1"; stopbg "$p"
  p=$(bg loop "$GPU1" ""); sleep 1; phase "beside full probes on GPU 1"; stopbg "$p"
  h=$(bg env CUDA_VISIBLE_DEVICES="$GPU1" "$D/probe" hold); sleep 2
  p=$(bg loop "$GPU1" ctx); sleep 1; phase "beside contexts on GPU 1, GPU 1 held"; stopbg "$p"; kill "$h"; wait "$h" 2>/dev/null
fi
h=$(bg env CUDA_VISIBLE_DEVICES="$GPU0" "$D/probe" hold); sleep 2
phase "alone, GPU 0 held by a sleeper"
if [ -n "$GPU1" ]; then
  h1=$(bg env CUDA_VISIBLE_DEVICES="$GPU1" "$D/probe" hold); sleep 2
  p=$(bg loop "$GPU1" ctx); sleep 1; phase "beside contexts on GPU 1, both held"; stopbg "$p"; kill "$h1"; wait "$h1" 2>/dev/null
fi
kill "$h"; wait "$h" 2>/dev/null
p=$(bg loop "$GPU0" ctx); sleep 1; phase "beside contexts on GPU 0 itself"; stopbg "$p"
rm -rf "$D"
