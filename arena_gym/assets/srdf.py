"""The part of a MoveIt SRDF that MuJoCo can use: `<disable_collisions link1 link2>` pairs.

    pairs = disabled_pairs("arm.srdf", links={"base", "upper_arm", "forearm"})
    for a, b in pairs:
        spec.add_exclude(bodyname1=a, bodyname2=b)     # MuJoCo contact excludes

Link names fold as the URDF's do (`fold_name`), so the pairs name the bodies MuJoCo made of
the links. Every other SRDF element (groups, end effectors, virtual joints, states) says
nothing MuJoCo simulates and is left alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from arena_gym.assets.meshes import inside
from arena_gym.assets.sources import is_xml_text
from arena_gym.assets.urdf import fold_name, robot_root
from arena_gym.files import read_text


def disabled_pairs(srdf: str | Path, links: Iterable[str],
                   path_roots: tuple[Path, ...] | None = None) -> list[tuple[str, str]]:
    """The `<disable_collisions>` pairs of `srdf` (a path, or the XML text), each link
    one of `links` (folded names). ValueError naming the SRDF when it cannot be read, is
    not an SRDF, or a pair names a link the robot does not have."""
    text, where = _read(srdf, path_roots)
    root = robot_root(text, where)  # SpawnError: a ValueError
    known = set(links)
    pairs = []
    for element in root.iter("disable_collisions"):
        first, second = element.get("link1"), element.get("link2")
        pair = f"<disable_collisions link1={first!r} link2={second!r}>"
        if not first or not second:
            raise ValueError(f"{where}: {pair}: expected both link1 and link2")
        a, b = fold_name(first), fold_name(second)
        missing = [name for name, folded in ((first, a), (second, b)) if folded not in known]
        if missing:
            raise ValueError(f"{where}: {pair} names {', '.join(map(repr, missing))}, not a "
                             f"link of the robot; expected links of {sorted(known)}")
        if a != b:
            pairs.append((a, b))
    return pairs


def _read(srdf: str | Path, path_roots: tuple[Path, ...] | None) -> tuple[str, str]:
    """(the SRDF's text, how errors name it)."""
    if is_xml_text(srdf):
        return srdf, "SRDF text"
    if not isinstance(srdf, (str, Path)):
        raise ValueError(f"srdf: expected an SRDF path or XML text, got {type(srdf).__name__}")
    path = Path(srdf)
    where = f"SRDF {str(path)!r}"
    if path_roots is not None and not inside(path, path_roots):
        raise ValueError(f"{where}: expected a path inside the allowed roots")
    try:
        return read_text(path, where), where
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{where}: expected a readable UTF-8 file, got "
                         f"{type(exc).__name__}: {exc}") from None
