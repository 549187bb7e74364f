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
make none (numba's reference counting is off), and compile at LLVM level 1 (OPT_LEVEL).
`compile_later` compiles kernels on a background thread while a caller goes another way.

Machine code is cached on disk under `cache_dir()/numba` (one folder per source folder).
numba stamps an entry with its kernel's own file only, so an edit of a function it calls
in another file would leave stale machine code behind (tests/test_compiled.py shows it).
Here an entry is stamped with `sources(kernel)`: the package files the kernel compiles from
(its own, those of every function it calls, recursively, and those it imports names from):
an edit of one of them recompiles it, an edit of any other file nothing. An entry that
cannot be read (a truncated or garbled file) is dropped and rebuilt with a warning naming
its folder; where the folder cannot be written, kernels compile in memory, with one warning.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import os
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from types import CodeType, FunctionType, ModuleType
from typing import Any

from arena_gym.caches import cache_dir

__all__ = ["Each", "Kernel", "Shared", "compile_later", "kernel", "shared", "sources"]

PACKAGE = Path(__file__).resolve().parent
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
                    self._dispatcher = _dispatcher(self.py_func)
        return self._dispatcher

    def __call__(self, *args: Any) -> Any:
        return self.dispatcher(*args)

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


def compile_later(calls: list[tuple[Kernel, tuple]]) -> threading.Event:
    """Compile each kernel for the types of its arguments on a background thread (or load it
    from the disk cache), in order; the event is set when all are done. A caller with
    another way to do the work takes it meanwhile: numba's compiles hold the GIL mostly,
    but a simulator's steps release it. A compile that fails is tried again, and raises,
    at the kernel's next call."""
    done = threading.Event()
    numba = numba_module()
    signatures = [(k.dispatcher, tuple(numba.typeof(a) for a in args)) for k, args in calls]

    def run() -> None:
        try:
            for dispatcher, signature in signatures:
                dispatcher.compile(signature)
        except Exception:  # noqa: S110 - the next call compiles again and raises it
            pass
        finally:
            done.set()

    threading.Thread(target=run, name="arena-compile", daemon=True).start()
    return done


def kernel(fn: FunctionType) -> Kernel:
    """Decorator: `fn` as a Kernel."""
    return Kernel(fn)


def shared(fn: FunctionType | None = None, *, scalar: Callable | None = None) -> Any:
    """Decorator: `fn` as a Shared definition (`@shared` or `@shared(scalar=...)`)."""
    if fn is None:
        return lambda f: Shared(f, scalar)
    return Shared(fn, scalar)


# ---------------------------------------------------------------- the disk cache
def _dispatcher(fn: FunctionType) -> Any:
    numba = numba_module()
    dispatcher = numba.njit(**_JIT_OPTIONS)(fn)
    dispatcher.compile = _lightly(dispatcher.compile)
    try:
        dispatcher._cache = _cache_class()(fn)  # what njit(cache=True) sets, our locator's
    except _Unwritable as exc:
        _warn_once(f"arena_gym: compiled-kernel cache folder {exc} is not writable; kernels "
                   "compile in memory (set ARENA_GYM_CACHE to a writable folder)")
    return dispatcher


# LLVM's optimisation level for the kernels: level 1 compiles them in a fifth less time and
# runs them as fast as level 3 (benchmarks/compile.py); numba's own functions keep theirs
OPT_LEVEL = 1


def _lightly(compile_: Callable) -> Callable:
    """numba's compile of a dispatcher, at OPT_LEVEL (numba reads its OPT setting as it
    compiles; set back after, whatever happens)."""
    from numba.core import config
    from numba.core.compiler_lock import global_compiler_lock

    @functools.wraps(compile_)
    def compile(sig: Any) -> Any:
        with global_compiler_lock:  # (every compile holds it: one OPT setting at a time)
            before = config.OPT
            config.OPT = config._OptLevel(OPT_LEVEL)
            try:
                return compile_(sig)
            finally:
                config.OPT = before

    return compile


class _Unwritable(OSError):
    """The cache folder (the message) cannot be written."""


@functools.cache
def _warn_once(message: str) -> None:
    warnings.warn(message, RuntimeWarning, stacklevel=3)


@functools.cache
def _cache_class() -> type:
    """numba's FunctionCache, located by `_locator_class` only, that drops and rebuilds an
    entry it cannot read."""
    from numba.core import caching

    locator = _locator_class()

    class Impl(caching.CompileResultCacheImpl):
        _locator_classes = [locator]  # noqa: RUF012 - numba's class attribute

    class HealingCache(caching.FunctionCache):
        _impl_class = Impl

        def load_overload(self, sig: Any, target_context: Any) -> Any:
            try:
                return super().load_overload(sig, target_context)
            except Exception as exc:  # a truncated or garbled entry: pickle's errors vary
                warnings.warn(f"arena_gym: dropped an unreadable compiled-kernel cache entry "
                              f"in {self._cache_path} ({type(exc).__name__}: {exc}); "
                              "compiling it anew", RuntimeWarning, stacklevel=2)
                with _lock:
                    self._cache_file.flush()  # an empty index: the entry is written anew
                return None

    return HealingCache


@functools.cache
def _locator_class() -> type:
    from numba.core import caching

    class Locator(caching._CacheLocator):
        """Entries under cache_dir()/numba (NUMBA_CACHE_DIR wins), stamped with the hash
        of every source file the function compiles from."""

        def __init__(self, py_func: FunctionType, py_file: str) -> None:
            self._py_func, self._py_file = py_func, py_file
            self._lineno = py_func.__code__.co_firstlineno
            root = os.environ.get("NUMBA_CACHE_DIR") or str(cache_dir() / "numba")
            self._path = os.path.join(root, self.get_suitable_cache_subpath(py_file))

        def get_cache_path(self) -> str:
            return self._path

        def get_source_stamp(self) -> str:
            return stamp(self._py_func)

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func: FunctionType, py_file: str) -> Any:
            locator = cls(py_func, py_file)
            try:
                locator.ensure_cache_path()
            except OSError:
                raise _Unwritable(locator._path) from None
            return locator

    return Locator


# ---------------------------------------------------------------- sources and stamps
def stamp(fn: FunctionType) -> str:
    """sha256 of the package files `fn` compiles from (paths and contents)."""
    digest = hashlib.sha256()
    for path in sources(fn):
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def sources(fn: Callable) -> list[Path]:
    """The package files `fn` compiles from, sorted: its own, and for every global name its
    code uses, the files of the package functions it calls (recursively: kernels, shared
    definitions and their scalar forms, plain functions) and of the package modules it
    imports names or modules from."""
    files: set[Path] = set()
    seen: set[int] = set()

    def visit(f: Any) -> None:
        for inner in _functions_of(f):
            if id(inner) in seen:
                continue
            seen.add(id(inner))
            path = _package_file(inner)
            if path is None:
                continue
            files.add(path)
            origins = _imported_from(path)
            for name in _names(inner.__code__):
                if name in origins:
                    files.add(origins[name])
                value = inner.__globals__.get(name)
                if isinstance(value, ModuleType):
                    module_file = _package_file(value)
                    if module_file is not None:
                        files.add(module_file)
                        for attr in _names(inner.__code__):
                            visit(getattr(value, attr, None))
                else:
                    visit(value)

    visit(fn)
    return sorted(files)


def _functions_of(value: Any) -> list[FunctionType]:
    """The Python functions behind a kernel, a shared definition, a numba dispatcher or a
    plain function (none for anything else)."""
    if isinstance(value, Kernel):
        return [value.py_func]
    if isinstance(value, Each):
        return [fn for f in value.functions for fn in _functions_of(f)]
    if isinstance(value, Shared):
        return [value.py_func, value.scalar]
    if isinstance(value, FunctionType):
        return [value]
    py_func = getattr(value, "py_func", None)  # a numba dispatcher
    return [py_func] if isinstance(py_func, FunctionType) else []


def _package_file(obj: Any) -> Path | None:
    try:
        path = Path(inspect.getsourcefile(obj) or "").resolve()
    except TypeError:
        return None
    return path if path.is_relative_to(PACKAGE) and path.is_file() else None


def _names(code: CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _names(const)
    return names


@functools.cache
def _imported_from(path: Path) -> dict[str, Path]:
    """name -> the package module's file it is imported from, by `path`'s import statements
    (`from arena_gym.x import name`, `import arena_gym.x as name`)."""
    origins: dict[str, Path] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                target = _module_file(node.module) or _module_file(f"{node.module}.{alias.name}")
                if target is not None:
                    origins[alias.asname or alias.name] = target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                target = _module_file(alias.name)
                if target is not None and alias.asname:
                    origins[alias.asname] = target
    return origins


def _module_file(module: str) -> Path | None:
    parts = module.split(".")
    if parts[0] != PACKAGE.name:
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


