"""The suite waits on events, not on the clock: no test sleeps (tests/waiting.py's polling
is the one sleep), and no assertion compares wall-clock readings (how fast something runs
is measured in benchmarks/, never asserted here).

Read from the sources (ast): a call of `sleep` (time.sleep, asyncio.sleep, a bare sleep)
anywhere under tests/ but tests/waiting.py; an `assert` whose condition reads
time.time/perf_counter/monotonic (or their _ns forms), directly or through a name of the
same function assigned from them (`t0 = time.perf_counter()` ... `elapsed = ... - t0`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ALLOWED_SLEEP = {TESTS / "waiting.py"}
CLOCKS = {"time", "perf_counter", "monotonic", "time_ns", "perf_counter_ns", "monotonic_ns"}
TRANSPARENT = {"abs", "round", "max", "min", "sum", "float", "int", "sorted", "list", "approx"}


def _is_call_of(node: ast.AST, names: set[str]) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr in names and (names is not CLOCKS or (
            isinstance(func.value, ast.Name) and func.value.id == "time"))
    return isinstance(func, ast.Name) and func.id in names and func.id != "time"


def _reads_clock(node: ast.AST, tainted: set[str]) -> bool:
    """Whether `node`'s value is computed from a clock reading: arithmetic, comparisons and
    TRANSPARENT calls carry one; any other call's result does not (`select(..., left)`
    takes a time left as its timeout and returns no time)."""
    if _is_call_of(node, CLOCKS) or (isinstance(node, ast.Name) and node.id in tainted):
        return True
    if isinstance(node, ast.Call) and not _is_call_of(node, TRANSPARENT):
        return False
    return any(_reads_clock(child, tainted) for child in ast.iter_child_nodes(node))


def _tainted(scope: ast.AST) -> set[str]:
    """Names in `scope` assigned (directly or through each other) from a clock reading."""
    assigns = [(t, n.value) for n in ast.walk(scope) if isinstance(n, ast.Assign)
               for t in n.targets]
    assigns += [(n.target, n.value) for n in ast.walk(scope)
                if isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and n.value]
    tainted: set[str] = set()
    while True:
        grown = {name.id for target, value in assigns if _reads_clock(value, tainted)
                 for name in ast.walk(target) if isinstance(name, ast.Name)} | tainted
        if grown == tainted:
            return tainted
        tainted = grown


def violations(path: Path, source: str | None = None) -> list[str]:
    """'file:line: what' for every sleep and every wall-clock assertion in `path`."""
    tree = ast.parse(path.read_text() if source is None else source, str(path))
    name = path.relative_to(TESTS) if path.is_relative_to(TESTS) else path.name
    found = []
    if path not in ALLOWED_SLEEP:
        found += [f"{name}:{n.lineno}: sleeps (wait on an event or a condition: "
                  "tests/waiting.py)" for n in ast.walk(tree) if _is_call_of(n, {"sleep"})]
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    seen: set[int] = set()
    for scope in scopes:
        tainted = _tainted(scope)
        for node in ast.walk(scope):
            if isinstance(node, ast.Assert) and node.lineno not in seen and _reads_clock(
                    node.test, tainted):
                seen.add(node.lineno)
                found.append(f"{name}:{node.lineno}: asserts on wall time (measure it "
                             "in benchmarks/)")
    return sorted(found, key=lambda v: int(v.split(":")[1]))


def test_no_test_sleeps_or_asserts_on_wall_time():
    found = [v for path in sorted(TESTS.rglob("*.py")) for v in violations(path)]
    assert found == []


PLANTED = '''
import select
import time

def test_planted():
    t0 = time.perf_counter()
    time.sleep(0.3)
    elapsed = round(time.perf_counter() - t0, 3)
    assert elapsed < 1.0
    assert time.monotonic() > 0
    ready = select.select([], [], [], elapsed)  # a timeout given: no time comes back
    assert ready or 0.3 < 0.5
'''


def test_the_rule_catches_a_planted_sleep_and_wall_time_asserts(tmp_path):
    planted = tmp_path / "test_planted.py"
    planted.write_text(PLANTED)
    assert violations(planted) == [
        "test_planted.py:7: sleeps (wait on an event or a condition: tests/waiting.py)",
        "test_planted.py:9: asserts on wall time (measure it in benchmarks/)",
        "test_planted.py:10: asserts on wall time (measure it in benchmarks/)",
    ]


@pytest.mark.parametrize("line", ["asyncio.sleep(1)", "sleep(0.1)", "time.sleep(0)"])
def test_every_kind_of_sleep_is_caught(tmp_path, line):
    planted = tmp_path / "test_one.py"
    planted.write_text(f"def test_one():\n    {line}\n")
    assert violations(planted) == [
        "test_one.py:2: sleeps (wait on an event or a condition: tests/waiting.py)"]


def test_waiting_is_the_one_module_allowed_to_sleep():
    source = (TESTS / "waiting.py").read_text()
    assert re.search(r"\btime\.sleep\(", source)
    assert violations(TESTS / "waiting.py") == []
