"""Named registries, one per extension kind: the only place a kind is looked up.

    from arena_gym.registry import REWARD_TERMS
    REWARD_TERMS.register("heading", RewardTerm(my_term, weight=0.1))   # as the built-ins do
    REWARD_TERMS["heading"]          # RegistryError naming the known ones for a wrong name

The built-in entries register like any plugin's, from the module that defines them, when
that module is imported (arena_gym.sensors.kinds, arena_gym.tasks.rewards, arena_gym.sim.drive,
arena_gym.worlds.layouts, arena_gym.train.policies): every consumer imports its kind's module,
so a lookup there sees them. Third-party entries come from the `arena_gym.plugins`
entry-point group, loaded on the first lookup in any registry.
"""

from __future__ import annotations

import difflib
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, overload

T = TypeVar("T")

ENTRY_POINT_GROUP = "arena_gym.plugins"
REGISTRIES: list[Registry] = []  # every registry, in the order made (the ones below first)
# the entry point being loaded: what registers meanwhile came from it
_loading: list[str] = []
_state: dict = {"loaded": False, "failures": {}, "sources": []}


class PluginWarning(UserWarning):
    """An installed plugin failed to load (the rest of arena_gym works without it)."""


class RegistryError(ValueError, LookupError):
    """An unknown or clashing name in a registry (a ValueError: the command line says it in
    one line)."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0]) if self.args else ""


class Registry(Generic[T]):
    """Entries of one extension kind by name, in registration order."""

    def __init__(self, kind: str, home: str) -> None:
        self.kind = kind
        self.home = home  # the module whose import registers the built-in entries (its name)
        self._entries: dict[str, T] = {}
        self._sources: dict[str, str] = {}
        self._ready = False
        self._lock = threading.RLock()
        self.version = 0  # bumped by every change: lets callers keep what they derive
        REGISTRIES.append(self)

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
        if not self._ready:
            self._ready = True
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
                            f"{sorted(self._entries)}; built-ins register when {self.home} "
                            "is imported)")

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
# arena_gym.train.policies.PolicyFactory, arena_gym.plugins.Plugin subclasses,
# arena_gym.sim.drive.wheel_drive-like factories)
SENSOR_KINDS: Registry = Registry("sensor kind", "arena_gym.sensors")
REWARD_TERMS: Registry = Registry("reward term", "arena_gym.tasks.rewards")
POLICIES: Registry = Registry("policy", "arena_gym.train.policies")
PLUGINS: Registry = Registry("plugin", "arena_gym.plugins")
DRIVES: Registry = Registry("drive", "arena_gym.sim")  # factory(model, robot) -> drive
WORLDS: Registry = Registry("world source", "arena_gym.worlds")  # factory(...) -> layout


def load_entry_points(reload: bool = False) -> dict[str, str]:
    """Load every installed plugin of the entry-point group (once unless `reload`); returns
    the failures, entry-point name -> message. An entry point names either a callable that
    registers entries or a class with a `register_entry_point(name)` classmethod (a runtime
    plugin: arena_gym.plugins.Plugin)."""
    if _state["loaded"] and not reload:
        return _state["failures"]
    _state["loaded"] = True
    from importlib.metadata import entry_points

    for source in _state["sources"]:  # a reload starts from the built-ins
        for reg in REGISTRIES:
            reg.unregister_source(source)
    failures: dict[str, str] = {}
    sources = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        sources.append(ep.value)
        where = f"plugin {ep.name!r} (entry point {ep.value!r})"
        _loading.append(ep.value)
        try:
            obj = ep.load()
            if isinstance(obj, type) and callable(getattr(obj, "register_entry_point", None)):
                obj.register_entry_point(ep.name)
            elif callable(obj):
                obj()
            else:
                raise TypeError(f"expected a callable that registers entries or a Plugin "
                                f"subclass, got {obj!r}")
        except Exception as exc:  # one broken plugin must not take the others down
            failures[ep.name] = f"{where}: {type(exc).__name__}: {exc}"
            warnings.warn(failures[ep.name], PluginWarning, stacklevel=2)
        finally:
            _loading.pop()
    _state["failures"], _state["sources"] = failures, sources
    return failures
