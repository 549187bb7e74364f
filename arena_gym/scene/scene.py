"""One env's scene: a live MjSpec, its compiled MjModel/MjData, and the names it holds.

Edits that cannot fail on assets (box spawns, deletions) only edit the spec and mark the
scene dirty; the next query or step compiles once for the whole burst. Robot spawns
compile before they return, on a copy of the spec, so a failure leaves the scene exactly
as it was. A recompile carries time and the state of every surviving joint by name.
"""

from __future__ import annotations

import copy
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import mujoco
import numpy as np

from arena_gym.assets.meshes import PathRefused, inside
from arena_gym.assets.mjcf import one_line
from arena_gym.assets.urdf import package_path_list, rewrite_urdf
from arena_gym.errors import AssetWarning, SceneError, SpawnError, unknown
from arena_gym.people.pedestrians import POOL_SIZE
from arena_gym.people.pool import PedestrianPool
from arena_gym.scene import builders, mesh_prims, models, planar_base, urdf_models
from arena_gym.scene.names import check_clashes, element_names, planned_names
from arena_gym.scene.requests import Prim, PrimEdit, Slab, Wall
from arena_gym.scene.robot import RobotInfo, add_collision_sensors, build_robot_spec
from arena_gym.scene.sensor_mounts import find_model_params

_FULL = mujoco.mjtState.mjSTATE_FULLPHYSICS
_COMPILES_LOCK = threading.Lock()

# spec collections whose elements a robot brings, deleted by name prefix with it
_NAMED_COLLECTIONS = ("actuators", "sensors", "tendons", "equalities", "pairs", "meshes",
                      "materials", "textures", "keys", "numerics", "texts")


@dataclass
class Entity:
    """A spawned thing: `kind` is robot, model (MJCF), prim, wall, floor or ceiling. A wall
    is a geom of the world body (builders.add_wall): its `body` is "world", `geom` names it."""

    name: str
    kind: str
    body: str  # full MuJoCo name of its root body
    record: object  # RobotInfo, ModelInfo, Prim, Wall or Slab
    geom: str = ""  # full MuJoCo name of a wall's geom


class Scene:
    """One env_id's world. Use it through `SceneStore`, which validates env ids."""

    # compiles of every scene of the process so far, counted after each one's compile_count:
    # unchanged, no scene recompiled (one read for checks made at every tick)
    compiles = 0

    def __init__(self, env_id: int, timestep: float = 0.002,
                 pedestrian_pool: int = POOL_SIZE, world: mujoco.MjSpec | None = None) -> None:
        """`world`: the spec the env starts from (a copy of it; models.model_world: a loaded
        model's empty world); None: the navigation base world at `timestep`."""
        self.env_id = env_id
        self.prefix = f"env_{env_id}/"
        # a navigation world: its own options, ground, lights, static bodies asleep
        self.navigation = world is None
        self.spec = builders.base_world(timestep) if world is None else world.copy()
        self.path_roots: tuple[Path, ...] | None = None  # set by SceneStore(path_roots=...)
        self.entities: dict[str, Entity] = {}
        # the env's pedestrians (arena_gym.people.pool): built by the first one spawned
        self.pedestrians = PedestrianPool(self, pedestrian_pool)
        self.compile_count = 0
        self.version = 0  # bumped whenever model or data are replaced or edited
        self._pending: list[str] = []  # entities added since the last good compile
        self._dirty = True
        self._model: mujoco.MjModel | None = None
        self._data: mujoco.MjData | None = None
        # set by a simulator that keeps this env's state elsewhere while stepping
        self.on_access: Callable[[int], None] | None = None
        # set by a simulator to learn, without polling every env, that something changed
        self.on_change: Callable[[], None] | None = None
        # stepped with mj_step on its own MjData, never in a batch: a Python function fills
        # its user sensors inside the step (arena_gym.sim.sensor_callbacks)
        self.steps_alone = False
        self.compile()

    # ---------------------------------------------------------------- compiling
    @property
    def _dirty(self) -> bool:
        return self.__dirty

    @_dirty.setter
    def _dirty(self, value: bool) -> None:
        self.__dirty = value
        if value and getattr(self, "on_change", None) is not None:
            self.on_change()

    @property
    def version(self) -> int:
        """Bumped whenever model or data are replaced, or the model is edited in place."""
        return self.__version

    @version.setter
    def version(self, value: int) -> None:
        self.__version = value
        if getattr(self, "on_change", None) is not None:
            self.on_change()

    def sync(self) -> None:
        """Bring model and data up to date with a simulator that keeps this env's state
        elsewhere (it pushes edits of `data` back before its next step)."""
        if self.on_access is not None:
            self.on_access(self.env_id)

    def edited(self) -> None:
        """The spec changed: compile before the next query or step."""
        self._dirty = True

    def compile(self) -> None:
        """Compile the spec now, carrying state; roll pending additions back on failure."""
        self.sync()
        try:
            self._install(*self._compile_spec(self.spec))
        except ValueError as exc:
            culprits = list(self._pending)
            self._remove_entities(culprits)
            mesh_prims.prune_assets(self.spec)
            self._pending.clear()
            self._install(*self._compile_spec(self.spec))
            named = ", ".join(repr(c) for c in culprits) or "the scene"
            raise SpawnError(
                f"env {self.env_id}: {named} did not compile and was removed: {str(exc).strip()}"
            ) from None

    def _compile_spec(self, spec: mujoco.MjSpec) -> tuple[mujoco.MjModel, mujoco.MjData]:
        if self._model is None:
            model = spec.compile()
            data = mujoco.MjData(model)
        else:
            model, data = spec.recompile(self._model, self._data)
        forward_all(model, data)
        return model, data

    def _install(self, model: mujoco.MjModel, data: mujoco.MjData) -> None:
        self._model, self._data = model, data
        if self.pedestrians.built:
            self.pedestrians.installed()
        self._pending.clear()
        self._dirty = False
        self.compile_count += 1
        with _COMPILES_LOCK:
            Scene.compiles += 1
        self.version += 1

    def _renew(self, model: mujoco.MjModel) -> None:
        """Install an edited copy of the model with a fresh MjData in the same state. With
        sleeping on (builders.base_world), MuJoCo computes a static body's pose once per
        MjData, so a static body moved in place needs new data; a new model object also
        renews whatever others keep per model (the sensors' scratch data)."""
        state = np.empty(mujoco.mj_stateSize(model, _FULL))
        mujoco.mj_getState(self._model, self._data, state, _FULL)
        data = mujoco.MjData(model)
        mujoco.mj_setState(model, data, state, _FULL)
        forward_all(model, data)
        self._model, self._data = model, data
        self.version += 1

    def flush(self) -> None:
        """Compile if edits are pending."""
        if self._dirty:
            self.compile()

    @property
    def compiled(self) -> mujoco.MjModel:
        """The last compiled model as it is: no compile, no sync (names and layout)."""
        return self._model  # type: ignore[return-value]

    @property
    def compiled_data(self) -> mujoco.MjData:
        """The data of the last compile as it is: no compile, no sync (a simulator's own)."""
        return self._data  # type: ignore[return-value]

    @property
    def model(self) -> mujoco.MjModel:
        self.flush()
        self.sync()
        return self._model  # type: ignore[return-value]

    @property
    def data(self) -> mujoco.MjData:
        self.flush()
        self.sync()
        return self._data  # type: ignore[return-value]

    # ---------------------------------------------------------------- naming
    def full_name(self, name: str) -> str:
        return self.prefix + name

    def _claim(self, name: str) -> None:
        if name in self.entities:
            raise SpawnError(
                f"env {self.env_id}: duplicate name {name!r}: a {self.entities[name].kind} "
                "of that name exists"
            )

    def entity(self, name: str) -> Entity:
        if name not in self.entities:
            raise unknown(f"entity in env {self.env_id}", name, self.entities)
        return self.entities[name]

    def robot(self, name: str) -> RobotInfo:
        entity = self.entity(name)
        if entity.kind != "robot":
            raise SceneError(f"env {self.env_id}: {name!r} is a {entity.kind}, expected a robot")
        return entity.record  # type: ignore[return-value]

    def robots(self) -> list[RobotInfo]:
        return [e.record for e in self.entities.values() if e.kind == "robot"]  # type: ignore[misc]

    # ---------------------------------------------------------------- spawning
    def spawn_urdf(
        self,
        name: str,
        urdf: str | Path,
        pose: tuple[float, float, float] = (0.0, 0.0, 0.0),
        package_paths: Iterable[str | Path] = (),
        rollers: bool = True,
        model_params: str | Path | None = None,
        base: str = "wheeled",
        imu: bool = True,
    ) -> RobotInfo:
        """Spawn a URDF robot at `pose` (x, y, yaw) on its `base`: "wheeled" (the URDF as
        written, on a free joint) or "planar" (one rigid body on planar joints,
        scene/planar_base.py). All or nothing: a robot that does not compile leaves the
        scene as it was. `imu` False: its IMUs' MuJoCo sensors wait until a reading asks
        for them (sensor_mounts.mount_imu_sensors; MuJoCo computes an accelerometer at
        every physics step)."""
        if not isinstance(name, str) or not name or "/" in name:
            raise SpawnError(f"robot name: expected a non-empty name without '/', got {name!r}")
        self._claim(name)
        pose = _pose3(name, pose)
        label = f"robot {name!r}"
        packages = package_path_list(package_paths, self.path_roots)  # a list, not a str
        rewritten = rewrite_urdf(urdf, packages, label=label, path_roots=self.path_roots)
        if model_params is not None and self.path_roots is not None and not inside(
                Path(model_params), self.path_roots):
            raise SpawnError(f"model_params {str(model_params)!r}: expected a path inside the "
                             "allowed roots")
        params = find_model_params(urdf, model_params)  # its laser block backs a missing lidar
        robot_spec, info = build_robot_spec(name, rewritten, label, rollers=rollers,
                                            model_params=params, package_paths=packages,
                                            base=base, timestep=self.spec.option.timestep,
                                            imu=imu)
        self.flush()
        self.sync()
        prefix = self.full_name(name) + "/"
        self.check_fragment(robot_spec, f"robot {name!r}", prefix)
        trial = self.spec.copy()
        frame = trial.worldbody.add_frame(
            name=prefix + "spawn", pos=[pose[0], pose[1], info.ground_clearance],
            quat=builders.yaw_quat(pose[2]),
        )
        try:
            trial.attach(robot_spec, prefix=prefix, frame=frame)
            builders.never_sleep(trial.body(prefix + info.root_body))
            if info.base == "planar":
                planar_base.place(trial, prefix, pose)
                builders.exclude_ground(trial, prefix)
            add_collision_sensors(trial, info.prefixed(prefix))
            model, data = self._compile_spec(trial)
        except ValueError as exc:
            raise SpawnError(
                f"env {self.env_id}: robot {name!r} rejected: {str(exc).strip()}") from None
        info = info.prefixed(prefix)
        self.spec = trial
        self._install(model, data)
        self.entities[name] = Entity(name, "robot", info.root_body, info)
        return info

    def spawn_mjcf(self, name: str, mjcf: str | Path,
                   pose: tuple[float, float, float] = (0.0, 0.0, 0.0),
                   srdf: str | Path | None = None,
                   base: str | Path | None = None) -> models.ModelInfo:
        """Attach an MJCF model (a path, or the XML text) under a frame at `pose` (x, y, yaw;
        heights are the model's own), every element prefixed `env_<i>/<name>/`, its
        sensors, actuators, tendons, keyframes and assets along. The scene's options and
        sizes apply (an AssetWarning names the model's that differ). All or nothing: a
        model that does not compile leaves the scene as it was. A URDF (a `.urdf` path or
        `<robot>` text) loads as a model too, with an optional SRDF (urdf_models.py).
        `base`: the folder MJCF text resolves its includes and assets in."""
        if not isinstance(name, str) or not name or "/" in name:
            raise SpawnError(f"model name: expected a non-empty name without '/', got {name!r}")
        self._claim(name)
        pose = _pose3(name, pose, "model")
        label = f"model {name!r}"
        spec, source = urdf_models.load_model(mjcf, label, self.path_roots, srdf, base)
        self.flush()
        self.sync()
        prefix = self.full_name(name) + "/"
        info, differ = models.prepare(spec, self.spec, name, source,
                                      as_world=not self.navigation)
        self.check_fragment(spec, label, prefix)
        trial = self.spec.copy()
        frame = trial.worldbody.add_frame(name=prefix + "spawn", pos=[pose[0], pose[1], 0.0],
                                          quat=builders.yaw_quat(pose[2]))
        where = f"env {self.env_id}: {label} ({source})"
        try:
            with models.mujoco_warnings(where) as said:
                alone = spec.compile()  # first: attaching (and copying) drops what names no target
                bad = models.non_finite(alone)
                if bad:  # MuJoCo takes NaN (with a warning) and steps it silently
                    raise ValueError(f"expected finite numbers, got {bad}")
                trial.attach(spec, prefix=prefix, frame=frame)
                model, data = self._compile_spec(trial)
        except ValueError as exc:
            raise SpawnError(f"{where} rejected: {one_line(exc)}") from None
        said.tell(stacklevel=2)
        if differ:
            warnings.warn(f"{where} sets {', '.join(differ)}; "
                          "the scene's values apply (every env steps alike)", AssetWarning,
                          stacklevel=2)
        info = info.prefixed(prefix)
        self.spec = trial
        self._install(model, data)
        self.entities[name] = Entity(name, "model", info.root_body, info)
        return info

    def _add_static(self, name: str, kind: str, record: object, build: Callable) -> None:
        self._claim(name)
        full = self.full_name(name)
        built = build(self.spec, full, record)
        if isinstance(built, mujoco.MjsGeom):  # a wall: a geom of the world body
            self.entities[name] = Entity(name, kind, "world", record, geom=built.name)
        else:
            self.entities[name] = Entity(name, kind, full, record)
        self._pending.append(name)
        self._dirty = True

    def spawn_prims(self, prims: Iterable[Prim]) -> list[str]:
        """Spawn boxes and model prims; returns the names spawned. A model prim whose mesh
        cannot be used is left out with an AssetWarning (one bad asset costs one obstacle)."""
        prims = _checked(prims, Prim, "spawn_prims")
        self._check_new(p.name for p in prims)
        prepared = self._prepare([p for p in prims if p.is_model])
        prims = [p for p in prims if not p.is_model or p.name in prepared]
        self._add_all("prim", prims, lambda spec, full, prim: self._build_prim(
            spec, full, prim, prepared))
        return [p.name for p in prims]

    def _prepare(self, models: list[Prim]) -> dict[str, mesh_prims.Prepared]:
        if not models:
            return {}
        try:
            prepared, problems = mesh_prims.prepare(models, self.path_roots)
        except PathRefused as exc:
            raise SpawnError(f"env {self.env_id}: spawn_prims refused: {exc}") from None
        for problem in problems:
            warnings.warn(f"env {self.env_id}: {problem}", AssetWarning, stacklevel=4)
        return prepared

    @staticmethod
    def _build_prim(spec: mujoco.MjSpec, full: str, prim: Prim,
                    prepared: dict[str, mesh_prims.Prepared]) -> mujoco.MjsBody:
        if prim.is_model:
            return mesh_prims.add_model(spec, full, replace(prepared[prim.name], prim=prim))
        return builders.add_box(spec, full, prim)

    def spawn_walls(self, walls: Iterable[Wall]) -> None:
        walls = _checked(walls, Wall, "spawn_walls")
        self._add_all("wall", walls, builders.add_wall)

    def spawn_floors(self, floors: Iterable[Slab]) -> None:
        """Floor slabs (arena_gym.scene.requests.Slab), all or none."""
        self._spawn_slabs(floors, ceiling=False)

    def spawn_ceilings(self, ceilings: Iterable[Slab]) -> None:
        """Ceiling slabs (invisible to the lidar and cameras looking up), all or none."""
        self._spawn_slabs(ceilings, ceiling=True)

    def _spawn_slabs(self, slabs: Iterable[Slab], ceiling: bool) -> None:
        slabs = _checked(slabs, Slab, "spawn_ceilings" if ceiling else "spawn_floors")
        kind = "ceiling" if ceiling else "floor"
        self._add_all(kind, slabs,
                      lambda spec, n, r: builders.add_slab(spec, n, r, ceiling))

    def _add_all(self, kind: str, records: list, build: Callable) -> None:
        """All-or-nothing: check every name the request adds, then add it all."""
        self._check_new(r.name for r in records)
        if not records:
            return
        fulls = {self.full_name(r.name): r.name for r in records}
        added = planned_names([(self.full_name(r.name), r) for r in records], build)
        check_clashes(self.env_id, lambda full: f"{kind} {_owning(full, fulls)!r}", added,
                      element_names(self.spec), self._owner)
        for record in records:
            self._add_static(record.name, kind, record, build)

    def check_fragment(self, fragment: mujoco.MjSpec, what: str, prefix: str = "") -> None:
        """Refuse `fragment` (a spec about to be attached with `prefix`) when any of its
        element names is taken in this scene: a SpawnError naming `what` and the holder."""
        check_clashes(self.env_id, lambda _: what, element_names(fragment, prefix),
                      element_names(self.spec), self._owner)

    def _owner(self, full: str) -> str:
        """Who holds a full element name: 'robot 'burger'', 'prim 'box0'' or 'the world'."""
        fulls = {self.full_name(n): n for n in self.entities}
        name = _owning(full, fulls)
        return f"{self.entities[name].kind} {name!r}" if name in self.entities else "the world"

    def _check_new(self, names: Iterable[str]) -> None:
        """Reject a request whose names repeat, or repeat an entity's, before adding any."""
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise SpawnError(f"env {self.env_id}: duplicate name {name!r} in the request")
            seen.add(name)
            self._claim(name)

    # ---------------------------------------------------------------- editing
    def edit_prims(self, edits: Iterable[PrimEdit]) -> None:
        edits = _checked(edits, PrimEdit, "edit_prims")
        for edit in edits:
            entity = self.entity(edit.name)
            if entity.kind != "prim":
                raise SceneError(f"edit_prims: {edit.name!r} is a {entity.kind}, expected a prim")
        for edit in edits:
            self._edit(self.entities[edit.name], edit)

    def _edit(self, entity: Entity, edit: PrimEdit) -> None:
        prim: Prim = entity.record  # type: ignore[assignment]
        body = self.spec.body(entity.body)
        if edit.scale is not None and prim.is_model:  # meshes at the new scale: rebuild
            rescaled = replace(prim, scale=edit.scale)
            prepared = self._prepare([rescaled])
            if prim.name in prepared:
                self.spec.delete(body)
                body = self._build_prim(self.spec, entity.body, rescaled, prepared)
                mesh_prims.prune_assets(self.spec)
                self._dirty = True
        elif edit.scale is not None:
            builders.set_box_size(body, edit.scale)
            self._dirty = True  # sizes change bounding volumes: recompile
        if edit.pose is not None:
            x, y, z, yaw = edit.pose
            body.pos = [x, y, z]
            body.quat = list(edit.quat) if edit.quat is not None else builders.yaw_quat(yaw)
            if not self._dirty:  # move in place: no recompile for a pose
                self.sync()
                model, data = self._model, self._data
                b = model.body(entity.body).id  # type: ignore[union-attr]
                mocap = model.body_mocapid[b]  # type: ignore[union-attr]
                if mocap >= 0:  # state: the simulator pushes it before the next step
                    data.mocap_pos[mocap] = body.pos  # type: ignore[union-attr]
                    data.mocap_quat[mocap] = body.quat  # type: ignore[union-attr]
                    mujoco.mj_kinematics(model, data)
                else:
                    model = copy.copy(model)
                    model.body_pos[b] = body.pos
                    model.body_quat[b] = body.quat
                    self._renew(model)
        entity.record = replace(prim, pose=edit.pose or prim.pose, scale=edit.scale or prim.scale,
                                quat=edit.quat if edit.pose is not None else prim.quat)

    # ---------------------------------------------------------------- deleting
    def _matching(self, names: Iterable[str]) -> list[str]:
        """Entity names selected by `names`; a name ending in '/' selects by prefix."""
        selected: list[str] = []
        for name in names:
            if isinstance(name, str) and name.endswith("/"):
                selected += [e for e in self.entities if e.startswith(name)]
            else:
                self.entity(name)
                selected.append(name)
        return list(dict.fromkeys(selected))

    def delete(self, names: Iterable[str]) -> list[str]:
        if isinstance(names, str):
            names = [names]
        selected = self._matching(names)
        if selected:
            self.sync()
            self._remove_entities(selected)
            mesh_prims.prune_assets(self.spec)  # the next compile frees what they used
            self._dirty = True
        return selected

    def reset_world(self) -> None:
        self.delete(list(self.entities))
        self.pedestrians.delete(list(self.pedestrians.slots))

    def _remove_entities(self, names: list[str]) -> None:
        for name in names:
            entity = self.entities.pop(name)
            if entity.geom:
                self.spec.delete(self.spec.geom(entity.geom))
            elif entity.kind != "model" and (body := self.spec.body(entity.body)) is not None:
                self.spec.delete(body)  # (a model's bodies go with its frame)
            if entity.kind in ("robot", "model"):
                self._remove_robot_elements(entity.record.prefix)  # type: ignore[attr-defined]
            if name in self._pending:
                self._pending.remove(name)

    def _remove_robot_elements(self, prefix: str) -> None:
        for exclude in list(self.spec.excludes):
            if exclude.bodyname1.startswith(prefix) or exclude.bodyname2.startswith(prefix):
                self.spec.delete(exclude)
        for collection in _NAMED_COLLECTIONS:
            for element in list(getattr(self.spec, collection)):
                if element.name.startswith(prefix):
                    self.spec.delete(element)
        frame = self.spec.frame(prefix + "spawn")
        if frame is not None:
            self.spec.delete(frame)

    # ---------------------------------------------------------------- queries
    def body_name(self, name: str) -> str:
        """The full MuJoCo body name for an entity or pedestrian name, a relative or a full
        body name."""
        if name in self.entities:
            return self.entities[name].body
        if name in self.pedestrians.slots:
            return self.pedestrians.bodies[self.pedestrians.slots[name]]
        self.flush()
        model = self._model  # names only: no state sync (a staging thread may ask)
        for candidate in (name, self.full_name(name)):
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, candidate) >= 0:
                return candidate
        known = [model.body(i).name for i in range(1, model.nbody)]
        raise unknown(f"body in env {self.env_id}", name, known + list(self.entities))

    def get_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """World position (3,) and quaternion (w, x, y, z) of a body, or of a wall's box."""
        entity = self.entities.get(name)
        if entity is not None and entity.geom:
            geom = self.model.geom(entity.geom)
            return geom.pos.copy(), geom.quat.copy()  # world geoms: their pose is the model's
        body = self.body_name(name)
        model, data = self.model, self.data
        mujoco.mj_kinematics(model, data)
        b = model.body(body).id
        return data.xpos[b].copy(), data.xquat[b].copy()


def _owning(full: str, fulls: dict[str, str]) -> str:
    """The entity name among `fulls` (full name -> name) whose elements include `full`."""
    for root, name in fulls.items():
        if full == root or full.startswith(root + "/"):
            return name
    return full


def forward_all(model: mujoco.MjModel, data: mujoco.MjData) -> None:
    """mj_forward that poses static bodies too. With sleeping on (builders.base_world),
    MuJoCo poses them once per MjData and skips them after; a recompile carries an MjData
    whose static bodies may be new or moved."""
    flags = model.opt.enableflags
    model.opt.enableflags = flags & ~int(mujoco.mjtEnableBit.mjENBL_SLEEP)
    try:
        mujoco.mj_forward(model, data)
    finally:
        model.opt.enableflags = flags


def _pose3(name: str, pose: object, what: str = "robot") -> tuple[float, float, float]:
    try:
        values = tuple(float(v) for v in pose)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        values = ()
    if len(values) != 3 or not np.all(np.isfinite(values)):
        raise SpawnError(f"{what} {name!r} pose: expected (x, y, yaw) finite numbers, got {pose!r}")
    return values  # type: ignore[return-value]


def _checked(items: Iterable[object], kind: type, what: str) -> list:
    items = list(items) if not isinstance(items, kind) else [items]
    for item in items:
        if not isinstance(item, kind):
            raise SceneError(f"{what}: expected {kind.__name__} records, got {type(item).__name__}")
    return items
