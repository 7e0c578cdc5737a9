#!/usr/bin/env python3
"""A small numerical model behind a figure quoted in bench/results/README.md (numpy; no GPU: a model,
not a measurement). The range-of-five model that was here (until 2026-12-02 17:50) is now
`npx tsx bench/spread-sources.ts --sd SD [--goal LIMIT]`, one implementation beside the table it feeds.

  python3 scripts/stat-models.py layernorm-onepass   how often the unshifted one-pass variance
        (E[x^2] - mean^2 in fp32) fails the layernorm task's check on a 5x3 size, rows uniform in
        [-2, 3] as task.yaml fills them, against the shifted one-pass form the kernel uses now
"""
import sys
import numpy as np


def layernorm_onepass(n=2_000_000, seed=1):
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
        return (np.abs(y - ref) > 3e-5 + 1e-4 * np.abs(ref)).any(1).mean()

    inv = f(1) / f(3)
    m = (x.sum(1, dtype=f) * inv).astype(f)
    plain = fails(m, np.maximum((x * x).sum(1, dtype=f) * inv - m * m, 0))
    d = (x - x[:, :1]).astype(f)
    dm = (d.sum(1, dtype=f) * inv).astype(f)
    shifted = fails((x[:, 0] + dm).astype(f), np.maximum((d * d).sum(1, dtype=f) * inv - dm * dm, 0))
    per_check = 1 - (1 - plain) ** 5  # a 5x3 check: five rows
    print(f'rows failing: unshifted {plain:.2e}, shifted {shifted:.2e}; a 5x3 check fails unshifted {per_check:.4f} (1 in {1 / per_check:.0f})')


if __name__ == '__main__':
    if sys.argv[1:2] == ['layernorm-onepass']:
        layernorm_onepass()
    else:
        sys.exit(__doc__)
