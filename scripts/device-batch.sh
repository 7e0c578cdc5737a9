#!/usr/bin/env bash
# One leased GPU machine, several benchmark lanes at once: lane N runs its commands one after the
# other with CUDA_VISIBLE_DEVICES=N (so two single-GPU benchmarks on a two-GPU machine never time
# on the same GPU; KernelDuel's GPU lock would serialise them anyway), then the commands of
# KD_AFTER run with every GPU visible. Detached (setsid), so the work outlasts one command of the
# lease; every command's output goes to $S/res/<lane>-<n>.log and the commands write their results
# into $RES (= $S/res). Run from the repository root with the bundle built (dist-gpu/kernelduel).
#
#   KD_LANE0='cmd;;cmd' KD_LANE1='cmd' KD_AFTER='cmd' scripts/device-batch.sh start
#   scripts/device-batch.sh wait SECONDS     wait until done or SECONDS pass; pack $S/res into $OUT
#                                            (exit 3 at once when no batch was started on this machine).
#                                            Call it with NO carry: a carried path replaces the device's
#                                            copy, so carrying the packed dist-gpu again removes the
#                                            unpacked bundle under the running batch (2026-12-07: every
#                                            command after that point failed, "No such file")
#   scripts/device-batch.sh skip LANE.N [S]  stop command N of a lane (gpu0.3, all.1) once it runs, waiting
#                                            up to S seconds (default 600) for it to start: to give its
#                                            device time to the commands after it. Also with NO carry.
#                                            (A `pkill -f` of the command's words matched the calling
#                                            shell itself on 2026-12-07.)
#   scripts/device-batch.sh pack | unpack    here, before and after a device call: the device tool
#                                            carries at most 64 MiB with the working tree, and a tree
#                                            of ~27 MB, a bundle of ~38 MB and an old bundle for
#                                            measure-truth went past it on 2026-12-07. `pack` moves all of
#                                            the bundle but its runtime and README.txt into
#                                            .kd-carry/bundle.tar.xz (~10 MB of files, ~1.3 MB packed without source maps;
#                                            carry ["dist-gpu", ".kd-carry"]); `start` unpacks it on the
#                                            device, `unpack` puts it back here.
#
# In the commands, $KD is the bundle folder, $RES the results folder, $ROOT the repository.
# Each command is limited to KD_CMD_LIMIT_S seconds (default 600). Nothing here changes clocks or
# settings of the GPU.
set -uo pipefail
S=${KD_SESSION_DIR:-/tmp/kd-batch}
ROOT=$(pwd -P)
export KD="$ROOT/dist-gpu/kernelduel"
export RES="$S/res"
export KERNELDUEL_RUNTIME_DIR=${KERNELDUEL_RUNTIME_DIR:-/tmp/kd}
OUTDIR=${OUT:-$ROOT/device-out}
stamp() { date -u +%FT%TZ; }

lane() { # lane NAME GPU COMMANDS
  local name=$1 gpu=$2 cmds=$3 n=0
  while [ -n "$cmds" ]; do
    local cmd=${cmds%%;;*}
    if [ "$cmd" = "$cmds" ]; then cmds=""; else cmds=${cmds#*;;}; fi
    n=$((n + 1))
    echo "$(stamp) $name.$n start: $cmd"
    # In the background with its pid in $S/<lane>.<n>.pid, so that `skip` can stop it.
    if [ -n "$gpu" ]; then
      (cd "$ROOT" && CUDA_VISIBLE_DEVICES=$gpu exec timeout -k 15 "${KD_CMD_LIMIT_S:-600}" bash -c "$cmd") > "$RES/$name-$n.log" 2>&1 &
    else
      (cd "$ROOT" && exec timeout -k 15 "${KD_CMD_LIMIT_S:-600}" bash -c "$cmd") > "$RES/$name-$n.log" 2>&1 &
    fi
    local pid=$!
    echo "$pid" > "$S/$name.$n.pid"
    wait "$pid"
    local rc=$? # before $(stamp), whose own status would replace it
    rm -f "$S/$name.$n.pid"
    echo "$(stamp) $name.$n exit $rc"
  done
}

work() {
  export ROOT S # the lanes' commands read $ROOT (and $KD, $RES, exported above)
  "$KD/kernelduel" --version > "$RES/version.txt" 2>&1 # unpacks the Node runtime once
  local pids=()
  [ -n "${KD_LANE0:-}" ] && { lane gpu0 0 "$KD_LANE0" & pids+=($!); }
  [ -n "${KD_LANE1:-}" ] && { lane gpu1 1 "$KD_LANE1" & pids+=($!); }
  for p in "${pids[@]}"; do wait "$p"; done
  [ -n "${KD_AFTER:-}" ] && lane all "" "$KD_AFTER"
  echo done > "$S/done"
}

PACKED="$ROOT/.kd-carry/bundle.tar.xz"
unpack() { # the bundle's files that `pack` moved into $PACKED, back in place (once)
  if [ -e "$PACKED" ] && [ ! -e "$KD/lib" ]; then tar xJf "$PACKED" -C "$KD" || { echo "could not unpack $PACKED into $KD" >&2; exit 2; }; fi
}

case ${1:-} in
pack)
  [ -x "$KD/kernelduel" ] || { echo "no bundle at $KD to pack: run node scripts/bundle-gpu.mjs first" >&2; exit 2; }
  mkdir -p "$(dirname "$PACKED")"
  files=$(cd "$KD" && ls -A | grep -v -x -e runtime -e README.txt)
  # shellcheck disable=SC2086 # the bundle's top-level names, none with spaces
  (cd "$KD" && tar cJf "$PACKED" $files) && (cd "$KD" && rm -rf $files) || { echo "pack failed" >&2; exit 2; }
  echo "packed $(echo $files | wc -w) entries of $KD into $PACKED ($(du -h "$PACKED" | cut -f1)); carry [\"dist-gpu\", \".kd-carry\"]; scripts/device-batch.sh unpack puts them back here"
  ;;
unpack)
  unpack
  ;;
start)
  . "$ROOT/scripts/lib-detached.sh"
  unpack
  kd_start_once "$S" "$KD" || exit 0
  [ -x "$KD/kernelduel" ] || { echo "no bundle at $KD: run node scripts/bundle-gpu.mjs first (and carry dist-gpu)" >&2; exit 2; }
  mkdir -p "$RES"
  stamp > "$S/started"
  nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv > "$RES/nvidia-smi.txt" 2>&1
  setsid bash -c "$(declare -f stamp lane work); S='$S' ROOT='$ROOT'; work" >> "$S/session.log" 2>&1 < /dev/null &
  echo started
  ;;
wait)
  . "$ROOT/scripts/lib-detached.sh"
  kd_require_started "$S" || exit 3
  end=$(($(date +%s) + ${2:-60}))
  while [ "$(date +%s)" -lt "$end" ] && [ ! -e "$S/done" ]; do sleep 5; done
  mkdir -p "$OUTDIR"
  cat "$S/session.log"
  for f in "$RES"/*.log; do [ -e "$f" ] && { echo "--- $(basename "$f")"; tail -n 6 "$f"; }; done
  tar czf "$OUTDIR/batch.tgz" -C "$S" . 2>/dev/null
  [ -e "$S/done" ] && echo ALL-DONE
  ;;
skip)
  . "$ROOT/scripts/lib-detached.sh"
  kd_require_started "$S" || exit 3
  id=${2:-}
  [[ $id =~ ^[a-z0-9]+\.[0-9]+$ ]] || { echo "skip: name a lane's command as LANE.N, e.g. gpu0.3 (the session log's names)" >&2; exit 2; }
  end=$(($(date +%s) + ${3:-600}))
  until [ -e "$S/$id.pid" ] || grep -q " $id exit " "$S/session.log" 2>/dev/null || [ -e "$S/done" ] || [ "$(date +%s)" -ge "$end" ]; do sleep 1; done
  if [ -e "$S/$id.pid" ] && kill -TERM "$(cat "$S/$id.pid")" 2>/dev/null; then echo "stopped $id at $(stamp)"; else echo "$id is not running (it is over, or it never started)"; fi
  ;;
*)
  echo "usage: $0 start | wait SECONDS | skip LANE.N [SECONDS] | pack | unpack" >&2
  exit 2
  ;;
esac
