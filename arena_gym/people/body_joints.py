"""The ROS4HRI body-joint convention that pedestrian joint angles follow.

Arena's task generator sends each pedestrian's pose as a `sensor_msgs/JointState` (in
`arena_people_msgs/Pedestrian.joint_state`): bare ROS4HRI joint names (the revolute joints
of ros4hri/human_description's `human-tpl.xacro`, without its `_<id>` suffix) with angles
in rad; names it leaves out stay at 0. `JOINTS` lists every name it sends (the 20 of the
human model plus the torso, collar and ankle joints of its 36-name variant), in chain
order, each with its axis in the body frame of the zero stance: x forward, y left, z up,
standing straight with the arms hanging. Signs follow the human model's URDF (`waist`
positive leans forward, a knee bends at negative angles, an elbow at positive ones,
`p_hip` positive abducts), except `p_shoulder`, which Arena uses as the arm swing
(flexion, positive forward, like `r_hip`) rather than the URDF's literal x axis.
Joints on one bone apply in the order listed (yaw, then pitch, then roll for shoulders
and hips: azimuth, elevation, twist).

    angles = checked_joints("Pedestrian 'env_0/w'", {"l_knee": -1.2, "l_r_hip": 0.6})
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping

import numpy as np

from arena_gym.errors import SceneError


def _sides() -> list[tuple[str, tuple[float, float, float]]]:
    out = []
    for side, f in (("l", 1.0), ("r", -1.0)):  # f: the URDF's `reflect` (left +1)
        out += [(f"{side}_y_collar", (0.0, 0.0, -f)), (f"{side}_p_collar", (f, 0.0, 0.0)),
                (f"{side}_y_shoulder", (0.0, 0.0, -f)), (f"{side}_p_shoulder", (0.0, -1.0, 0.0)),
                (f"{side}_r_shoulder", (0.0, 0.0, f)), (f"{side}_elbow", (0.0, -1.0, 0.0)),
                (f"{side}_y_hip", (0.0, 0.0, -1.0)), (f"{side}_p_hip", (f, 0.0, 0.0)),
                (f"{side}_r_hip", (0.0, -1.0, 0.0)), (f"{side}_knee", (0.0, -1.0, 0.0)),
                (f"{side}_y_ankle", (0.0, 0.0, -1.0)), (f"{side}_ankle", (0.0, -1.0, 0.0))]
    return out


# name -> unit axis (body frame, zero stance), in chain order
JOINTS: dict[str, tuple[float, float, float]] = dict([
    ("r_waist", (1.0, 0.0, 0.0)), ("y_waist", (0.0, 0.0, 1.0)), ("waist", (0.0, 1.0, 0.0)),
    ("r_spine", (1.0, 0.0, 0.0)), ("y_spine", (0.0, 0.0, 1.0)), ("spine", (0.0, 1.0, 0.0)),
    ("r_chest", (1.0, 0.0, 0.0)), ("y_chest", (0.0, 0.0, 1.0)), ("chest", (0.0, 1.0, 0.0)),
    ("r_head", (1.0, 0.0, 0.0)), ("y_head", (0.0, 0.0, 1.0)), ("p_head", (0.0, -1.0, 0.0)),
    *_sides()])
NAMES: tuple[str, ...] = tuple(JOINTS)
INDEX: dict[str, int] = {name: k for k, name in enumerate(NAMES)}


class JointAngles(Mapping[str, float]):
    """Checked ROS4HRI joint angles (name -> rad): read-only, hashable, picklable."""

    def __init__(self, angles: dict[str, float]) -> None:
        self._angles = dict(angles)

    def __getitem__(self, name: str) -> float:
        return self._angles[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._angles)

    def __len__(self) -> int:
        return len(self._angles)

    def __hash__(self) -> int:
        return hash(frozenset(self._angles.items()))

    def __repr__(self) -> str:
        return repr(self._angles)


def checked_joints(what: str, joints: object) -> JointAngles | None:
    """A read-only copy of `joints` (ROS4HRI name -> angle in rad), or None for None;
    a SceneError naming the problem for anything else."""
    if joints is None:
        return None
    if not isinstance(joints, Mapping):
        raise SceneError(f"{what} joints: expected a mapping of ROS4HRI joint names to "
                         f"angles (rad), got {joints!r}")
    out: dict[str, float] = {}
    for name, value in joints.items():
        if name not in INDEX:
            raise SceneError(f"{what} joints: unknown joint {name!r}; expected one of "
                             f"{', '.join(NAMES)}")
        try:
            angle = float(value)
        except (TypeError, ValueError):
            raise SceneError(f"{what} joint {name!r}: expected an angle (rad), got "
                             f"{value!r}") from None
        if not math.isfinite(angle):
            raise SceneError(f"{what} joint {name!r}: expected a finite angle (rad), got "
                             f"{value!r}")
        out[name] = angle
    return JointAngles(out)


def angle_rows(joints: list[Mapping[str, float]]) -> np.ndarray:
    """Angles (len(joints), len(NAMES)) in NAMES order from checked name -> angle maps;
    a name left out is 0 (the zero stance)."""
    out = np.zeros((len(joints), len(NAMES)))
    for row, given in zip(out, joints, strict=True):
        row[[INDEX[name] for name in given]] = list(given.values())
    return out
