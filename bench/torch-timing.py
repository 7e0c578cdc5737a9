#!/usr/bin/env python3
"""PyTorch's time for each suite task (issue 17), measured the way KernelDuel's harness measures a
variant (resources/harness/kd_exec.h, kd_judge.h): before every call, timed or not, L2 is flushed by
a memset of a buffer 4x the L2 size (at least 64 MiB) and the device synchronised; the call is
timed with CUDA events, behind a gate (a ~1 ms torch.cuda._sleep queued before the start event, so the
GPU waits until Python has queued the whole call: the events time the GPU, not Python's launch
latency, as the harness's gate kernel does); warm-up for 50 ms and at least 3 calls; then samples until the 95%
confidence interval of the median is within +-0.25% (at least 10 samples and 100 ms, at most 3 s of
samples); the median is reported. (KernelDuel's timed calls also rotate over 4 sets of buffers;
PyTorch's use the one set of tensors made here.) fp32 throughout, TF32 off for matrix products.
With "flushClean": 1 in the spec (the harness's plan line `flushclean 1`), a clean buffer of half the
flush's size is read after the memset, so the dirty lines the memset leaves in L2 are written back
before the timed call, not during it (on the H200 they cost ~8-9 us of every time:
bench/results/h200-timing-flush-7fcdb26.md).

  python3 bench/torch-timing.py '<json: {"tasks": [{"task": "softmax", "size": {"rows": 8192, "cols": 8192}}, ...]}>'

Prints one JSON object: {"torch": version, "cuda": version, "gpu": name, "results": [...]}; a task
whose operation fails gets {"task", "error"} instead of a time. Run by bench/vs-pytorch.ts.
"""
import json
import math
import sys
import time

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.set_float32_matmul_precision("highest")

WARMUP_MS, MIN_SAMPLES, MAX_SAMPLES, TARGET_REL, MIN_MS, MAX_MS = 50.0, 10, 5000, 0.0025, 100.0, 3000.0  # as DEFAULT_TIMING
GATE_CYCLES = 2_000_000  # ~1 ms at the H200's 1.98 GHz
HAS_GATE = hasattr(torch.cuda, "_sleep")


def median_noise(v):
    """Median and relative half-width of its 95% CI (order statistics), as kd_buffers.h median_noise."""
    v = sorted(v)
    n = len(v)
    med = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    h = 0.98 * math.sqrt(n)
    lo = max(0, math.floor(n / 2.0 - h))
    hi = min(n - 1, math.ceil(n / 2.0 + h))
    return med, ((v[hi] - v[lo]) / (2 * med) if med > 0 else math.inf)


def make(task, s, dev):
    g = torch.Generator(device=dev).manual_seed(1)

    def uni(shape, lo, hi):
        t = torch.rand(shape, generator=g, device=dev, dtype=torch.float32) * (hi - lo) + lo
        return torch.where(t == 0, torch.full_like(t, (lo + hi) / 2 or 0.5), t)

    if task == "softmax":
        x = uni((s["rows"], s["cols"]), -4, 4)
        return "torch.softmax(x, dim=-1)", lambda: torch.softmax(x, dim=-1)
    if task == "layernorm":
        x = uni((s["rows"], s["cols"]), -2, 3)
        w = uni((s["cols"],), 0.5, 1.5)
        b = uni((s["cols"],), -1, 1)
        return "torch.nn.functional.layer_norm(x, (cols,), weight, bias, eps=1e-5)", lambda: torch.nn.functional.layer_norm(x, (s["cols"],), w, b, 1e-5)
    if task == "transpose":
        x = uni((s["rows"], s["cols"]), -1, 1)
        return "x.t().contiguous()", lambda: x.t().contiguous()
    if task == "reduce_sum":
        x = uni((s["n"],), -1, 1)
        return "x.sum()", lambda: x.sum()
    if task == "matmul":
        a = uni((s["M"], s["K"]), -1, 1)
        b = uni((s["K"], s["N"]), -1, 1)
        return "torch.matmul(A, B) (allow_tf32=False)", lambda: torch.matmul(a, b)
    raise ValueError(f"no PyTorch operation for task {task!r}")


def time_op(fn, flush, ev0, ev1, clean=None):
    flips = [0]

    def one(timed):
        flush.fill_(flips[0] & 1)
        flips[0] += 1
        if clean is not None:
            clean.sum()  # reads every byte through L2 (the result is dropped; the read is not)
        torch.cuda.synchronize()
        if not timed:
            fn()
            torch.cuda.synchronize()
            return 0.0
        if HAS_GATE:
            torch.cuda._sleep(GATE_CYCLES)
        ev0.record()
        fn()
        ev1.record()
        torch.cuda.synchronize()
        return ev0.elapsed_time(ev1)

    w0, warm = time.monotonic(), 0
    while (time.monotonic() - w0) * 1000 < WARMUP_MS or warm < 3:
        one(False)
        warm += 1
    samples, t0 = [], time.monotonic()
    while True:
        samples.append(one(True))
        el = (time.monotonic() - t0) * 1000
        if (len(samples) >= MIN_SAMPLES and el >= MIN_MS) or len(samples) >= MAX_SAMPLES:
            med, noise = median_noise(samples)
            if noise <= TARGET_REL or el >= MAX_MS or len(samples) >= MAX_SAMPLES:
                return {"medianMs": med, "relNoise": noise, "samples": len(samples), "warmupCalls": warm, "converged": noise <= TARGET_REL}


def main():
    spec = json.loads(sys.argv[1])
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 0) or 0
    flush_bytes = max(64 << 20, 4 * l2)
    flush = torch.empty(flush_bytes, dtype=torch.uint8, device=dev)
    flush_clean = int(spec.get("flushClean", 0))
    if flush_clean not in (0, 1):
        raise SystemExit(f"flushClean must be 0 or 1 (got {flush_clean!r})")
    # int32 so that sum() reads it with wide loads; zeros, as the harness's clean buffer.
    clean = torch.zeros(flush_bytes // 8, dtype=torch.int32, device=dev) if flush_clean else None
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": props.name, "l2FlushBytes": flush_bytes, "flushClean": flush_clean,
           "tf32": {"matmul": torch.backends.cuda.matmul.allow_tf32, "cudnn": torch.backends.cudnn.allow_tf32},
           "gate": f"torch.cuda._sleep({GATE_CYCLES}) before the start event" if HAS_GATE else "none (this torch has no torch.cuda._sleep): Python's launch latency may be in the times",
           "results": []}
    for t in spec["tasks"]:
        try:
            op, fn = make(t["task"], t["size"], dev)
            r = time_op(fn, flush, ev0, ev1, clean)
            out["results"].append({"task": t["task"], "op": op, **r})
        except Exception as e:  # one failing operation does not lose the others
            out["results"].append({"task": t["task"], "error": f"{type(e).__name__}: {e}"})
        torch.cuda.empty_cache()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
