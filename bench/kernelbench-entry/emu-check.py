#!/usr/bin/env python3
"""CPU emulation check of the KernelBench entry-point baselines in this folder (no GPU needed):
each kernel.cu is built with g++ against scripts/cpu-emu/emu.h for several configurations and small
sizes (some not multiples of the vector width) and compared with a double-precision reference
(emu_driver.cpp). Checks index arithmetic, tails and barriers; not speed.

  python3 bench/kernelbench-entry/emu-check.py
"""
import itertools, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH = re.compile(r'([A-Za-z_][\w:]*)\s*<<<\s*([^,>]+?(?:\([^)]*\))?[^,>]*?)\s*,\s*([^,>]+?)\s*(?:,[^>]*)?>>>\s*\(([^;]*?)\)\s*;')
CASES = {
    '88_MinGPTNewGelu': ('KB_GELU', [{'KB_ROWS': 3, 'KB_COLS': 331}, {'KB_ROWS': 4, 'KB_COLS': 256}], {'BLOCK': [64, 256], 'VEC': [1, 2, 4], 'ITEMS': [1, 4]}),
    '12_Matmul_with_diagonal_matrices_': ('KB_DIAG', [{'KB_N': 7, 'KB_M': 130}, {'KB_N': 16, 'KB_M': 512}], {'BLOCK': [64, 128], 'VEC': [1, 2, 4], 'ROWS': [1, 4]}),
    '40_LayerNorm': ('KB_LN', [{'KB_ROWS': 3, 'KB_D': 4099}, {'KB_ROWS': 2, 'KB_D': 8192}], {'BLOCK': [128, 256], 'CHUNKS': [32, 64], 'VEC': [1, 4]}),
}

def main():
    work = tempfile.mkdtemp(prefix='kd-kb-emu-')
    fails = 0
    for name, (flag, sizes, space) in CASES.items():
        src = open(os.path.join(HERE, name, 'kernel.cu')).read()
        pp, n = LAUNCH.subn(lambda m: f'KD_LAUNCH({m.group(2)}, {m.group(3)}, {m.group(1)}({m.group(4)}));', src)
        if n == 0:
            sys.exit(f'{name}: no launch to rewrite')
        kpath = os.path.join(work, name + '.cu')
        open(kpath, 'w').write(pp)
        keys = list(space)
        for vals in itertools.product(*(space[k] for k in keys)):
            cfg = dict(zip(keys, vals))
            for size in sizes:
                exe = os.path.join(work, 'x')
                defs = [f'-D{k}={v}' for k, v in {**cfg, **size}.items()]
                b = subprocess.run(['g++', '-std=c++17', '-O1', '-w', '-I', os.path.join(HERE, '..', '..', 'scripts', 'cpu-emu', 'include'), f'-D{flag}', f'-DKD_KERNEL="{kpath}"', *defs, os.path.join(HERE, 'emu_driver.cpp'), '-o', exe], capture_output=True, text=True)
                if b.returncode:
                    print(f'{name} {cfg} {size}: BUILD FAILED\n{b.stderr[-2000:]}')
                    fails += 1
                    continue
                r = subprocess.run([exe], capture_output=True, text=True, timeout=600)
                ok = r.returncode == 0
                fails += not ok
                print(f'{"ok  " if ok else "FAIL"} {name} {cfg} {size}: {(r.stdout + r.stderr).strip().splitlines()[-1] if (r.stdout + r.stderr).strip() else r.returncode}')
    print(f'{fails} failed')
    sys.exit(1 if fails else 0)

main()
