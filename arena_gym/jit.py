"""Compiled kernels: numba, imported by the first kernel module that needs it.

The hot paths' loops (the lidar's rays, the crowd's forces) are numba functions in modules
of their own (`*_kernels.py`), imported on first use through
`arena_gym.kernel_modules.kernels`, never at package import. Compiled
machine code is cached on disk under the project's cache (ARENA_GYM_CACHE, else the user's
cache dir, `numba/`), never beside the package's sources: a new process loads it in
milliseconds instead of compiling again (seconds). `NUMBA_CACHE_DIR` set by the user wins.
A kernel's cache entry is keyed on the sources of the whole package, not only on its own
file as numba keys it: kernels compile in functions of other modules (the task's shared
definitions, `fma` here), and an edit there must not leave stale machine code behind.

    from arena_gym.jit import numba   # in a kernel module
    @numba.njit(cache=True)
    def kernel(...): ...

`fma` is IEEE's fused multiply-add for kernels that must equal a BLAS's fused sums, and
`dot3` the 3-term sum OpenBLAS forms with it.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from arena_gym.scene.meshes import cache_dir

os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_dir() / "numba"))

try:
    import numba
except ImportError as exc:  # pragma: no cover - a dependency of the package
    raise ImportError("arena_gym's compiled kernels need numba: pip install 'numba>=0.61'"
                      ) from exc

if numba.config.CACHE_DIR != os.environ["NUMBA_CACHE_DIR"]:  # numba imported earlier
    numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]

import llvmlite.ir  # noqa: E402 - numba's own dependency, after numba's configuration
from numba.core import caching, cgutils  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

__all__ = ["dot3", "fma", "numba"]

_PACKAGE = Path(__file__).resolve().parent


@functools.cache
def package_stamp() -> str:
    """sha256 of every source file of the package (paths and contents), once a process."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


class PackageLocator(caching.UserProvidedCacheLocator):
    """Numba's cache locator for the package's kernels: the project's cache directory, and
    the package's sources as the stamp that says whether an entry is current (numba's own
    stamp, the kernel's file alone, misses edits of what the kernel calls)."""

    def get_source_stamp(self) -> str:
        return package_stamp()

    @classmethod
    def from_function(cls, py_func, py_file):
        if not Path(py_file).resolve().is_relative_to(_PACKAGE):
            return None  # not ours: numba's locators decide
        return super().from_function(py_func, py_file)


# first, before numba's own (a NUMBA_CACHE_LOCATOR_CLASSES the user set still replaces them)
if PackageLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, PackageLocator)


@intrinsic
def fma(typingctx, a, b, c):
    """a * b + c rounded once (IEEE fused multiply-add, LLVM's llvm.fma: exact on any
    machine, one instruction where the CPU has FMA), for kernels whose sums must equal
    BLAS's fused ones bit for bit. Float64 only; callable from compiled code only."""
    f64 = numba.types.float64
    if not all(t == f64 for t in (a, b, c)):
        return None

    def codegen(context, builder, signature, args):
        double = llvmlite.ir.DoubleType()
        fn = cgutils.get_or_insert_function(
            builder.module, llvmlite.ir.FunctionType(double, [double] * 3), "llvm.fma.f64")
        return builder.call(fn, args)

    return f64(f64, f64, f64), codegen


@numba.njit(cache=True)
def dot3(a0: float, a1: float, a2: float, b0: float, b1: float, b2: float) -> float:
    """a0 b0 + a1 b1 + a2 b2 as OpenBLAS's x86-64 kernels sum a 3-term product in numpy's
    matmul: each term fused into the running sum, in order, from +0 (the lidar's and the
    controller's kernels give numpy's bits with it)."""
    return fma(a2, b2, fma(a1, b1, fma(a0, b0, 0.0)))
