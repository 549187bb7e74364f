"""Which bone of an actor's COLLADA skeleton each ROS4HRI joint turns, per skeleton family,
and how the family's bind pose becomes the convention's zero stance.

Both families bind in a T-pose; the zero stance of the convention (arm bones hanging
straight down) turns each upper arm 90 degrees about the body's x axis. A joint mapped to
None has no bone in that family; its angles are ignored (reported once per actor).
A skeleton belongs to the first family whose bones it all has.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from arena_gym.people.body_joints import NAMES


@dataclass(frozen=True)
class SkeletonTable:
    """How one skeleton family names its bones: the bone each ROS4HRI joint turns and the turns that
    make its zero stance."""

    name: str
    source: str  # the files whose skeleton this is (for messages)
    bones: dict[str, str | None]  # ROS4HRI joint -> bone name (None: no such bone)
    stance: tuple[tuple[str, tuple[float, float, float], float], ...]  # (bone, axis, rad)

    def __post_init__(self) -> None:
        assert set(self.bones) == set(NAMES), f"{self.name}: every joint needs an entry"

    def fits(self, bones: tuple[str, ...]) -> bool:
        have = set(bones)
        return all(b in have for b in self.bones.values() if b is not None) and \
            all(b in have for b, _, _ in self.stance)


def _table(torso: dict[str, str | None], limb: dict[str, str | None],
           sides: dict[str, str]) -> dict[str, str | None]:
    """Joint -> bone: the torso's per triple (`waist` stands for r_waist, y_waist, waist),
    the limbs' per side (`{S}` in a bone name is the side's spelling)."""
    out: dict[str, str | None] = {}
    for joint, bone in torso.items():
        pitch = "p_head" if joint == "head" else joint
        for name in (f"r_{joint}", f"y_{joint}", pitch):
            out[name] = bone
    for side, spelling in sides.items():
        for joint, bone in limb.items():
            out[f"{side}_{joint}"] = None if bone is None else bone.format(S=spelling)
    return out


_LIMB = ("y_collar", "p_collar", "y_shoulder", "p_shoulder", "r_shoulder", "elbow", "y_hip",
         "p_hip", "r_hip", "knee", "y_ankle", "ankle")


def _limbs(collar, shoulder, elbow, hip, knee, ankle) -> dict[str, str | None]:
    bones = (collar, collar, shoulder, shoulder, shoulder, elbow, hip, hip, hip, knee, ankle,
             ankle)
    return dict(zip(_LIMB, bones, strict=True))


TABLES: tuple[SkeletonTable, ...] = (
    SkeletonTable(  # the CMU mocap skeleton of Gazebo's actors (walk.dae, run.dae, ...)
        "cmu", "Gazebo's walk.dae",
        _table({"waist": "LowerBack", "spine": "Spine", "chest": "Spine1", "head": "Head"},
               _limbs("{S}Shoulder", "{S}Arm", "{S}ForeArm", "{S}UpLeg", "{S}Leg", "{S}Foot"),
               {"l": "Left", "r": "Right"}),
        (("LeftArm", (1.0, 0.0, 0.0), -math.pi / 2),
         ("RightArm", (1.0, 0.0, 0.0), math.pi / 2))),
    SkeletonTable(  # Gazebo Fuel's MaleVisitor* models (no clavicles, one chest bone less)
        "visitor", "MaleVisitorPhone",
        _table({"waist": "Spine2", "spine": "Spine3", "chest": None, "head": "Head"},
               _limbs(None, "UpperArm_{S}", "LowerArm_{S}", "UpperLeg_{S}", "LowerLeg_{S}",
                      "Foot_{S}"),
               {"l": "L", "r": "R"}),
        (("UpperArm_L", (1.0, 0.0, 0.0), -math.pi / 2),
         ("UpperArm_R", (1.0, 0.0, 0.0), math.pi / 2))),
)


def table_for(bones: tuple[str, ...]) -> SkeletonTable | None:
    return next((t for t in TABLES if t.fits(bones)), None)
