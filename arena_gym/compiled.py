"""Compiled functions: numba, imported by the first compile, never at package import.

    from arena_gym.compiled import kernel, shared

    @kernel                      # compiled (nopython) on its first call, from Python or a kernel
    def ranges(dist, geomid, out): ...

    @shared                      # compiled into the kernels that call it; from Python it
    def polar(dx, dy, heading):  # runs as written: numpy or JAX arrays for the task's
        return hypot(dx, dy), wrap_angle(arctan2(dy, dx) - heading)   # definitions

    @shared(scalar=lambda c, a, b: a if c else b)   # a scalar form where it differs
    def where(condition, a, b): return xp(condition).where(condition, a, b)

Each layer keeps its own kernels and shared definitions; a kernel calls another layer's
through a plain import, and numba compiles the whole call tree into the caller. A kernel
has its own entry from Python and its own cache entry; a shared definition has neither
(cheaper to compile: a helper's place). Kernels write into the arrays they are given and
make none (numba's reference counting is off). A call from Python types every argument
first; a caller whose arguments keep their types from call to call (its own arrays, arrays
it makes alike, plain numbers) looks the compiled function up once (`Kernel.entry`) and
calls that: the step's hot calls do. Their machine code is cached on disk, stamped
with every source file it compiles from (arena_gym/kernel_cache.py: the one module that
reaches into numba's internals).
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable
from types import FunctionType, ModuleType
from typing import Any

import numpy as np

from arena_gym.kernel_cache import cached_dispatcher, functions_of

__all__ = ["Each", "Kernel", "Peek", "Shared", "kernel", "peek", "shared"]

_lock = threading.RLock()


_SHARED: list[Shared] = []  # every shared definition: made compilable when numba loads
_loaded = False


def numba_module() -> ModuleType:
    """numba, imported on first use (its import costs a fifth of a second), with every
    shared definition registered for compiled code."""
    global _loaded
    try:
        import numba
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ImportError("arena_gym's compiled kernels need numba: pip install 'numba>=0.61'"
                          ) from exc
    if not _loaded:
        with _lock:
            if not _loaded:
                for definition in _SHARED:
                    definition.register()
                _loaded = True
    return numba


# numpy's error model: a division by zero gives inf or NaN, as numpy's arrays do; and no
# reference counting (the kernels make no arrays: they write into those they are given),
# which spares every compile its passes
_JIT_OPTIONS = {"error_model": "numpy", "_nrt": False}


class Kernel:
    """A function numba compiles (nopython) on its first call; callable from Python and
    from other kernels. Each distinct set of argument types compiles once (a kernel meant
    for several layouts should be given one: contiguous arrays of fixed dtypes)."""

    def __init__(self, fn: FunctionType) -> None:
        self.py_func = fn
        self._dispatcher: Any = None
        functools.update_wrapper(self, fn)

    @property
    def dispatcher(self) -> Any:
        """numba's dispatcher of the function (made, with its disk cache, on first use)."""
        if self._dispatcher is None:
            with _lock:
                if self._dispatcher is None:
                    numba_module()  # the shared definitions registered first
                    self._dispatcher = cached_dispatcher(self.py_func, _JIT_OPTIONS)
        return self._dispatcher

    def __call__(self, *args: Any) -> Any:
        return self.dispatcher(*args)

    def compiled_from(self) -> list[FunctionType]:
        """The Python function numba compiles (kernel_cache's source stamps)."""
        return [self.py_func]

    def entry(self, *args: Any) -> Callable[..., Any]:
        """The compiled function for the types of `args` (compiled now if need be), to call
        without numba's typing of every argument: only with arguments of exactly these
        types (the same arrays, or arrays of the same dtype, shape rank, layout and
        writability; the same kinds of numbers) - nothing checks them. For a caller that
        keeps its arguments (a prepared call made every step)."""
        from numba import typeof

        dispatcher = self.dispatcher
        signature = tuple(typeof(a) for a in args)
        if signature not in dispatcher.overloads:
            dispatcher.compile(signature)
        return dispatcher.overloads[signature].entry_point

    @property
    def _numba_type_(self) -> Any:  # a kernel called from a kernel: numba's own dispatcher
        return numba_module().types.Dispatcher(self.dispatcher)

    def __repr__(self) -> str:
        return f"<kernel {self.py_func.__module__}.{self.py_func.__qualname__}>"


class Shared:
    """A definition written once for arrays: numpy arrays, JAX arrays and tracers run it as
    it is (`fn(...)`), kernels compile it (or its `scalar` form) for scalars."""

    def __init__(self, fn: FunctionType, scalar: Callable | None = None) -> None:
        self.py_func = fn
        self.scalar = scalar or fn
        functools.update_wrapper(self, fn)
        with _lock:
            _SHARED.append(self)
            if _loaded:
                self.register()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.py_func(*args, **kwargs)

    def compiled_from(self) -> list[FunctionType]:
        """The functions numba may compile of it: as written, and its scalar form."""
        return [self.py_func, self.scalar]

    def register(self) -> None:
        """Compiled code calling this compiles its scalar form (numba's overload, as
        register_jitable makes one; no disk cache of its own: it is part of its callers')."""
        from numba.extending import overload

        scalar = self.scalar
        overload(self, jit_options=_JIT_OPTIONS, strict=False)(lambda *args, **kwargs: scalar)

    def __repr__(self) -> str:
        return f"<shared {self.py_func.__module__}.{self.py_func.__qualname__}>"


class Each(Shared):
    """`each(a, b, values)`: values[k] = functions[k](a, b) for every k in order; returns the
    values' sum from left to right. One definition for numpy and JAX arrays and for kernels:
    straight-line code made from the tuple at import (a loop numba would have to unroll;
    its literal recursion costs a compile per function), so that a kernel calls exactly the
    functions of a tuple fixed at import (the registry's built-in reward terms)."""

    def __init__(self, functions: tuple[Callable, ...], name: str) -> None:
        self.functions = tuple(functions)
        lines = [f"def {name}(a, b, values):", "    total = 0.0"]
        for k in range(len(self.functions)):
            lines += [f"    value = f{k}(a, b)", f"    values[{k}] = value",
                      "    total = total + value"]
        lines.append("    return total")
        namespace = {f"f{k}": fn for k, fn in enumerate(self.functions)}
        exec(compile("\n".join(lines), f"<{name}>", "exec"), namespace)  # noqa: S102
        super().__init__(namespace[name])

    def compiled_from(self) -> list[FunctionType]:
        """The functions of its tuple (its own code is made from them)."""
        return [fn for f in self.functions for fn in functions_of(f)]


class Peek(Shared):
    """`peek(address, index, like)`: element `index` of the array of `like`'s dtype that
    starts at memory `address` (an integer: `array.ctypes.data`). Kernels read arrays they
    cannot be handed as arguments through it (one per env, each in its own MjModel, read
    live): an array argument of each would cost its unboxing per call, and numba's lists
    of arrays need its reference counting, which the kernels do without. The caller keeps
    the arrays alive and the index in range: nothing is checked."""

    def __init__(self) -> None:
        super().__init__(_peek)

    def register(self) -> None:
        from numba import types
        from numba.extending import intrinsic, overload

        @intrinsic
        def load(typingctx, address, index, like):
            dtype = like.dtype

            def codegen(context, builder, signature, args):
                pointer = builder.inttoptr(args[0], context.get_data_type(dtype).as_pointer())
                return builder.load(builder.gep(pointer, [args[1]]))

            return dtype(types.int64, types.intp, like), codegen

        overload(self, jit_options=_JIT_OPTIONS, strict=False)(
            lambda address, index, like: lambda address, index, like: load(address, index,
                                                                           like))


def _peek(address: int, index: int, like: Any) -> Any:
    dtype = np.dtype(like.dtype)
    raw = (ctypes.c_char * dtype.itemsize).from_address(int(address) + int(index) * dtype.itemsize)
    return np.frombuffer(raw, dtype)[0]


peek = Peek()


def kernel(fn: FunctionType) -> Kernel:
    """Decorator: `fn` as a Kernel."""
    return Kernel(fn)


def shared(fn: FunctionType | None = None, *, scalar: Callable | None = None) -> Any:
    """Decorator: `fn` as a Shared definition (`@shared` or `@shared(scalar=...)`)."""
    if fn is None:
        return lambda f: Shared(f, scalar)
    return Shared(fn, scalar)
