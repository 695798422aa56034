"""A CPU stand-in for the part of cupy that kernels/test/gpu_*.py use, for dry runs of the GPU
harness on machines without a GPU (kernels/test/emu/dryrun.py). Arrays are numpy arrays (an
ndarray subclass with .get()); RawModule(path=<build>/<module>.<arch>.cubin) loads that
module's CPU emulation (kernels/test/emu/cuda_emu.h), built on first use as a shared object
under kernels/test/emu/build/so; kernels run through its wf_emu_launch (libffi). Slow (every
CUDA thread is a fiber): for small sizes. Not a cupy replacement anywhere else."""
import ctypes
import hashlib
import os
import re
import subprocess
import threading
import time

import numpy as np

from . import fft, linalg  # noqa: F401  (cp.fft, cp.linalg)

HERE = os.path.dirname(os.path.abspath(__file__))
EMU = os.path.dirname(os.path.dirname(HERE))  # kernels/test/emu
KERNELS = os.path.abspath(os.path.join(EMU, "..", ".."))
SO_DIR = os.path.join(EMU, "build", "so")

float32, float64, complex64, complex128 = np.float32, np.float64, np.complex64, np.complex128
int32, int64, uint32, uint64, uint8 = np.int32, np.int64, np.uint32, np.uint64, np.uint8


class ndarray(np.ndarray):
    def get(self):
        return np.array(self)


def _w(a):
    return np.asarray(a).view(ndarray)


def asarray(a, dtype=None):
    return _w(np.array(a, dtype=dtype))


def asnumpy(a):
    return np.array(a)


def empty(shape, dtype=float):
    return _w(np.empty(shape, dtype))


def zeros(shape, dtype=float):
    return _w(np.zeros(shape, dtype))


def full(shape, v, dtype=None):
    return _w(np.full(shape, v, dtype))


def empty_like(a):
    return _w(np.empty_like(a))


def array_equal(a, b):
    return np.array_equal(a, b)


class _Pool:
    def free_all_blocks(self):
        pass


def get_default_memory_pool():
    return _Pool()


# ---------------------------------------------------------------- cuda
class _Event:
    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass


class _Runtime:
    @staticmethod
    def deviceSynchronize():
        pass


class cuda:  # noqa: N801  (cp.cuda.Event, cp.cuda.runtime, cp.cuda.get_elapsed_time)
    Event = _Event
    runtime = _Runtime

    @staticmethod
    def get_elapsed_time(a, b):
        return (b.t - a.t) * 1e3


# ---------------------------------------------------------------- modules
def _module_build(name):
    """(source, defines) of a module: kernels/check.sh's table."""
    p = name.split("_")
    if name in ("sort", "scan_big", "sort_stable"):
        return f"{name}.cu", []
    if p[0] in ("bin", "deconvolve", "amplify"):
        return "prep.cu", [f"-DWF_DIM={p[1][0]}", f"-DWF_PREC={p[2][1:]}",
                           f"-DWF_PREP_PART=WF_PREP_{p[0].upper()}"]
    if p[0] in ("direct", "type3"):
        return f"{p[0]}.cu", [f"-DWF_PREC={p[1][1:]}"]
    if p[0] == "si":  # si_{d}d_{p}_w{w}_{part}_{method}, read back and checked against the rule
        d, prec, w, part, method = int(p[1][0]), p[2], int(p[3][1:]), p[4], p[5]
        with open(os.path.join(KERNELS, "module_names.h")) as f:
            fmt = re.search(r'#define WF_SI_MODULE_FMT\s+"([^"]+)"', f.read()).group(1)
        if fmt % (d, prec, w, part, method) != name:
            raise ValueError(f"{name}: kernels/module_names.h names modules differently now "
                             "(update this reading of the name)")
        real = prec.endswith("r")  # f32r / f64r: the real-valued module (-DWF_REAL=1)
        return "spreadinterp.cu", [
            f"-DWF_DIM={d}", f"-DWF_PREC={prec[1:].rstrip('r')}", f"-DWF_W={w}",
            f"-DWF_SI_PART=WF_SI_{part.upper()}", f"-DWF_SI_METHOD=WF_SI_{method.upper()}"] + (
            ["-DWF_REAL=1"] if real else [])
    raise ValueError(f"unknown module {name}")


_lock = threading.Lock()
_objs = {}


def _obj(src):
    """A shared object file of the scheduler or the launcher, compiled once."""
    o = os.path.join(SO_DIR, os.path.basename(src).replace(".cpp", ".pic.o"))
    s = os.path.join(EMU, src)
    if not os.path.exists(o) or os.path.getmtime(o) < max(
            os.path.getmtime(s), os.path.getmtime(os.path.join(EMU, "cuda_emu.h"))):
        subprocess.check_call(["g++"] + FLAGS + ["-c", s, "-o", o])
    return o


FLAGS = ["-std=c++20", "-O1", "-fPIC", "-w", "-ffp-contract=off", f"-I{KERNELS}", f"-I{EMU}"]


def build(name, extra=""):
    """kernels/test/emu/build/so/<name>[.<hash of extra>].so, rebuilt when a kernel source is
    newer; extra: more defines (a variant's WF_EXTRA_DEFS, as kernels/check.sh takes them)."""
    os.makedirs(SO_DIR, exist_ok=True)
    tag = "" if not extra else "." + hashlib.sha1(extra.encode()).hexdigest()[:10]
    so = os.path.join(SO_DIR, f"{name}{tag}.so")
    newest = max(os.path.getmtime(os.path.join(dp, f)) for dp, _, fs in os.walk(KERNELS)
                 if "build" not in dp for f in fs if f.endswith((".cu", ".cuh", ".h", ".cpp")))
    if os.path.exists(so) and os.path.getmtime(so) >= newest:
        return so
    src, defs = _module_build(name)
    with _lock:
        objs = [_obj("cuda_emu.cpp"), _obj("emu_launch.cpp")]
    tmp = so + f".{os.getpid()}.{threading.get_ident()}.tmp"
    subprocess.check_call(["g++"] + FLAGS + defs + extra.split() + [
        f'-DWF_EMU_SRC="{os.path.join(KERNELS, src)}"', f"-DWF_EMU_NS=wf_emu_{name}", "-shared",
        "-Wl,-Bsymbolic", os.path.join(EMU, "module.cpp")] + objs + ["-lffi", "-o", tmp])
    os.replace(tmp, so)
    return so


# the numpy scalar types a kernel argument may have: (type, emu_launch.cpp's kind, ctypes type,
# conversion); np.uint64 is the harness's NULL (and no u64 scalar argument), passed as a pointer
_SCALAR_ARGS = ((np.uint64, 4, ctypes.c_void_p, int), (np.int64, 1, ctypes.c_longlong, int),
                (np.int32, 0, ctypes.c_int, int), (np.float32, 2, ctypes.c_float, float),
                (np.float64, 3, ctypes.c_double, float))


class _Kernel:
    def __init__(self, lib, name):
        self.lib, self.name = lib, name
        self.addr = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
        self.max_dynamic_shared_size_bytes = 0
        self.num_regs = 64

    def __call__(self, grid, block, args, shared_mem=0):
        g = list(grid) + [1] * (3 - len(grid))
        b = list(block) + [1] * (3 - len(block))
        types, vals = [], []
        for a in args:
            if isinstance(a, np.ndarray):
                types.append(4)
                vals.append(ctypes.c_void_p(a.ctypes.data if a.size else 0))
            else:
                for cls, kind, ctype, conv in _SCALAR_ARGS:
                    if isinstance(a, cls):
                        types.append(kind)
                        vals.append(ctype(conv(a)))
                        break
                else:
                    raise TypeError(f"{self.name}: argument {a!r} of type {type(a)}")
        n = len(vals)
        ptrs = (ctypes.c_void_p * n)(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
        tys = (ctypes.c_int * n)(*types)
        if shared_mem > self.max_dynamic_shared_size_bytes and shared_mem > 48 * 1024:
            raise RuntimeError(f"{self.name}: {shared_mem} bytes of dynamic shared memory without "
                               "max_dynamic_shared_size_bytes")
        rc = self.lib.wf_emu_launch(ctypes.c_void_p(self.addr), *[ctypes.c_uint(v) for v in g + b],
                                    ctypes.c_ulonglong(shared_mem), ctypes.c_int(n), tys, ptrs)
        if rc != 0:
            raise RuntimeError(f"{self.name}: launch failed")


class RawModule:
    def __init__(self, path=None, code=None):
        """path: <folder>/<module>.<arch>.cubin; a <folder>/<module>.defs beside it (a kernel
        variant's WF_EXTRA_DEFS, kernels/test/build_wave4.sh) adds its defines."""
        self.name = os.path.basename(path).split(".")[0]
        defs = os.path.join(os.path.dirname(path), f"{self.name}.defs")
        extra = open(defs).read().strip() if os.path.exists(defs) else ""
        self.lib = ctypes.CDLL(build(self.name, extra), mode=os.RTLD_LOCAL)

    def get_function(self, name):
        return _Kernel(self.lib, name)

    def get_global(self, name):
        """The address of a module's global (its emulation's symbol of that name), as an object
        with cupy MemoryPointer's copy_to_host; AttributeError when the module has none."""
        addr = ctypes.cast(getattr(self.lib, name), ctypes.c_void_p).value
        return _HostPointer(addr)


class _HostPointer:
    def __init__(self, addr):
        self.addr = addr

    def copy_to_host(self, dst, size):
        ctypes.memmove(dst, self.addr, size)
