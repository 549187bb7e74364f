"""Every public class of the package says what it holds or does: a class whose name does not
start with `_`, defined at a module's top level or nested in a public class, has a docstring.
Module docstrings say what and why, not how fast: timings live in docs/performance.md. Read
from the sources with ast (nothing is imported)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "arena_gym"


def bare_classes(source: str, where: str) -> list[str]:
    """`where:line Name` of each public class in `source` without a docstring (nested public
    classes of a public class as `Outer.Inner`)."""
    found: list[str] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                if ast.get_docstring(node) is None:
                    found.append(f"{where}:{node.lineno} {prefix}{node.name}")
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(source, where).body, "")
    return found


# a timing below a millisecond, or "N times faster/slower": measurements that rot
TIMING = re.compile(r"\d\s*(µs|us|ns)\b|\d+(-\d+)?x (faster|slower)")


def timings(source: str) -> list[str]:
    """The lines of `source`'s module docstring that state a timing (TIMING)."""
    doc = ast.get_docstring(ast.parse(source)) or ""
    return [line.strip() for line in doc.splitlines() if TIMING.search(line)]


def test_every_public_class_has_a_docstring():
    bare = [name for path in sorted(PACKAGE.rglob("*.py"))
            for name in bare_classes(path.read_text(encoding="utf-8"),
                                     str(path.relative_to(PACKAGE.parent)))]
    assert bare == [], f"{len(bare)} public classes without a docstring:\n" + "\n".join(bare)


def test_a_bare_class_is_named_and_private_or_documented_ones_are_not():
    source = '''
class Documented:
    """Holds x."""

    class Inner:
        pass

    class _Hidden:
        pass


class _Private:
    class Public:
        pass


def factory():
    class Local:
        pass


class Bare:
    x: int
'''
    assert bare_classes(source, "m.py") == ["m.py:5 Documented.Inner", "m.py:22 Bare"]


def test_module_docstrings_state_no_timings():
    found = [f"{path.relative_to(PACKAGE.parent)}: {line}"
             for path in sorted(PACKAGE.rglob("*.py"))
             for line in timings(path.read_text(encoding="utf-8"))]
    assert found == [], "timings belong in docs/performance.md:\n" + "\n".join(found)


def test_a_timing_in_a_module_docstring_is_found():
    source = '"""Walls.\n\nMuJoCo spends ~1.5 ns per ray and geom; this is 10-20x faster.\n"""\n'
    assert timings(source) == ["MuJoCo spends ~1.5 ns per ray and geom; this is 10-20x faster."]
    assert timings('"""A 30 Hz camera at a 50 Hz tick alternates 20 and 40 ms gaps."""') == []
