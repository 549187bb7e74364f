"""Name clashes between what a request adds and what an env's spec holds.

MuJoCo rejects a repeated body, geom or site name halfway through an edit (leaving an unnamed
body behind); checking every name a request would add first keeps requests all-or-nothing and
lets the error name both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import mujoco

from arena_gym.errors import SpawnError

_KINDS = ("bodies", "geoms", "sites")
_SINGULAR = {"bodies": "body", "geoms": "geom", "sites": "site"}


def element_names(spec: mujoco.MjSpec, prefix: str = "") -> dict[str, str]:
    """{prefix + name: kind} of every named body, geom and site of `spec` (not its world
    body, which attaching does not bring)."""
    out: dict[str, str] = {}
    for kind in _KINDS:
        for element in getattr(spec, kind):
            if element.name and not (kind == "bodies" and element.name == "world"):
                out.setdefault(prefix + element.name, _SINGULAR[kind])
    return out


def planned_names(records: Iterable[tuple[str, object]], build: Callable) -> dict[str, str]:
    """What `build(spec, full_name, record)` adds for each (full_name, record), learned on a
    scratch spec (builder-agnostic: the builders alone decide the names)."""
    scratch = mujoco.MjSpec()
    for full, record in records:
        build(scratch, full, record)
    return element_names(scratch)


def check_clashes(env_id: int, what: Callable[[str], str], added: dict[str, str],
                  existing: dict[str, str], owner: Callable[[str], str]) -> None:
    """SpawnError naming the first added name the env already holds, and its owner."""
    for name, kind in added.items():
        if name in existing:
            raise SpawnError(
                f"env {env_id}: {what(name)} would add {kind} {name!r}, which clashes with the "
                f"{existing[name]} {name!r} of {owner(name)}"
            )
