"""No class of the package grows past ~25 public methods (properties count; a setter does
not count twice): objects are composed of parts, not grown by mixins (issue 31)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "arena_gym"
MOST = 25


def public_methods(cls: ast.ClassDef) -> set[str]:
    return {node.name for node in cls.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not node.name.startswith("_")}


def oversized(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and len(public_methods(node)) > MOST:
                found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name}: "
                             f"{len(public_methods(node))} public methods")
    return found


def test_no_class_has_more_than_25_public_methods():
    assert oversized(PACKAGE) == []


def test_a_planted_large_class_is_named(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    methods = "".join(f"    def m{i}(self):\n        pass\n" for i in range(MOST + 1))
    (package / "big.py").write_text(
        "class Big:\n" + methods + "    @property\n    def m0(self):\n        pass\n"
        "    def _private(self):\n        pass\n")
    assert oversized(package) == [f"pkg/big.py:1 Big: {MOST + 1} public methods"]
