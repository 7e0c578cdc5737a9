#!/usr/bin/env python3
"""KernelDuel's trusted PyTorch reference: runs a KernelBench-style problem file.

A problem file defines `class Model(nn.Module)`, `get_inputs()` (the tensors, and possibly numbers,
of one forward call) and `get_init_inputs()` (the arguments of `Model(...)`); sizes are module-level
constants. This script, for such a file:

  - builds `Model(*get_init_inputs())` on the CPU right after `torch.manual_seed(weights_seed)`
    (default 42, as KernelBench's evaluation does), then moves it to the device, so the weights are
    the same on every device;
  - draws the inputs of a seed from the problem's own `get_inputs()` right after seeding torch,
    `random` and numpy with that seed (so the problem's distributions are kept: positive inputs for
    a log, integer class indices, boolean masks, ...), on the CPU, then moves them to the device:
    the same seed gives the same inputs on every device;
  - runs the forward under `torch.no_grad()`, with the module in the mode it was built in (training
    mode, as KernelBench runs it), after restoring the parameters and buffers as they were built
    (a forward that updates running statistics does not change the next one) and after seeding
    torch again with the seed (a random forward, e.g. dropout, is reproducible per seed);
  - reports the layout (every input, parameter, buffer and output with name, dtype and shape) and,
    on request, writes the raw bytes of the inputs, weights and outputs of a seed to a folder.

Layout order = the CUDA entry point's argument order (docs/TASK-FORMAT.md): the forward's inputs,
then `named_parameters()`, then `named_buffers()`, then the outputs. Every buffer is contiguous and
row-major; a 0-d tensor is one element; bool is stored as one byte per element (0 or 1).

Protocol (kd-reference/1). One-shot commands print one JSON line on stdout and exit 0 (ok) or 1:

  kd_reference.py info                          Python, torch, CUDA (never fails for a missing torch)
  kd_reference.py layout PROBLEM [options]      the layout (options: --via run|meta|scaled, --seed N,
                                                --determinism)
  kd_reference.py run PROBLEM --seed N --out DIR [--write inputs,weights,outputs] [--hash]

Server: `kd_reference.py serve PROBLEM [--device D] [--weights-seed N] [--set NAME=VALUE ...]` loads
the problem, prints one line `{"ready": true, ...}` (or `{"ready": false, "error": {...}}` and exits
1), then answers one JSON object per line read on stdin with exactly one JSON line on stdout:

  {"id": 1, "cmd": "layout", "via": "run"|"meta"|"scaled", "seed": 0, "determinism": false}
  {"id": 2, "cmd": "run", "seed": 7, "out": "/dev/shm/x", "write": ["inputs", "outputs"], "hash": true}
  {"id": 3, "cmd": "info"}
  {"id": 4, "cmd": "quit"}

Answers: `{"id": <as sent>, "ok": true, ...}` or `{"id": ..., "ok": false, "error": {"kind": K,
"message": ..., "traceback": ...}}` with K one of problem (the problem's own code failed),
needs-cuda (it needs CUDA, which this torch or machine lacks), needs-torch (this Python has no
torch), needs-newer-torch (it calls a torch function this torch lacks), no-meta (an operator has no
shape-only implementation: use via "run" or "scaled"), unsupported (a value KernelDuel's
entry points cannot take: a dtype, a list input, ...), oom, protocol (a bad command). Anything the
problem's code prints goes to stderr: stdout carries only answers.
"""

import argparse
import ast
import ctypes
import hashlib
import importlib.util
import json
import os
import platform
import random
import sys
import time
import traceback

PROTOCOL = "kd-reference/1"
DEFAULT_WEIGHTS_SEED = 42

# torch dtype name -> KernelDuel dtype (docs/TASK-FORMAT.md). bool travels as u8 (one byte, 0/1).
KD_DTYPE = {
    "float32": "f32",
    "float64": "f64",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "bool": "u8",
}
CPP_KEYWORDS = set(
    """alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
    char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
    co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
    extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
    nullptr operator or or_eq private protected public register reinterpret_cast requires return
    short signed sizeof static static_assert static_cast struct switch template this thread_local
    throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
    xor xor_eq main""".split()
)


class Fail(Exception):
    """A failure with a kind (see the protocol above)."""

    def __init__(self, kind, message, tb=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.tb = tb


NEEDS_CUDA = (
    "not compiled with cuda",
    "found no nvidia driver",
    "no cuda gpus are available",
    "cuda driver version is insufficient",
    "cuda error",
    "cuda runtime error",
    "torch.cuda.is_available() is false",
)


def classify(exc):
    """The kind of a failure of the problem's own code."""
    if isinstance(exc, Fail):
        return exc.kind
    text = ("%s: %s" % (type(exc).__name__, exc)).lower()
    if "out of memory" in text or "can't allocate memory" in text or "cannot allocate memory" in text or isinstance(exc, MemoryError):
        return "oom"
    if isinstance(exc, NotImplementedError) and "'meta' backend" in text:
        return "no-meta"
    if any(k in text for k in NEEDS_CUDA):
        return "needs-cuda"
    if isinstance(exc, AttributeError) and text.startswith("attributeerror: module 'torch"):
        return "needs-newer-torch"
    return "problem"


def fail_json(exc):
    kind = classify(exc)
    if isinstance(exc, Fail):
        return {"kind": kind, "message": exc.message, **({"traceback": exc.tb} if exc.tb else {})}
    tb = traceback.format_exc(limit=12)
    return {"kind": kind, "message": ("%s: %s" % (type(exc).__name__, exc))[:2000], "traceback": tb[-4000:]}


def info():
    """Python and torch as this interpreter has them; never raises for a missing torch."""
    out = {
        "ok": True,
        "protocol": PROTOCOL,
        "python": platform.python_version(),
        "executable": sys.executable,
        "torch": None,
        "torch_error": None,
        "cuda": False,
        "cuda_version": None,
        "devices": [],
        "numpy": None,
    }
    try:
        import numpy  # noqa: F401

        out["numpy"] = numpy.__version__
    except Exception:  # numpy is optional
        pass
    try:
        import torch
    except Exception as e:  # no torch, or a broken one
        out["torch_error"] = ("%s: %s" % (type(e).__name__, e))[:500]
        return out
    out["torch"] = str(torch.__version__)
    out["cuda_version"] = getattr(torch.version, "cuda", None)
    try:
        out["cuda"] = bool(torch.cuda.is_available())
        if out["cuda"]:
            out["devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except Exception as e:
        out["cuda"] = False
        out["cuda_error"] = ("%s: %s" % (type(e).__name__, e))[:500]
    return out


# ------------------------------------------------------------------------------------------------
# Loading a problem file, with module-level constants overridden


def top_level_constants(tree):
    """Names assigned at the top level of a module by simple `NAME = ...` statements."""
    names = []
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name) and t.id not in names:
                names.append(t.id)
    return names


def apply_overrides(tree, overrides):
    """Rewrites top-level `A = B = expr` so overridden names get their value and the others (and
    constants computed from them further down) follow."""
    body = []
    done = set()
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in overrides for t in node.targets):
            tmp = "_kd_value_%d" % i
            body.append(ast.Assign(targets=[ast.Name(id=tmp, ctx=ast.Store())], value=node.value))
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id in overrides:
                    body.append(ast.Assign(targets=[ast.Name(id=t.id, ctx=ast.Store())], value=ast.Constant(overrides[t.id])))
                    done.add(t.id)
                else:
                    body.append(ast.Assign(targets=[t], value=ast.Name(id=tmp, ctx=ast.Load())))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in overrides and node.value is not None:
            body.append(ast.Assign(targets=[ast.Name(id=node.target.id, ctx=ast.Store())], value=ast.Constant(overrides[node.target.id])))
            done.add(node.target.id)
        else:
            body.append(node)
    tree.body = body
    ast.fix_missing_locations(tree)
    return done


def json_value(v):
    """A JSON form of an init input or constant (numbers, strings, tuples of them); repr otherwise."""
    if v is None or isinstance(v, (bool, int, float, str)):
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            return repr(v)
        return v
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    return repr(v)


class Problem:
    def __init__(self, path, device="cpu", weights_seed=DEFAULT_WEIGHTS_SEED, overrides=None, model_class="Model", inputs_on_device=False):
        import torch

        self.torch = torch
        self.path = os.path.abspath(path)
        self.device = device
        self.weights_seed = int(weights_seed)
        self.overrides = dict(overrides or {})
        self.model_class = model_class
        self.inputs_on_device = bool(inputs_on_device)
        self.model = None
        self.meta_model = None
        self.pristine = None
        if device.startswith("cuda"):
            if not torch.cuda.is_available():
                raise Fail("needs-cuda", "--device %s: torch %s here has no usable CUDA (torch.cuda.is_available() is False)" % (device, torch.__version__))
            # The reference is computed in full fp32: no TF32 in matmuls or convolutions.
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        try:
            with open(self.path, "r", encoding="utf-8") as f:
                source = f.read()
        except OSError as e:
            raise Fail("problem", "cannot read %s: %s" % (self.path, e))
        try:
            tree = ast.parse(source, filename=self.path)
        except SyntaxError as e:
            raise Fail("problem", "%s is not valid Python: %s (line %s)" % (self.path, e.msg, e.lineno))
        names = top_level_constants(tree)
        unknown = [k for k in self.overrides if k not in names]
        if unknown:
            raise Fail(
                "problem",
                "%s: %s %s not a module-level constant of the problem (its constants: %s)"
                % (os.path.basename(self.path), ", ".join(unknown), "is" if len(unknown) == 1 else "are", ", ".join(names) or "none"),
            )
        apply_overrides(tree, self.overrides)
        spec = importlib.util.spec_from_file_location("kd_problem", self.path)
        mod = importlib.util.module_from_spec(spec)
        mod.__file__ = self.path
        sys.modules["kd_problem"] = mod
        try:
            exec(compile(tree, self.path, "exec"), mod.__dict__)
        except Exception as e:
            raise Fail(classify(e), "%s failed to load: %s: %s" % (os.path.basename(self.path), type(e).__name__, e), traceback.format_exc(limit=8)[-4000:])
        missing = [n for n in (model_class, "get_inputs", "get_init_inputs") if not hasattr(mod, n)]
        if missing:
            raise Fail("problem", "%s does not define %s (a problem file defines class %s, get_inputs() and get_init_inputs())" % (os.path.basename(self.path), ", ".join(missing), model_class))
        self.mod = mod
        self.constants = {}
        for n in names:
            v = getattr(mod, n, None)
            if isinstance(v, (bool, int, float)) or (isinstance(v, tuple) and all(isinstance(x, (int, float)) for x in v)):
                self.constants[n] = json_value(v)

    # -- seeding and building ------------------------------------------------------------------

    def seed_all(self, seed):
        self.torch.manual_seed(seed)
        random.seed(seed)
        try:
            import numpy

            numpy.random.seed(seed % (2**32))
        except Exception:
            pass

    def factory_mode(self, device):
        """A torch function mode that puts tensors made by factory functions (torch.rand, zeros,
        ...) on `device` when they did not name one: shapes without memory on 'meta'."""
        torch = self.torch
        from torch.overrides import TorchFunctionMode

        factories = set()
        for n in ("rand", "randn", "randint", "zeros", "ones", "empty", "full", "tensor", "arange", "linspace", "eye", "randperm", "as_tensor", "empty_strided", "normal", "logspace"):
            f = getattr(torch, n, None)
            if f is not None:
                factories.add(f)

        class Place(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = dict(kwargs or {})
                if func in factories and kwargs.get("device") in (None, "cpu") and not (func is torch.normal and args and isinstance(args[0], torch.Tensor)):
                    kwargs["device"] = device
                return func(*args, **kwargs)

        return Place()

    def init_inputs(self):
        v = self.mod.get_init_inputs()
        if not isinstance(v, (list, tuple)):
            raise Fail("problem", "get_init_inputs() returned %s, not a list" % type(v).__name__)
        return list(v)

    def build(self, via):
        """The model for `via` ('run': on the device, 'meta': shapes only); built once."""
        torch = self.torch
        if via == "meta":
            if self.meta_model is None:
                self.seed_all(self.weights_seed)
                try:
                    with self.factory_mode("meta"):
                        m = getattr(self.mod, self.model_class)(*self.init_inputs())
                    m = m.to("meta")
                except Fail:
                    raise
                except Exception:
                    # Some modules compute with their tensors while they are built: build on the CPU.
                    self.seed_all(self.weights_seed)
                    m = getattr(self.mod, self.model_class)(*self.init_inputs()).to("meta")
                self.meta_model = m
            return self.meta_model
        if self.model is None:
            self.seed_all(self.weights_seed)
            m = getattr(self.mod, self.model_class)(*self.init_inputs())
            if not isinstance(m, torch.nn.Module):
                raise Fail("problem", "%s(...) is not a torch.nn.Module" % self.model_class)
            m = m.to(self.device)
            self.model = m
            self.pristine = {k: v.detach().clone() for k, v in m.state_dict(keep_vars=True).items()}
        return self.model

    def restore(self):
        """Parameters and buffers back to their values as built (a forward may update buffers)."""
        if self.pristine is None:
            return
        with self.torch.no_grad():
            for k, v in self.model.state_dict(keep_vars=True).items():
                p = self.pristine.get(k)
                if p is not None and v.shape == p.shape:
                    v.copy_(p)

    def inputs(self, seed, via):
        torch = self.torch
        self.seed_all(seed)
        if via == "meta":
            with self.factory_mode("meta"):
                xs = self.mod.get_inputs()
        elif self.inputs_on_device and self.device != "cpu":
            with self.factory_mode(self.device):
                xs = self.mod.get_inputs()
        else:
            xs = self.mod.get_inputs()
        if not isinstance(xs, (list, tuple)):
            raise Fail("problem", "get_inputs() returned %s, not a list" % type(xs).__name__)
        dev = "meta" if via == "meta" else self.device
        out = []
        for i, x in enumerate(xs):
            if isinstance(x, torch.Tensor):
                out.append(x.to(dev))
            elif isinstance(x, (bool, int, float)):
                out.append(x)
            else:
                raise Fail("unsupported", "get_inputs()[%d] is a %s: a KernelDuel entry point takes tensors and numbers" % (i, type(x).__name__))
        return out

    def forward(self, model, xs, seed, via):
        torch = self.torch
        if via != "meta":
            self.restore()
        torch.manual_seed(seed)
        with torch.no_grad():
            y = model(*xs)
        if isinstance(y, torch.Tensor):
            return [y]
        if isinstance(y, (list, tuple)) and all(isinstance(t, torch.Tensor) for t in y):
            return list(y)
        raise Fail("unsupported", "forward returned %s: KernelDuel needs a tensor or a tuple of tensors" % type(y).__name__)

    # -- layout --------------------------------------------------------------------------------

    def forward_arg_names(self, model, n):
        import inspect

        try:
            params = list(inspect.signature(model.forward).parameters.values())
        except (TypeError, ValueError):
            params = []
        names = []
        for i in range(n):
            p = params[i] if i < len(params) else None
            if p is not None and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                names.append(p.name)
            else:
                names.append("in%d" % i)
        return names

    def arguments(self, model, xs, ys):
        """The entry point's arguments in order: (name, torch_name, source, index, value, role).
        Names are C identifiers, unique, from the forward's parameter names and the module's."""
        torch = self.torch
        used = set()

        def cname(raw):
            s = "".join(c if (c.isalnum() or c == "_") else "_" for c in raw) or "arg"
            if s[0].isdigit():
                s = "_" + s
            if s in CPP_KEYWORDS:
                s = s + "_"
            base, k = s, 2
            while s in used:
                s = "%s_%d" % (base, k)
                k += 1
            used.add(s)
            return s

        out = []
        in_names = self.forward_arg_names(model, len(xs))
        for i, x in enumerate(xs):
            out.append((cname(in_names[i]), in_names[i], "input", i, x, "in"))
        for n, p in model.named_parameters():
            out.append((cname(n), n, "parameter", None, p, "in"))
        for n, b in model.named_buffers():
            out.append((cname(n), n, "buffer", None, b, "in"))
        names_out = ["out"] if len(ys) == 1 else ["out%d" % i for i in range(len(ys))]
        for i, y in enumerate(ys):
            out.append((cname(names_out[i]), names_out[i], "output", i, y, "out"))
        return out

    def describe(self, arg, notes):
        """One argument of the layout: name, source, dtype (KernelDuel's and torch's), shape, bytes."""
        torch = self.torch
        name, torch_name, source, index, v, role = arg
        e = {"name": name, "torch_name": torch_name, "source": source}
        if index is not None:
            e["index"] = index
        if isinstance(v, torch.Tensor):
            tname = str(v.dtype).replace("torch.", "")
            kd = KD_DTYPE.get(tname)
            if kd is None:
                notes.append("%s %s is %s: KernelDuel's dtypes are f32 f64 i32 i64 u8 (and bool as u8)" % (source, torch_name, tname))
            elements = 1
            for d in v.shape:
                elements *= d
            e.update({"kind": "tensor", "role": role, "torch_dtype": tname, "dtype": kd, "shape": list(v.shape), "elements": elements, "bytes": elements * v.element_size()})
        else:
            # A Python number meets float32 tensors as a float32, integers stay int64 (as torch does).
            kd = "u8" if isinstance(v, bool) else ("i64" if isinstance(v, int) else "f32")
            e.update({"kind": "scalar", "role": role, "torch_dtype": type(v).__name__, "dtype": kd, "shape": [], "value": json_value(v)})
        return e

    def random_modules(self, model):
        """Submodules whose forward is random as the module runs (dropout in training mode)."""
        torch = self.torch
        out = []
        for n, m in model.named_modules():
            p = getattr(m, "p", 0)
            if isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.training and p:
                out.append("%s (%s, p=%s)" % (n or "(the model)", type(m).__name__, p))
        return out

    def layout(self, seed=0, via="run", determinism=False):
        torch = self.torch
        if via not in ("run", "meta"):
            raise Fail("protocol", 'via must be "run" or "meta", not %r' % (via,))
        t0 = time.time()
        model = self.build(via)
        t1 = time.time()
        xs = self.inputs(seed, via)
        t2 = time.time()
        ys = self.forward(model, xs, seed, via)
        if via != "meta" and self.device.startswith("cuda"):
            torch.cuda.synchronize()
        t3 = time.time()
        notes = []
        args = [self.describe(a, notes) for a in self.arguments(model, xs, ys)]
        result = {
            "ok": True,
            "problem": self.path,
            "via": via,
            "device": "meta" if via == "meta" else self.device,
            "seed": seed,
            "weights_seed": self.weights_seed,
            "model_class": self.model_class,
            "overrides": self.overrides,
            "constants": self.constants,
            "init_inputs": json_value(self.init_inputs()),
            "training": bool(model.training),
            "random_modules": self.random_modules(model),
            "args": args,
            "bytes": sum(a.get("bytes", 0) for a in args),
            "seconds": {"build": round(t1 - t0, 4), "inputs": round(t2 - t1, 4), "forward": round(t3 - t2, 4)},
            "notes": notes,
        }
        if via != "meta":
            result["output_stats"] = [self.stats(y) for y in ys]
            if determinism:
                again = self.forward(model, xs, seed + 1, via)
                result["random_forward"] = not all(torch.equal(a, b) for a, b in zip(ys, again))
        return result

    def scaled_layout(self, seed=0, constant=None, points=(1, 2)):
        """The layout at the problem's own sizes, found by running it for real on this device with
        one module-level constant (default batch_size) set to small values and extrapolating every
        dimension linearly in it. For problems too big to run here whose operators have no shape-only
        (meta) implementation. Assumes each dimension is linear in that constant; says so."""
        if constant is None:
            constant = next((c for c in ("batch_size", "batch", "B", "N") if isinstance(self.constants.get(c), int)), None)
        if constant is None or not isinstance(self.constants.get(constant), int) or isinstance(self.constants.get(constant), bool):
            raise Fail("unsupported", "no integer module-level constant %sto scale (constants: %s)" % ("%s " % constant if constant else "", ", ".join(self.constants) or "none"))
        full = self.constants[constant]
        small = []
        for v in points:
            p = Problem(self.path, device=self.device, weights_seed=self.weights_seed, overrides={**self.overrides, constant: v}, model_class=self.model_class, inputs_on_device=self.inputs_on_device)
            small.append(p.layout(seed=seed, via="run"))
        a, b = small
        (x1, x2) = points
        if [(e["name"], e["dtype"], len(e["shape"])) for e in a["args"]] != [(e["name"], e["dtype"], len(e["shape"])) for e in b["args"]]:
            raise Fail("unsupported", "the arguments differ between %s=%d and %s=%d: cannot extrapolate" % (constant, x1, constant, x2))
        args = []
        for ea, eb in zip(a["args"], b["args"]):
            e = dict(ea)
            if e["kind"] == "tensor":
                shape = []
                for d1, d2 in zip(ea["shape"], eb["shape"]):
                    slope = (d2 - d1) / (x2 - x1)
                    shape.append(int(round(d1 + slope * (full - x1))))
                e["shape"] = shape
                elements = 1
                for d in shape:
                    elements *= d
                e["bytes"] = elements * (ea["bytes"] // ea["elements"] if ea["elements"] else 0)
                e["elements"] = elements
            args.append(e)
        res = dict(a)
        res.update({
            "via": "scaled",
            "device": self.device,
            "overrides": self.overrides,
            "constants": self.constants,
            "init_inputs": json_value(self.init_inputs()),
            "args": args,
            "bytes": sum(e.get("bytes", 0) for e in args),
            "scaled": {"constant": constant, "points": list(points), "value": full},
            "notes": a["notes"] + ["shapes extrapolated linearly from real runs with %s = %s (the problem has %s = %d)" % (constant, " and ".join(str(x) for x in points), constant, full)],
        })
        res.pop("output_stats", None)
        return res

    def stats(self, t):
        torch = self.torch
        if t.numel() == 0:
            return {"elements": 0}
        if t.dtype.is_floating_point:
            f = t.detach().double()
            finite = torch.isfinite(f)
            s = {"elements": t.numel(), "nonfinite": int((~finite).sum().item())}
            fv = f[finite]
            if fv.numel():
                s.update({"min": float(fv.min().item()), "max": float(fv.max().item()), "mean": float(fv.mean().item()), "std": float(fv.std(unbiased=False).item())})
            return s
        i = t.detach().long()
        return {"elements": t.numel(), "min": int(i.min().item()), "max": int(i.max().item())}

    # -- raw bytes -----------------------------------------------------------------------------

    def run(self, seed, out=None, write=("inputs", "outputs"), want_hash=False):
        """Computes the reference for a seed; writes `<out>/<source>.<name>.bin` for the groups in
        `write` (inputs, weights = parameters and buffers, outputs), raw, contiguous, row-major."""
        torch = self.torch
        write = list(write)
        for w in write:
            if w not in ("inputs", "weights", "outputs"):
                raise Fail("protocol", 'write: %r is not one of "inputs", "weights", "outputs"' % (w,))
        if write and not out:
            raise Fail("protocol", "run: give out (a folder) to write %s to" % ", ".join(write))
        t0 = time.time()
        model = self.build("run")
        t1 = time.time()
        xs = self.inputs(seed, "run")
        t2 = time.time()
        ys = self.forward(model, xs, seed, "run")
        if self.device.startswith("cuda"):
            torch.cuda.synchronize()
        t3 = time.time()
        self.restore()  # the weights written are those the forward was given, not what it updated
        group = {"input": "inputs", "parameter": "weights", "buffer": "weights", "output": "outputs"}
        if out and write:
            os.makedirs(out, exist_ok=True)
        files = []
        for arg in self.arguments(model, xs, ys):
            name, torch_name, source, index, v, role = arg
            do_write = group[source] in write
            if not (do_write or (want_hash and source != "parameter" and source != "buffer")):
                continue
            e = self.describe(arg, [])
            if isinstance(v, torch.Tensor):
                c = v.detach().to("cpu").contiguous().reshape(-1)
            else:
                c = torch.tensor([v], dtype={"u8": torch.uint8, "i64": torch.int64, "f32": torch.float32}[e["dtype"]])
            if c.dtype == torch.bool:
                c = c.to(torch.uint8)
            nbytes = c.numel() * c.element_size()
            view = memoryview((ctypes.c_char * nbytes).from_address(c.data_ptr())) if nbytes else b""
            e["bytes"] = nbytes
            if do_write:
                e["path"] = os.path.join(out, "%s.%s.bin" % (source, name))
                with open(e["path"], "wb") as f:
                    f.write(view)
            if want_hash:
                e["sha256"] = hashlib.sha256(view).hexdigest()
            files.append(e)
        return {
            "ok": True,
            "seed": seed,
            "device": self.device,
            "files": files,
            "output_stats": [self.stats(y) for y in ys],
            "seconds": {"build": round(t1 - t0, 4), "inputs": round(t2 - t1, 4), "forward": round(t3 - t2, 4)},
        }


# ------------------------------------------------------------------------------------------------
# Command line and server


def parse_set(values):
    out = {}
    for kv in values or []:
        if "=" not in kv:
            raise Fail("protocol", "--set %s: expected NAME=VALUE" % kv)
        k, v = kv.split("=", 1)
        try:
            out[k.strip()] = int(v)
        except ValueError:
            try:
                out[k.strip()] = float(v)
            except ValueError:
                raise Fail("protocol", "--set %s: the value must be a number" % kv)
    return out


def problem_from_args(a):
    return Problem(a.problem, device=a.device, weights_seed=a.weights_seed, overrides=parse_set(a.set), model_class=a.model_class, inputs_on_device=a.inputs_on_device)


def answer(problem, req):
    cmd = req.get("cmd")
    if cmd == "info":
        return info()
    if cmd == "layout":
        if req.get("via") == "scaled":
            return problem.scaled_layout(seed=int(req.get("seed", 0)), constant=req.get("constant"))
        return problem.layout(seed=int(req.get("seed", 0)), via=req.get("via", "run"), determinism=bool(req.get("determinism", False)))
    if cmd == "run":
        if "seed" not in req:
            raise Fail("protocol", "run needs a seed")
        return problem.run(int(req["seed"]), out=req.get("out"), write=req.get("write", ["inputs", "outputs"] if req.get("out") else []), want_hash=bool(req.get("hash", False)))
    raise Fail("protocol", "unknown command %r (commands: info, layout, run, quit)" % (cmd,))


def protocol_stdout():
    """The real stdout for answers; file descriptor 1 then points at stderr, so that whatever the
    problem's code prints (from Python or C) cannot corrupt the protocol."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", buffering=1, encoding="utf-8")


def emit(stream, obj):
    stream.write(json.dumps(obj, allow_nan=False, default=str) + "\n")
    stream.flush()


def serve(a, out):
    try:
        problem = problem_from_args(a)
    except Exception as e:
        emit(out, {"ready": False, "protocol": PROTOCOL, "error": fail_json(e)})
        return 1
    import torch

    emit(out, {
        "ready": True,
        "protocol": PROTOCOL,
        "pid": os.getpid(),
        "problem": problem.path,
        "device": problem.device,
        "weights_seed": problem.weights_seed,
        "torch": str(torch.__version__),
        "cuda": bool(torch.cuda.is_available()),
        "tf32": False if problem.device.startswith("cuda") else None,
        "constants": problem.constants,
        "overrides": problem.overrides,
    })
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        rid = None
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise Fail("protocol", "a command is a JSON object")
            rid = req.get("id")
            if req.get("cmd") == "quit":
                emit(out, {"id": rid, "ok": True})
                return 0
            res = answer(problem, req)
        except Exception as e:
            if isinstance(e, json.JSONDecodeError):
                e = Fail("protocol", "not JSON: %s" % e)
            res = {"ok": False, "error": fail_json(e)}
        res["id"] = rid
        try:
            emit(out, res)
        except ValueError:  # a NaN/inf slipped into an answer: say so instead of dying
            emit(out, {"id": rid, "ok": False, "error": {"kind": "protocol", "message": "the answer could not be written as JSON"}})
    return 0


def main(argv):
    p = argparse.ArgumentParser(prog="kd_reference.py", description="KernelDuel's trusted PyTorch reference (protocol %s)" % PROTOCOL)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="Python, torch and CUDA as this interpreter has them")
    for name in ("layout", "run", "serve"):
        s = sub.add_parser(name)
        s.add_argument("problem")
        s.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
        s.add_argument("--weights-seed", type=int, default=DEFAULT_WEIGHTS_SEED)
        s.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a module-level constant (repeatable)")
        s.add_argument("--model-class", default="Model")
        s.add_argument("--inputs-on-device", action="store_true", help="draw inputs on the device (faster; different values than on the CPU)")
        s.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: torch's own)")
        if name == "layout":
            s.add_argument("--via", default="run", choices=["run", "meta", "scaled"])
            s.add_argument("--constant", help="with --via scaled: the constant to scale (default batch_size)")
            s.add_argument("--seed", type=int, default=0)
            s.add_argument("--determinism", action="store_true", help="run the forward twice and say whether it is random")
        if name == "run":
            s.add_argument("--seed", type=int, required=True)
            s.add_argument("--out")
            s.add_argument("--write", default="inputs,outputs")
            s.add_argument("--hash", action="store_true")
    a = p.parse_args(argv)
    out = protocol_stdout()
    if a.command == "info":
        emit(out, info())
        return 0
    try:
        import torch

        if a.threads:
            torch.set_num_threads(a.threads)
    except Exception as e:
        err = {"kind": "needs-torch", "message": "torch cannot be imported by %s: %s: %s" % (sys.executable, type(e).__name__, e)}
        emit(out, {"ready": False, "protocol": PROTOCOL, "error": err} if a.command == "serve" else {"ok": False, "error": err})
        return 1
    if a.command == "serve":
        return serve(a, out)
    try:
        problem = problem_from_args(a)
        if a.command == "layout":
            res = problem.scaled_layout(seed=a.seed, constant=a.constant) if a.via == "scaled" else problem.layout(seed=a.seed, via=a.via, determinism=a.determinism)
        else:
            write = [w for w in a.write.split(",") if w] if a.out else []
            res = problem.run(a.seed, out=a.out, write=write, want_hash=a.hash)
    except Exception as e:
        res = {"ok": False, "error": fail_json(e)}
    emit(out, res)
    return 0 if res.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
