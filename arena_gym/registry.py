"""Named registries, one per extension kind: the only place a kind is looked up.

    from arena_gym.registry import REWARD_TERMS
    REWARD_TERMS.register("heading", RewardTerm(my_term, weight=0.1))   # as the built-ins do
    REWARD_TERMS["heading"]          # RegistryError naming the known ones for a wrong name

Each registry names the module holding its built-in entries; that module is imported on the
first lookup (nothing happens at import time) and registers them like any plugin would.
Third-party entries come from the `arena_gym.plugins` entry-point group (arena_gym.plugins),
loaded on that first lookup too.
"""

from __future__ import annotations

import difflib
import importlib
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, overload

T = TypeVar("T")

# the entry point being loaded (arena_gym.plugins): what registers meanwhile came from it
_loading: list[str] = []


class RegistryError(LookupError):
    """An unknown or clashing name in a registry."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0]) if self.args else ""


class Registry(Generic[T]):
    """Entries of one extension kind by name, in registration order."""

    def __init__(self, kind: str, builtins: str) -> None:
        self.kind = kind
        self.builtins = builtins  # module that registers the built-in entries
        self._entries: dict[str, T] = {}
        self._sources: dict[str, str] = {}
        self._ready = False
        self._lock = threading.RLock()
        self.version = 0  # bumped by every change: lets callers keep what they derive

    # ------------------------------------------------------------ registering
    @overload
    def register(self, name: str, item: T, *, source: str = ..., replace: bool = ...) -> T: ...

    @overload
    def register(self, name: str, item: None = None, *, source: str = ...,
                 replace: bool = ...) -> Callable[[T], T]: ...

    def register(self, name, item=None, *, source="", replace=False):
        """Add `item` under `name` (or decorate it). A name taken by another source raises,
        unless `replace`: a plugin cannot silently shadow a built-in."""
        if not isinstance(name, str) or not name:
            raise RegistryError(f"{self.kind}: expected a non-empty name, got {name!r}")
        if item is None:
            return lambda obj: self.register(name, obj, source=source, replace=replace)
        source = source or (_loading[-1] if _loading else "")
        with self._lock:
            if name in self._entries and not replace and self._entries[name] is not item:
                raise RegistryError(
                    f"{self.kind} {name!r}: already registered by "
                    f"{self._sources[name] or 'arena_gym'}; expected a new name (or "
                    "replace=True)")
            self._entries[name] = item
            self._sources[name] = source
            self.version += 1
        return item

    def unregister(self, name: str) -> None:
        with self._lock:
            self._entries.pop(name, None)
            self._sources.pop(name, None)
            self.version += 1

    def unregister_source(self, source: str) -> None:
        """Drop every entry `source` registered (a plugin's entry point, before a reload)."""
        with self._lock:
            for name in [n for n, s in self._sources.items() if s == source]:
                self.unregister(name)

    # ------------------------------------------------------------ lookup
    def _ensure(self) -> None:
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            self._ready = True  # before importing: the module registers through us
            try:
                importlib.import_module(self.builtins)
            except BaseException:
                self._ready = False
                raise
        from arena_gym.plugins import load_entry_points

        load_entry_points()

    def __getitem__(self, name: str) -> T:
        self._ensure()
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            pass
        close = difflib.get_close_matches(str(name), list(self._entries), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise RegistryError(f"unknown {self.kind} {name!r}{hint} (expected one of "
                            f"{sorted(self._entries)})")

    def get(self, name: str, default: T | None = None) -> T | None:
        self._ensure()
        return self._entries.get(name, default)

    def __contains__(self, name: object) -> bool:
        self._ensure()
        return name in self._entries

    def names(self) -> list[str]:
        self._ensure()
        return list(self._entries)

    def items(self) -> Iterator[tuple[str, T]]:
        self._ensure()
        return iter(list(self._entries.items()))

    def source(self, name: str) -> str:
        """Who registered `name`: "" for arena_gym itself, else the plugin's entry point."""
        self[name]
        return self._sources[name]

    @property
    def plural(self) -> str:
        return self.kind[:-1] + "ies" if self.kind.endswith("y") else self.kind + "s"

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._entries)} entries)"


# ---------------------------------------------------------------- the registries
# (entry types: arena_gym.sensors.kinds.SensorKind, arena_gym.tasks.rewards.RewardTerm,
# arena_gym.policies.PolicyFactory, arena_gym.plugins.Plugin subclasses,
# arena_gym.sim.drive.wheel_drive-like factories)
SENSOR_KINDS: Registry = Registry("sensor kind", "arena_gym.sensors.kinds")
REWARD_TERMS: Registry = Registry("reward term", "arena_gym.tasks.rewards")
POLICIES: Registry = Registry("policy", "arena_gym.policies")
PLUGINS: Registry = Registry("plugin", "arena_gym.plugins")
DRIVES: Registry = Registry("drive", "arena_gym.sim.drive")  # factory(model, robot) -> drive
WORLDS: Registry = Registry("world source", "arena_gym.tasks.layouts")  # factory(...) -> layout
REGISTRIES = (SENSOR_KINDS, REWARD_TERMS, POLICIES, PLUGINS, DRIVES, WORLDS)
