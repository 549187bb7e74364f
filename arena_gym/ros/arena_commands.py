"""The Arena MuJoCo server's request semantics on our scenes: what the `/mujoco/CamelCase`
services do (arena_services.py carries them over ROS), beside our own (commands.py).

    arena = ArenaCommands(commands, naming, runner)   # shares the bridge's Commands
    arena.run({"op": "arena_spawn_prims", "env": 0, "prims": [...]})  # {"ret": [...], ...}

As Arena's server does:
- a body's name is its id: each run of characters other than letters, digits and '_'
  becomes '_' ("env_0/Obstacles/box" -> "env_0_Obstacles_box"); a name already taken gets
  '_0', '_1', ... appended. A trailing '/' in DeletePrims deletes by that id prefix, and
  the env's pedestrians whose names start with it go back to the pool.
- one result per item: a bad item costs itself (ret False), never the rest, and never the
  server; the reason goes to the bridge's stderr (Arena's answers carry no message).
- SpawnUrdf answers the robot's handle (`path`: its name + '_' + its base frame, as
  Arena's base body id), empty when it was not spawned; EditPrims moves a robot by it.
- ResetWorld deletes every body of the env, robots included, and frees its pedestrians.
- pedestrians name their env with an `env_N/` prefix (FAILED_PARSE without one) and wear
  the actor their `model_uri` names (a capsule when it cannot be read); a spawn of a name
  that exists moves it.
- an env of an env_id not used yet is there, empty, as Arena's server makes it on first
  contact (`ensure_env`): in an Arena session (`grow`) it is made then, up to `max_envs`
  (a bound on the memory envs take); otherwise the bridge's envs beyond its world's
  (`--max-envs`) start as a ground plane and the sun. An env_id beyond the bound fails its
  items, naming it.
- in an Arena session, a robot of SpawnUrdf is driven by its joint commands alone, entry by
  entry (a name the robot has no servo for, or a value that is not finite, is skipped with
  a warning; the rest apply), as Arena's server applies them.

Poses carry a full quaternion: prims take it whole (tilted too), as does EditPrims' move of
a robot; a robot's spawn and a pedestrian stand upright (a tilted pose fails them).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena_gym.assets.mdl import read_mdl
from arena_gym.assets.meshes import inside
from arena_gym.assets.shapes import Shape
from arena_gym.checks import MIN_HALF_EXTENT
from arena_gym.errors import SceneError
from arena_gym.people.pedestrians import Pedestrian, split_env
from arena_gym.ros.arena_lights import ArenaLights, light_of, set_light
from arena_gym.ros.commands import Commands
from arena_gym.ros.topic_names import robot_name, topic
from arena_gym.scene.requests import SLAB_THICKNESS, Prim, PrimEdit, Slab, Wall
from arena_gym.scene.scene import Scene
from arena_gym.sim.free_bodies import FreeBodyState
from arena_gym.sim.runner import Runner

Reply = dict[str, Any]
_ID_BAD = re.compile(r"[^0-9A-Za-z_]+")
TILT = 1e-6  # a quaternion's roll or pitch beyond this is a tilt our bodies cannot take
SUCCESS, FAILED_PARSE, FAILED_CREATE, NOT_FOUND = 0, 1, 2, 1  # arena_people_msgs results
_ERRORS = (SceneError, ValueError, KeyError, TypeError, OSError)


def body_id(name: str) -> str:
    """Arena's id of a name: runs of other characters as '_', no '_' at the ends."""
    return _ID_BAD.sub("_", str(name)).strip("_") or "x"


def orientation(pose: list[float]) -> tuple[float, tuple[float, float, float, float] | None]:
    """(heading, the unit quaternion where it is tilted, else None) of a pose (x, y, z, qw,
    qx, qy, qz). An unset (zero) quaternion is the identity, as Arena reads it."""
    w, x, y, z = pose[3:7]
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if norm < 1e-12:
        return 0.0, None
    w, x, y, z = w / norm, x / norm, y / norm, z / norm
    heading = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return heading, ((w, x, y, z) if abs(x) > TILT or abs(y) > TILT else None)


def yaw_of(pose: list[float]) -> float:
    """The yaw of an upright pose (x, y, z, qw, qx, qy, qz); ValueError for a tilted one
    (a robot's or a pedestrian's: they stand upright)."""
    heading, tilt = orientation(pose)
    if tilt is not None:
        w, x, y, z = tilt
        raise ValueError(f"expected a yaw-only orientation, got the quaternion "
                         f"(w={w:.3g}, x={x:.3g}, y={y:.3g}, z={z:.3g})")
    return heading


class ArenaCommands:
    """Arena's requests (ops "arena_*") on the bridge's store, through its `commands`."""

    def __init__(self, commands: Commands, naming: dict[tuple[int, str], dict],
                 runner: Runner | None = None, grow: Callable[[int], None] | None = None,
                 max_envs: int | None = None) -> None:
        """`grow(env)`: make the envs up to `env` (an Arena session; None: the envs are
        fixed), at most `max_envs` of them."""
        self.commands = commands
        self.grow, self.max_envs = grow, max_envs
        # the Runner that runs the simulator (its snapshots see a moved robot); none: one
        # of its own that never starts
        self.runner = runner if runner is not None else Runner(commands.sim)
        self.sim, self.store = commands.sim, commands.store
        self.naming = naming  # the roster's: (env, robot) -> what SpawnUrdf named
        self.lights = ArenaLights()  # per env, built by the first light
        self._uris: dict[str, str] = {}  # pedestrian -> the model_uri asked for it

    def run(self, message: dict) -> Reply:
        """Answer one request; "success" says whether every item succeeded and "message"
        why not (for the log)."""
        op = message.get("op", "")
        handler: Callable[[dict, list[str]], Reply] | None = getattr(
            self, "_" + op.removeprefix("arena_"), None)
        if handler is None:
            return {"success": False, "message": f"unknown command {op!r}"}
        problems: list[str] = []
        reply = handler(message, problems)
        return {"success": not problems, "message": "; ".join(problems), **reply}

    # ------------------------------------------------------------ helpers
    def _env(self, message: dict, problems: list[str]) -> int | None:
        """The request's env, made on first contact in an Arena session; None (and the
        reason) beyond the bridge's envs or bound."""
        env = message.get("env")
        n = self.store.num_envs
        if isinstance(env, int) and 0 <= env < n:
            return env
        wanted = env + 1 if isinstance(env, int) else n
        if self.grow is not None and self.max_envs is not None:
            if isinstance(env, int) and n <= env < self.max_envs:
                self.grow(env)
                return env
            problems.append(f"env_id {env!r}: beyond this bridge's bound of {self.max_envs} "
                            "envs (--max-envs: every env keeps its own model and state in "
                            f"memory); start it with --max-envs {wanted} or more for that env")
            return None
        problems.append(f"env_id {env!r}: this bridge has envs 0 .. {n - 1} (at most "
                        f"--max-envs {n}); start it with --max-envs {wanted} or more for that "
                        "env")
        return None

    def _unique(self, env: int, name: str, taken: set[str]) -> str:
        """Arena's id of `name`, with '_0', '_1', ... when the env holds it already."""
        candidate = body_id(name)
        if candidate not in taken:
            return candidate
        k = 0
        while f"{candidate}_{k}" in taken:
            k += 1
        return f"{candidate}_{k}"

    def _look(self, material: dict | None, problems: list[str], what: str,
              default: tuple[float, float, float, float]) -> dict[str, Any]:
        """A record's `rgba` and `material` of an Arena Material: its .mdl file's (read as
        text, inside the allowed folders: a texture tiled on a box, wall or slab, else a
        colour), else `default` and no material."""
        path = (material or {}).get("path", "")
        if not path:
            return {"rgba": default}
        roots = self.store.scenes[0].path_roots
        if roots is not None and not inside(Path(path), roots):
            problems.append(f"{what}: material {path!r} is outside the allowed folders; "
                            "the default colour is used")
            return {"rgba": default}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mdl = read_mdl(path)
        except _ERRORS as exc:
            problems.append(f"{what}: material {path!r} not read ({exc}); the default "
                            "colour is used")
            return {"rgba": default}
        return {"rgba": mdl.rgba, "material": mdl if mdl.image is not None else None}

    def _records(self, message: dict, key: str, problems: list[str], what: str,
                 build: Callable[[dict, str], Any]) -> tuple[int | None, list]:
        """(env, the record of each item of `message[key]`): `build(item, name)` with the
        item's unique id, None (and the reason) where it fails; env None: no such env."""
        items = list(message[key])
        env = self._env(message, problems)
        if env is None:
            return None, [None] * len(items)
        taken = set(self.store[env].entities)
        out: list = []
        for item in items:
            try:
                record = build(item, self._unique(env, item["name"], taken))
                taken.add(record.name)
                out.append(record)
            except _ERRORS as exc:
                problems.append(f"{what} {item.get('name', '')!r} not spawned: {_text(exc)}")
                out.append(None)
        return env, out

    # ------------------------------------------------------------ world
    def _reset_world(self, message: dict, problems: list[str]) -> Reply:
        env = self._env(message, problems)
        if env is None:
            return {"ret": False}
        self.store[env].reset_world()  # as Arena's: the bodies go, the clock and state stay
        self.lights.drop(env)
        return {"ret": True}

    def _delete_prims(self, message: dict, problems: list[str]) -> Reply:
        names = list(message["names"])
        env = self._env(message, problems)
        if env is None:
            return {"ret": [False] * len(names)}
        ret = []
        for name in names:
            have = list(self.store[env].entities)
            if name.endswith("/"):
                prefix = body_id(name[:-1]) if name[:-1] else ""
                chosen = [n for n in have if n.startswith(prefix)]
                self._release(name)
            else:
                chosen = [n for n in have if n == body_id(name)]
            if chosen:
                self.store[env].delete(chosen)
            ret.append(bool(chosen))
        return {"ret": ret}

    def _release(self, prefix: str) -> None:
        """Arena's prefix delete frees the pedestrians whose names it prefixes (any env)."""
        for env in range(self.store.num_envs):
            names = [n for n in self.store[env].pedestrians.slots
                     if f"env_{env}/{n}".startswith(prefix)]
            if names:
                self.store.delete_pedestrians(names, env)
                for n in names:
                    self._uris.pop(f"env_{env}/{n}", None)

    def _edit_prims(self, message: dict, problems: list[str]) -> Reply:
        prims = list(message["prims"])
        env = self._env(message, problems)
        if env is None:
            return {"ret": [False] * len(prims)}
        ret = []
        for prim in prims:
            try:
                self._edit(env, prim, message["pose"], message["scale"])
                ret.append(True)
            except _ERRORS as exc:
                problems.append(f"edit of {prim['name']!r}: {_text(exc)}")
                ret.append(False)
        return {"ret": ret}

    def _edit(self, env: int, prim: dict, pose: bool, scale: bool) -> None:
        name = body_id(prim["name"])
        entity = self.store.scene(env).entity(name)
        x, y, z = prim["pose"][:3]
        yaw, tilt = orientation(prim["pose"]) if pose else (0.0, None)
        if entity.kind == "robot":
            if scale:
                raise ValueError("a robot cannot be scaled")
            if pose:
                self.runner.set_free_bodies(env, {name: FreeBodyState(
                    pos=(x, y, z),
                    quat=tilt or (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)))})
            return
        new_scale = tuple(prim["scale"]) if scale else None
        if new_scale is not None and min(new_scale) <= 0:
            raise ValueError(f"expected a scale > 0, got {new_scale}")
        if pose or scale:
            self.store[env].edit_prims([PrimEdit(name, pose=(x, y, z, yaw) if pose else None,
                                                 scale=new_scale, quat=tilt)])

    def _spawn_prims(self, message: dict, problems: list[str]) -> Reply:
        def build(p: dict, name: str) -> Prim:
            x, y, z = p["pose"][:3]
            yaw, tilt = orientation(p["pose"])
            pose = (x, y, z, yaw)
            look = self._look(p.get("material"), problems, f"prim {p['name']!r}",
                              Prim.__dataclass_fields__["rgba"].default)
            mesh = file_path(p["mesh_path"])
            visuals = tuple(visual(v) for v in p.get("visuals", ()))
            if mesh or visuals:  # a model's look is its own meshes' (the material tints)
                return Prim(name, pose=pose, scale=tuple(p["scale"]), mesh_path=mesh or None,
                            visuals=visuals, rgba=look["rgba"], quat=tilt)
            # Arena: a box of full extents, 1 mm a side at least
            size = tuple(max(float(s), 2 * MIN_HALF_EXTENT) for s in p["scale"])
            return Prim(name, pose=pose, scale=size, quat=tilt, **look)

        env, records = self._records(message, "prims", problems, "prim", build)
        if env is None:
            return {"ret": [False] * len(records)}
        spawned = set(self._spawn_records(env, [r for r in records if r is not None],
                                          problems))
        return {"ret": [r is not None and r.name in spawned for r in records]}

    def _spawn_records(self, env: int, records: list[Prim], problems: list[str]) -> list[str]:
        """The names spawned: all at once, else one by one (one bad asset costs one prim)."""
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                names = self.store[env].spawn_prims(records)
            problems += [str(w.message) for w in caught]
            return names
        except _ERRORS:
            names = []
            for record in records:
                try:
                    names += self.store[env].spawn_prims([record])
                except _ERRORS as exc:
                    problems.append(f"prim {record.name!r} not spawned: {_text(exc)}")
            return names

    def _spawn_walls(self, message: dict, problems: list[str]) -> Reply:
        def build(w: dict, name: str) -> Wall:
            (x0, y0, z0), (x1, y1, z1) = w["start"], w["end"]
            # Arena: a box of the z span, 1 mm high at least (as a prim's sides)
            return Wall(name, (x0, y0), (x1, y1), height=max(abs(z1 - z0), 2 * MIN_HALF_EXTENT),
                        thickness=w["thickness"],
                        z=min(z0, z1),
                        **self._look(w.get("material"), problems, f"wall {w['name']!r}",
                                     Wall.__dataclass_fields__["rgba"].default))

        env, records = self._records(message, "walls", problems, "wall", build)
        return self._all(env, records, problems, "walls", Scene.spawn_walls)

    def _all(self, env: int | None, records: list, problems: list[str], what: str,
             spawn: Callable[[Scene, list], None]) -> Reply:
        """Spawn the good records in one go; as Arena, a batch that does not go in fails
        whole."""
        if env is None:
            return {"ret": [False] * len(records)}
        try:
            spawn(self.store[env], [r for r in records if r is not None])
        except _ERRORS as exc:
            problems.append(f"{what} not spawned: {_text(exc)}")
            return {"ret": [False] * len(records)}
        return {"ret": [r is not None for r in records]}

    def _floors(self, message: dict, problems: list[str], ceiling: bool) -> Reply:
        kind = "ceiling" if ceiling else "floor"

        def build(s: dict, name: str) -> Slab:
            x, y, z = s["pos"]
            # Arena: a floor's bottom face at pos.z (ours: its top face), a ceiling at pos.z
            return Slab(name, (x, y, z + (0.0 if ceiling else SLAB_THICKNESS)), tuple(s["size"]),
                        **self._look(s.get("material"), problems, f"{kind} {s['name']!r}",
                                     Slab.__dataclass_fields__["rgba"].default))

        env, records = self._records(message, "slabs", problems, kind, build)
        return self._all(env, records, problems, f"{kind}s",
                         Scene.spawn_ceilings if ceiling else Scene.spawn_floors)

    def _spawn_floors(self, message: dict, problems: list[str]) -> Reply:
        return self._floors(message, problems, ceiling=False)

    def _spawn_ceilings(self, message: dict, problems: list[str]) -> Reply:
        return self._floors(message, problems, ceiling=True)

    # ------------------------------------------------------------ robots
    def _spawn_urdf(self, message: dict, problems: list[str]) -> Reply:
        env = self._env(message, problems)
        if env is None:
            return {"path": ""}
        base = body_id(message["base_frame"]) if message["base_frame"] else ""
        taken = set(self.store[env].entities)
        name = self._unique(env, f"{body_id(message['name'])}_{base}" if base else
                            message["name"], taken)
        try:
            if not _ID_BAD.sub("_", str(message["name"])).strip("_"):
                raise ValueError(f"expected a name (letters, digits, '_'), got "
                                 f"{message['name']!r}")
            robot_name(name, max(self.store.num_envs, self.max_envs or 0))  # the envs to come
            x, y = message["pose"][:2]
            urdf = message["urdf_path"]
            self.naming[(env, name)] = naming(message) | (
                {"arena": True} if self.grow is not None else {})
            self.store[env].spawn_urdf(name, urdf, pose=(x, y, yaw_of(message["pose"])),
                                  package_paths=self.commands.packages(urdf))
        except _ERRORS as exc:
            self.naming.pop((env, name), None)
            problems.append(f"robot {message['name']!r} not spawned: {_text(exc)}")
            return {"path": ""}
        return {"path": name}

    def _joint_commands(self, message: dict, problems: list[str]) -> Reply:
        """An Arena session robot's joint_commands_{velocity,position}: each entry through
        its servo on its own; one the robot has no servo for (a caster, a mimic joint), or
        a value that is not finite, is skipped and named (the rest apply)."""
        env, mode, robot = message["env"], message["mode"], message["robot"]
        names, values = list(message["names"]), list(message["values"])
        try:
            prefix = self.store.scene(env).robot(robot).prefix
        except _ERRORS as exc:  # deleted since the node took the message
            problems.append(f"{mode} command of {robot!r} in env {env}: {_text(exc)}")
            return {}
        skipped = []
        for name, value in zip(names, values, strict=False):
            try:
                self.sim.set_joints(env, [(prefix + name, value)], mode)
            except _ERRORS as exc:
                skipped.append(f"{name!r} ({_text(exc).split(';')[0]})")
        if len(values) != len(names):
            skipped.append(f"{abs(len(names) - len(values))} entries without a {mode}")
        if skipped:
            problems.append(f"{mode} command of {robot!r} in env {env}: skipped "
                            f"{', '.join(skipped)}")
        return {}

    # ------------------------------------------------------------ pedestrians
    def _ped(self, p: dict, name: str, actor: str) -> Pedestrian:
        """Our request of an Arena Pedestrian; its joint angles pose only a worn actor."""
        x, y = p["pose"][:2]
        return Pedestrian(name, pose=(x, y, yaw_of(p["pose"])), actor=actor or None,
                          joints=(p.get("joints") or None) if actor else None)

    def _spawn_pedestrians(self, message: dict, problems: list[str]) -> Reply:
        results = []
        for p in message["pedestrians"]:
            env, name = split_env(p["name"])
            if env is None:
                problems.append(f"pedestrian {p['name']!r}: expected an 'env_N/' name prefix")
                results.append(FAILED_PARSE)
            elif self._env({"env": env}, problems) is None:
                results.append(FAILED_CREATE)
            else:
                results.append(self._place(env, name, p, problems, spawn=True))
        return {"results": results}

    def _place(self, env: int, name: str, p: dict, problems: list[str], spawn: bool) -> int:
        """Stand (spawn), move or dress one pedestrian; its arena_people_msgs result. A
        spawn of a name that exists teleports it; a model_uri it does not wear yet dresses
        it anew where it stands (read once per name)."""
        full = f"env_{env}/{name}"
        worn = self._uris.get(full, "")
        want = p.get("model_uri") or worn
        known = name in list(self.store[env].pedestrians.slots)
        try:
            if known and want == worn:
                if spawn:
                    self.store.move_pedestrians([self._ped(p, name, worn)], env)
                else:
                    self.store.update_pedestrians([self._ped(p, name, worn)], env)
                return SUCCESS
            if not known and not spawn:
                problems.append(f"pedestrian {full!r}: not spawned")
                return NOT_FOUND
            if known:
                self.store.delete_pedestrians([name], env)
            try:
                self.store.spawn_pedestrians([self._ped(p, name, want)], env)
            except _ERRORS as exc:
                if not want:
                    raise
                problems.append(f"pedestrian {full!r}: actor {want!r} not worn ({_text(exc)}); "
                                "a capsule stands in")
                self.store.spawn_pedestrians([self._ped(p, name, "")], env)
            self._uris[full] = want
            return SUCCESS
        except _ERRORS as exc:
            problems.append(f"pedestrian {full!r}: {_text(exc)}")
            return FAILED_CREATE if spawn else NOT_FOUND

    def _known(self, p: dict) -> tuple[int, str] | None:
        env, name = split_env(p["name"])
        if env is None or not 0 <= env < self.store.num_envs:
            return None
        return (env, name) if name in list(self.store[env].pedestrians.slots) else None

    def _move_pedestrians(self, message: dict, problems: list[str]) -> Reply:
        results = []
        for p in message["pedestrians"]:
            found = self._known(p)
            if found is None:
                problems.append(f"pedestrian {p['name']!r}: not spawned")
                results.append(NOT_FOUND)
                continue
            env, name = found
            try:
                worn = self._uris.get(p["name"], "")
                self.store.move_pedestrians([self._ped(p, name, worn)], env)
                results.append(SUCCESS)
            except _ERRORS as exc:
                problems.append(f"pedestrian {p['name']!r}: {_text(exc)}")
                results.append(NOT_FOUND)
        return {"results": results}

    def _update_pedestrians(self, message: dict, problems: list[str]) -> Reply:
        """UpdatePedestrians and the arena_peds stream: continuous motion; a model_uri not
        worn yet dresses the pedestrian (once per name)."""
        results = []
        for p in message["pedestrians"]:
            env, name = split_env(p["name"])
            if env is None or not 0 <= env < self.store.num_envs:
                problems.append(f"pedestrian {p['name']!r}: not spawned")
                results.append(NOT_FOUND)
            else:
                results.append(self._place(env, name, p, problems, spawn=False))
        return {"results": results}

    def _peds(self, message: dict, problems: list[str]) -> Reply:
        return self._update_pedestrians(message, problems)

    def _delete_pedestrians(self, message: dict, problems: list[str]) -> Reply:
        for full in message["names"]:  # Arena answers SUCCESS for every name
            found = self._known({"name": full})
            if found is not None:
                self.store.delete_pedestrians([found[1]], found[0])
                self._uris.pop(full, None)
        return {"results": [SUCCESS] * len(message["names"])}

    # ------------------------------------------------------------ lights
    def _lights(self, message: dict, problems: list[str], change: Callable) -> Reply:
        items = list(message.get("lights") or message.get("names") or [])
        env = self._env(message, problems)
        if env is None:
            return {"ret": [False] * len(items)}
        return {"ret": self.lights.change(env, items, change, problems)}

    def _spawn_lights(self, message: dict, problems: list[str]) -> Reply:
        return self._lights(message, problems, lambda t, i: t.spawn(light_of(i, body_id)))

    def _set_lights(self, message: dict, problems: list[str]) -> Reply:
        return self._lights(message, problems, set_light)

    def _delete_lights(self, message: dict, problems: list[str]) -> Reply:
        return self._lights(message, problems, lambda t, name: t.remove(name))


def file_path(uri: str) -> str:
    """A mesh path as a request gives it: `file://` stripped (an absolute path stays
    absolute), blanks trimmed."""
    uri = uri.strip()
    return uri[len("file://"):] if uri.startswith("file://") else uri


def visual(v: dict) -> Shape:
    """A Prim message's further visual (Visual.msg) as a Shape in the prim's frame: its
    mesh, pose, scale (an unset axis: 1) and name (glow_<material>: a glow visual)."""
    x, y, z, w, qx, qy, qz = v["pose"]
    quat = (w, qx, qy, qz) if any((w, qx, qy, qz)) else (1.0, 0.0, 0.0, 0.0)
    mesh = file_path(v["mesh_path"])
    if not mesh:
        raise ValueError(f"visual {v['name']!r}: expected a mesh_path, got none")
    return Shape(mesh, pos=(x, y, z), quat=quat,
                 scale=tuple(s if s else 1.0 for s in v["scale"]), name=v["name"])


def naming(m: dict) -> dict:
    """The topics and frames an Arena SpawnUrdf request names (frames.describe merges them
    into the robot's entry): frames `tf_prefix` + name, odom on `odom_topic` (none when
    empty), joint states and commands under `mujoco/` beside `joint_states_topic`, cmd_vel on
    `cmd_vel_topic`, the listed sensors (sensor_topics.listed: each on its topic and in its
    frame; an empty list keeps our names), and an identity map -> odom in /tf."""
    out: dict[str, Any] = {"tf_prefix": m["tf_prefix"], "map": True}
    if m["base_frame"]:
        out["base"] = m["base_frame"]
    topics = {"odom": topic(m["odom_topic"], "odom_topic") if m["odom_topic"] else ""}
    if m["joint_states_topic"]:
        space = topic(m["joint_states_topic"], "joint_states_topic").removesuffix(
            "/joint_states")
        topics["joint_states"] = f"{space}/mujoco/joint_states"
        out["commands"] = f"{space}/mujoco"
        for mode in ("velocity", "position"):  # where the joint commands are taken
            topic(f"{space}/mujoco/joint_commands_{mode}", "joint_states_topic's commands")
    if m["cmd_vel_topic"]:
        out["cmd_vel"] = topic(m["cmd_vel_topic"], "cmd_vel_topic")
    out["sensors"] = [{"type": s["type"], "frame": s["frame"], "sensor": s["sensor"],
                       "topic": topic(s["topic"], f"sensor {s['name']!r} topic")}
                      for s in m["sensors"]]
    out["topics"] = topics
    return out


def _text(exc: BaseException) -> str:
    return str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
