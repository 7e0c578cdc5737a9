#!/usr/bin/env bash
# Issue 17: the read-only bound under the suite's memset flush (see probe.cu). From the repository
# root, on a machine with an NVIDIA GPU and nvcc:
#   bash bench/probes/reduce-bound/run.sh [REPS] > OUT.txt
# Builds probe.cu once per reduce_sum configuration below (the task's kernel.cu with its -D
# defines) and runs each; every run also times the copy yardstick, CUB and the pure reads.
set -uo pipefail
REPS=${1:-200}
D=$(mktemp -d)
HERE=$(dirname "$0")
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
for cfg in "BLOCK=1024 FINAL=0 GRID_MULT=16 ITEMS=4 LOAD=1 SHUFFLE=1 VEC=4" \
           "BLOCK=1024 FINAL=2 GRID_MULT=16 ITEMS=4 LOAD=1 SHUFFLE=1 VEC=4" \
           "BLOCK=512 FINAL=2 GRID_MULT=8 ITEMS=4 LOAD=2 SHUFFLE=1 VEC=4"; do
  defs=$(for kv in $cfg; do printf -- '-D%s ' "$kv"; done)
  echo "## kd = reduce_sum $cfg"
  # shellcheck disable=SC2086
  nvcc -O3 -arch=native -std=c++17 $defs -o "$D/probe" "$HERE/probe.cu" || { echo "build failed: $cfg"; continue; }
  "$D/probe" "$REPS"
done
rm -rf "$D"
