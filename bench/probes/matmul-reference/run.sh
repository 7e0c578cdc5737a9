#!/usr/bin/env bash
# Issue 17: matmul's reference, bit for bit against the plain loop and timed (see probe.cu). From
# the repository root, on a machine with an NVIDIA GPU and nvcc:
#   bash bench/probes/matmul-reference/run.sh [REPS] > OUT.txt
set -uo pipefail
REPS=${1:-5}
D=$(mktemp -d)
HERE=$(dirname "$0")
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | head -1); $(nvcc --version | tail -1)"
nvcc -O3 -arch=native -std=c++17 -o "$D/probe" "$HERE/probe.cu" && "$D/probe" "$REPS"
rc=$?
rm -rf "$D"
exit $rc
