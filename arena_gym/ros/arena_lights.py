"""The lights of an Arena session: each env's light table (arena_gym.scene.lights) as
Arena's light services change it (arena_commands.py runs them), and how renders see it.

    lights = ArenaLights()
    lights.change(0, [item], lambda table, i: table.spawn(light_of(i, body_id)), problems)
    with lights.lighting(0, model, data, eye): ...     # a render of env 0, lit by its table

One result per light: a bad item costs itself, its reason in `problems`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena_gym.errors import SceneError
from arena_gym.render.lights import lit
from arena_gym.scene.lights import Light, LightTable

_ERRORS = (SceneError, ValueError, KeyError, TypeError)


class ArenaLights:
    """Each env's light table, made by its first light; ResetWorld drops it."""

    def __init__(self) -> None:
        self.tables: dict[int, LightTable] = {}

    def get(self, env: int) -> LightTable | None:
        return self.tables.get(env)

    def drop(self, env: int) -> None:
        self.tables.pop(env, None)

    def lighting(self, env: int, model: Any, data: Any, eye: Any) -> Any:
        """The context within which `model` shows env `env`'s light table as seen from
        `eye` (the robot cameras' RendererPool.lighting; the viewport and the viewer apply
        the same table the same way)."""
        return lit(model, data, self.tables.get(env), eye)

    def change(self, env: int, items: list, how: Callable[[LightTable, Any], None],
               problems: list[str]) -> list[bool]:
        """`how(table, item)` for each item; whether each went in (else why, in problems)."""
        table = self.tables.setdefault(env, LightTable())
        ret = []
        for item in items:
            try:
                how(table, item)
                ret.append(True)
            except _ERRORS as exc:
                name = item if isinstance(item, str) else item.get("name")
                text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
                problems.append(f"light {name!r}: {text}")
                ret.append(False)
        return ret


def light_of(item: dict, prim_id: Callable[[str], str]) -> Light:
    """Our Light of a Light message (Light.msg): an unset (zero) direction points down, an
    unset glow colour (alpha 0) keeps the glow visuals' own; the glow prim by its id
    (`prim_id`, as SpawnPrims named it)."""
    direction = tuple(item["direction"]) if any(item["direction"]) else (0.0, 0.0, -1.0)
    r, g, b, a = item["glow_color"]
    return Light(item["name"], item["shape"], positions=tuple(map(tuple, item["positions"])),
                 direction=direction, intensity=item["intensity"], cct_k=item["cct_k"],
                 cone=item["cone"], x_length=item["x_length"], y_length=item["y_length"],
                 radius=item["radius"], cast_shadows=item["cast_shadows"],
                 level=item["level"], alive=tuple(item["alive"]), intrinsic=item["intrinsic"],
                 glow_prim=prim_id(item["glow_prim"]) if item["glow_prim"] else "",
                 glow_color=(r, g, b) if a > 0 else None)


def set_light(table: LightTable, item: dict) -> None:
    """A LightState (SetLights): a move (a position turned by a yaw), else its level and
    alive mask."""
    if item["move"]:
        table.move(item["name"], tuple(item["position"]), item["yaw"])
    else:
        table.set(item["name"], level=item["level"], alive=tuple(item["alive"]))
