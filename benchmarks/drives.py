"""Drive figures of every robot: 1 m forward, 1 m sideways (holonomic robots), and 90 degree
turns in place at 0.5, 1 and 1.5 rad/s, each commanded through the Controller.

    python benchmarks/drives.py

For each motion: where the drive's turning centre went (in the start frame), how far the
robot turned, and its mean yaw rate over the second half of the command against the
commanded one. Needs ../shared/assets (or ARENA_GYM_ASSETS). tests/sim/test_drives.py
asserts the same figures.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.fixtures is imported in the functions, after this

ASSETS = Path(os.environ.get("ARENA_GYM_ASSETS", ROOT.parent / "shared" / "assets"))
DIFFBOT = ROOT / "arena_gym" / "assets" / "robots" / "arena_diffbot" / "arena_diffbot.urdf"


def robots() -> list[tuple[str, str | Path, list[Path], bool]]:
    """(label, URDF, package paths, holonomic)."""
    from tests.fixtures.mecanum import mecanum_ridgeback

    def shared(name: str) -> tuple[Path, list[Path]]:
        return ASSETS / "robots" / name / f"{name}.urdf", [ASSETS / "robots" / name / "packages"]

    out: list[tuple[str, str | Path, list[Path], bool]] = [("arena_diffbot", DIFFBOT, [], False)]
    for name in ("burger", "jackal", "dingo"):
        out.append((name, *shared(name), False))
    urdf, packages = shared("ridgeback")
    out.append(("ridgeback (planar)", urdf, packages, True))
    out.append(("ridgeback (mecanum)", mecanum_ridgeback(urdf), packages, True))
    return out


def main() -> None:
    from tests.fixtures.drives import measure

    print(f"{'robot':<20} {'motion':<26} {'dx m':>7} {'dy m':>7} {'turned deg':>11} "
          f"{'yaw rate':>9} {'commanded':>10}")
    for label, urdf, packages, holonomic in robots():
        for fig in measure(urdf, packages, holonomic):
            commanded = fig.motion.twist[2]
            print(f"{label:<20} {fig.motion.name:<26} {fig.moved[0]:>7.3f} {fig.moved[1]:>7.3f} "
                  f"{fig.turned:>11.1f} {fig.rate:>9.2f} {commanded:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
