"""Copies of a group's scenes for casting only: the same bodies and joints (so the group's
states load as they are), without geoms a cast need not visit.

MuJoCo's ray functions spend time per ray and geom even on geoms they skip (by group, by body;
docs/performance.md), so a lidar fan over a scene of hidden collision pieces and robot parts
pays for all of them on every ray. A copy lacks them; its geom ids map back to the scene's
(`keep`). Groups and colours switched on a scene's own model for a cast (a lidar hides its
carrier so) are copied onto the copy before each cast."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import mujoco.batch
import numpy as np

from arena_gym.scene.scene import Scene


@dataclass
class RayCopies:
    """Cast-only copies of a batch group's scenes without the geoms a cast need not visit, and the
    map from their geom ids back to the scenes'."""

    scenes: list[Scene]
    models: list[mujoco.MjModel]
    batch: mujoco.batch.Batch
    keep: list[np.ndarray]  # per env: scene geom id of each geom of the copy
    skipped: tuple[np.ndarray, np.ndarray]  # (env, geom) dropped as skipped by group

    @classmethod
    def build(cls, scenes: list[Scene], drop: list[np.ndarray], nthread: int,
              skipped: list[np.ndarray] | None = None,
              frame: str | None = None) -> RayCopies | None:
        """Copies without the geoms `drop` (scene ids, per env) and, if given, everything
        in the spec frame `frame` (deleted at once: one by one is quadratic, and a map has
        thousands of walls; its geoms must be in `drop`). `skipped` (per env, within
        `drop`): those dropped only because the casts' mask skips their group now. None
        where the copies do not share one layout, or a copy's geoms do not line up with
        the scene's."""
        models, keep = [], []
        for scene, gone in zip(scenes, drop, strict=True):
            gone = np.setdiff1d(gone, _named_by_sensors(scene.compiled))  # they stay
            spec = scene.spec.copy()
            geoms = list(spec.geoms)
            framed = set()
            if frame is not None:  # (read before the frame goes: its geoms go with it)
                framed = {i for i, g in enumerate(geoms) if g.frame is not None
                          and g.frame.name == frame}
                spec.delete(spec.frame(frame))
            for i in sorted(set(gone.tolist()) - framed):
                spec.delete(geoms[i])
            used = {g.meshname for g in spec.geoms}
            for mesh in [m for m in spec.meshes if m.name not in used]:
                spec.delete(mesh)  # compiling a mesh costs: the copy holds only those it casts
            # never stepped, only posed for rays: without sleeping, every cast poses static
            # bodies too (sleeping poses them once per MjData, at times a ray never sees)
            spec.option.enableflags &= ~int(mujoco.mjtEnableBit.mjENBL_SLEEP)
            model = spec.compile()
            ids = np.delete(np.arange(scene.compiled.ngeom, dtype=np.int32), gone)
            if not _lined_up(model, scene.compiled, ids):
                return None
            models.append(model)
            keep.append(ids)
        try:
            batch = mujoco.batch.Batch(models[0], len(models), nthread=nthread, persistent=True)
            batch.set_models(models)
        except ValueError:  # copies of one group that differ in layout
            return None
        skipped = skipped or [np.zeros(0, dtype=np.int64)] * len(scenes)
        envs = np.concatenate([np.full(len(k), e) for e, k in enumerate(skipped)])
        return cls(scenes, models, batch, keep,
                   (envs.astype(np.int64), np.concatenate(skipped).astype(np.int64)))

    def sync(self, rows: list[int], states: np.ndarray) -> None:
        """Load the scenes' states and their in-place group and colour switches."""
        for r in rows:
            scene, model, keep = self.scenes[r].compiled, self.models[r], self.keep[r]
            model.geom_group[:] = scene.geom_group[keep]
            model.geom_rgba[:] = scene.geom_rgba[keep]
            model.mat_rgba[:] = scene.mat_rgba
        self.batch.state[rows] = states[rows]

    def dropped_unseen(self, geomgroup: np.ndarray) -> bool:
        """Whether every dropped geom but those cast apart is one a cast with `geomgroup`
        skips anyway (by group, now); else a cast of the copy would miss it."""
        if not self.skipped[0].size:
            return True
        groups = np.stack([s.compiled.geom_group for s in self.scenes])[self.skipped]
        return not geomgroup[np.clip(groups, 0, mujoco.mjNGROUP - 1)].any()

    def to_scene(self, rows: list[int] | None, geomid: np.ndarray) -> np.ndarray:
        """The scenes' geom ids of a cast's geom ids (-1 stays)."""
        rows = range(len(self.scenes)) if rows is None else rows
        for i, r in enumerate(rows):
            hit = geomid[i] >= 0
            geomid[i][hit] = self.keep[r][geomid[i][hit]]
        return geomid


def _named_by_sensors(model: mujoco.MjModel) -> np.ndarray:
    """Geoms a sensor names (a contact sensor's, say): a copy keeps them (a cast that sees
    them there too finds the same hits), for the sensors, which make part of the state."""
    geom = mujoco.mjtObj.mjOBJ_GEOM
    return np.union1d(model.sensor_objid[model.sensor_objtype == geom],
                      model.sensor_refid[model.sensor_reftype == geom])


def _lined_up(copy: mujoco.MjModel, model: mujoco.MjModel, keep: np.ndarray) -> bool:
    return (copy.ngeom == len(keep) and copy.nbody == model.nbody
            and np.array_equal(copy.geom_bodyid, model.geom_bodyid[keep])
            and np.array_equal(copy.geom_type, model.geom_type[keep])
            and np.array_equal(copy.geom_size, model.geom_size[keep])
            and np.array_equal(copy.geom_pos, model.geom_pos[keep]))
