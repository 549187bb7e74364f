"""numba's disk cache for the package's kernels, and their optimisation level: the one module
that reaches into numba's internals (its caching classes and its OPT setting), so numba is
pinned to the release series this was written against (pyproject.toml).

Machine code is cached under `cache_dir()/numba` (one folder per source folder). numba
stamps an entry with its kernel's own file only, so an edit of a function it calls in
another file would leave stale machine code behind (tests/test_compiled.py shows it). Here
an entry is stamped with `sources(kernel)`: the package files the kernel compiles from (its
own, those of every function it calls, recursively, and those it imports names from): an
edit of one of them recompiles it, an edit of any other file nothing. An entry that cannot
be read (a truncated or garbled file) is dropped and rebuilt with a warning naming its
folder; where the folder cannot be written, kernels compile in memory, with one warning.
Kernels compile at LLVM level 1 (OPT_LEVEL).
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

__all__ = ["OPT_LEVEL", "cached_dispatcher", "sources", "stamp"]

PACKAGE = Path(__file__).resolve().parent
_lock = threading.RLock()


def cached_dispatcher(fn: FunctionType, jit_options: dict[str, Any]) -> Any:
    """numba's njit dispatcher of `fn` with `jit_options`, its machine code cached on disk
    (stamped with `sources(fn)`) and compiled at OPT_LEVEL."""
    import numba

    dispatcher = numba.njit(**jit_options)(fn)
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
        for inner in functions_of(f):
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


def functions_of(value: Any) -> list[FunctionType]:
    """The Python functions behind a kernel or a shared definition (their `compiled_from()`),
    a numba dispatcher or a plain function (none for anything else)."""
    if isinstance(value, FunctionType):
        return [value]
    if callable(getattr(type(value), "compiled_from", None)):
        return value.compiled_from()
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


