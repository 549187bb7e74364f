"""The README and docs/ say what the code does: the README is short and starts with its two
commands, its Python runs, its task tables name the real keys, shapes, terms and weights,
every relative link resolves, and the docs' scene/pedestrian/sensor snippets run on the
shared assets."""

from __future__ import annotations

import re
import shlex
import tomllib
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def code_blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", path.read_text(encoding="utf-8"),
                      re.M | re.S)


def table(path: Path, header: str) -> list[list[str]]:
    """The rows (cells stripped, `\\|` unescaped) of the markdown table whose header row
    starts with `| header`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header}"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
        rows.append([c.strip().replace("\\|", "|") for c in cells])
    return rows


def test_readme_is_short_and_starts_with_its_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    first_section = text.index("\n## ")
    blocks = code_blocks(README, "bash")
    assert len(blocks) >= 2 and all(text.index(b) < first_section for b in blocks[:2])
    train, tests = (b.strip() for b in blocks[:2])
    assert train.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install")
    assert "arena-gym train" in train and "arena-gym eval" in train
    assert tests.endswith("python -m pytest -q")


def test_the_readme_commands_name_real_extras_and_subcommands():
    from arena_gym.cli import _parser

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                 ["optional-dependencies"])
    subcommands = set(_parser()._subparsers._group_actions[0].choices)  # noqa: SLF001
    for block in code_blocks(README, "bash")[:2]:
        for command in block.split("&&"):
            words = shlex.split(command)
            if words[:2] == ["pip", "install"]:
                named = re.fullmatch(r"(?:-e )?\.\[(.*)\]", " ".join(words[2:]))
                assert named, command
                assert set(named.group(1).split(",")) <= extras, command
            if words[0] == "arena-gym":
                assert words[1] in subcommands, command


def test_the_readme_python_runs():
    blocks = code_blocks(README, "python")
    assert blocks
    for block in blocks:
        exec(compile(block, str(README), "exec"), {"__name__": "readme"})


def test_the_readme_task_tables_are_the_code_s():
    import gymnasium as gym

    from arena_gym.config import EnvConfig, RewardConfig
    from arena_gym.registry import REWARD_TERMS
    from arena_gym.tasks.rewards import BUILTIN

    cfg = EnvConfig()
    env = gym.make("ArenaMujoco-v0")
    try:
        space, action = env.observation_space, env.action_space
    finally:
        env.close()
    rows = {row[0].strip("`"): row for row in table(README, "observation key")}
    for key, box in space.spaces.items():  # every key of the default observation, as shaped
        assert rows[key][1].split()[0] == str(box.shape), key
    assert f"Box([{action.low[0]:g}, {action.low[1]:g}], [{action.high[0]:g}, " \
           f"{action.high[1]:g}])" in README.read_text(encoding="utf-8")
    terms = {row[0].strip("`"): row[2] for row in table(README, "reward term")}
    assert list(terms) == [name for name in REWARD_TERMS.names()]
    assert [name for name, _ in BUILTIN] == list(terms)[:len(BUILTIN)]
    weights = RewardConfig()
    for name, written in terms.items():
        expected = f"{getattr(weights, name):g}"
        if name == "progress":
            expected += f" ({weights.progress_away:g})"
        assert written == expected, name
    ends = {row[3].strip("`"): row for row in table(README, "episode end")}
    assert set(ends) == {"goal", "collision", "timeout", "diverged"}
    assert f"{cfg.goal_radius:g} m" in ends["goal"][1]
    assert f"{cfg.max_episode_steps} control steps" in ends["timeout"][1]


def links(path: Path) -> list[str]:
    return [target for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8"))
            if not re.match(r"[a-z]+:", target)]


@pytest.mark.parametrize("page", [README, *sorted((ROOT / "docs").glob("*.md"))],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    missing = [t for t in links(page) if not (page.parent / t.split("#")[0]).exists()]
    assert missing == []


def test_the_scene_pedestrian_and_sensor_snippets_run(assets, monkeypatch):
    """docs/scenes.md, pedestrians.md and sensors.md in turn, each going on from the last (as
    their text says), with paths relative to the shared assets."""
    monkeypatch.chdir(assets)
    namespace: dict = {"__name__": "docs"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the burger's unreadable meshes warn, by design
        for page in ("scenes.md", "pedestrians.md", "sensors.md"):
            for block in code_blocks(ROOT / "docs" / page, "python"):
                exec(compile(block, page, "exec"), namespace)
    suite, store, sim = namespace["suite"], namespace["store"], namespace["sim"]
    try:
        assert 0.1 < namespace["position"][0] < 0.25  # env 0 drove 1 s at 0.2 m/s
        assert abs(store[1].get_pose("burger")[0][0]) < 0.01  # env 1 had no command
        scan = suite["burger/lds_lfcd_sensor"].ranges
        assert scan.shape == (4, 360)
        assert 0.7 < scan[1, 0] < 0.9  # straight ahead: the box, its face 0.8 m from the origin
        assert store[0].pedestrians.slots == {}  # alice was deleted again
    finally:
        suite.close()
        sim.close()


def test_ros_md_counts_the_arena_rows_that_still_differ():
    """docs/ros.md's tables of Arena's topics and services mark each row that still differs
    ("differs: ..."), and its count says how many."""
    path = ROOT / "docs" / "ros.md"
    rows = [row for header in ("topic | type | Arena MuJoCo server",
                               "service | type | Arena MuJoCo server")
            for row in table(path, header)]
    differ = [row[0] for row in rows if row[-1].startswith("differs:")]
    assert all(row[-1].startswith(("same", "differs:")) for row in rows), rows
    assert (f'Rows that still differ (marked "differs"): {len(differ)} of the {len(rows)} '
            f'above. The {len(rows) - len(differ)} marked "same"') in " ".join(
                path.read_text(encoding="utf-8").split())
