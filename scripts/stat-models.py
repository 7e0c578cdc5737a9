#!/usr/bin/env python3
"""A small numerical model behind a figure quoted in bench/results/README.md (numpy; no GPU: a model,
not a measurement). The range-of-five model that was here (until 2026-12-02 17:50) is now
`npx tsx bench/spread-sources.ts --sd SD [--goal LIMIT]`, one implementation beside the table it feeds.

  python3 scripts/stat-models.py layernorm-onepass   how often the unshifted one-pass variance
        (E[x^2] - mean^2 in fp32) failed the layernorm task's check as it was until b8a51f2 (atol
        3e-5) on a 5x3 size, rows uniform in [-2, 3] as task.yaml fills them, against the shifted
        one-pass form the kernel uses now
  python3 scripts/stat-models.py layernorm-tolerance  the atol each fresh seed's 65536x3 check needs
        (rtol 1e-4 kept) for the baseline's fp32 two-pass statistics, the shifted one-pass form and
        the unshifted one: a correct fp32 kernel must pass the task's tolerance on every seed
"""
import sys
import numpy as np


def layernorm_onepass(n=2_000_000, seed=1, atol=3e-5):
    f = np.float32
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 3, size=(n, 3)).astype(f)
    g = rng.uniform(0.5, 1.5, size=3).astype(f)
    b = rng.uniform(-1, 1, size=3).astype(f)
    xd = x.astype(np.float64)
    md = xd.mean(1)
    vd = ((xd - md[:, None]) ** 2).mean(1)
    ref = (xd - md[:, None]) / np.sqrt(vd + 1e-5)[:, None] * g + b

    def fails(m, var):
        y = (x - m[:, None]) / np.sqrt(var + f(1e-5))[:, None] * g + b
        return (np.abs(y - ref) > atol + 1e-4 * np.abs(ref)).any(1).mean()

    inv = f(1) / f(3)
    m = (x.sum(1, dtype=f) * inv).astype(f)
    plain = fails(m, np.maximum((x * x).sum(1, dtype=f) * inv - m * m, 0))
    d = (x - x[:, :1]).astype(f)
    dm = (d.sum(1, dtype=f) * inv).astype(f)
    shifted = fails((x[:, 0] + dm).astype(f), np.maximum((d * d).sum(1, dtype=f) * inv - dm * dm, 0))
    per_check = 1 - (1 - plain) ** 5  # a 5x3 check: five rows
    print(f'rows failing: unshifted {plain:.2e}, shifted {shifted:.2e}; a 5x3 check fails unshifted {per_check:.4f} (1 in {1 / per_check:.0f})')


def layernorm_tolerance(seeds=2000, rows=65536):
    """For each seed, the smallest atol (with rtol 1e-4) that every element of the 65536x3 size
    passes, for three ways of computing the statistics in fp32 (numpy rounds each operation; the
    GPU may fuse a multiply-add, so this models the arithmetic, it does not replay a kernel)."""
    f = np.float32
    inv = f(1) / f(3)
    need = {'two-pass (baseline)': [], 'shifted one-pass': [], 'unshifted one-pass': []}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        x = rng.uniform(-2, 3, size=(rows, 3)).astype(f)
        g = rng.uniform(0.5, 1.5, size=3).astype(f)
        b = rng.uniform(-1, 1, size=3).astype(f)
        xd = x.astype(np.float64)
        md = xd.mean(1, keepdims=True)
        ref = ((xd - md) / np.sqrt(((xd - md) ** 2).mean(1, keepdims=True) + 1e-5) * g + b).astype(f).astype(np.float64)

        def atol_needed(m, var):
            y = ((x - m[:, None]) * (f(1) / np.sqrt(var + f(1e-5)))[:, None] * g + b).astype(np.float64)
            return float((np.abs(y - ref) - 1e-4 * np.abs(ref)).max())

        m = ((x[:, 0] + x[:, 1] + x[:, 2]) * inv).astype(f)
        dd = x - m[:, None]
        need['two-pass (baseline)'].append(atol_needed(m, ((dd * dd).sum(1, dtype=f) * inv).astype(f)))
        d = x - x[:, :1]
        dm = ((d[:, 1] + d[:, 2]) * inv).astype(f)
        need['shifted one-pass'].append(atol_needed((x[:, 0] + dm).astype(f), np.maximum((d * d).sum(1, dtype=f) * inv - dm * dm, 0)))
        need['unshifted one-pass'].append(atol_needed(m, np.maximum((x * x).sum(1, dtype=f) * inv - m * m, 0)))
    for name, v in need.items():
        v = np.array(v)
        fails = ', '.join(f'{t:g}: {(v > t).mean():.4f}' for t in (3e-5, 1e-4, 2e-4))
        print(f'{name}: atol needed median {np.median(v):.2e}, max over {seeds} seeds {v.max():.2e}; share of seeds failing at atol {fails}')


if __name__ == '__main__':
    if sys.argv[1:2] == ['layernorm-onepass']:
        layernorm_onepass()
    elif sys.argv[1:2] == ['layernorm-tolerance']:
        layernorm_tolerance()
    else:
        sys.exit(__doc__)
