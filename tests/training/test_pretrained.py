"""The shipped policies: each loads from the package without unpickling and drives its world
well on a short seeded evaluation, through the Python API and the command line."""

from __future__ import annotations

import re

import pytest

from arena_gym.cli import main
from arena_gym.train.pretrained import PRETRAINED, pretrained, pretrained_file
from tests.conftest import require

EPISODES = 20


@pytest.fixture(autouse=True)
def sb3():
    return require("stable_baselines3", "pip install 'arena_gym[train]'")


@pytest.mark.parametrize("name", sorted(PRETRAINED))
def test_a_shipped_policy_reaches_90_percent_on_its_world(name, assets, monkeypatch):
    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.train.evaluation import evaluate
    from arena_gym.train.policies import make_policy

    monkeypatch.setenv("ARENA_GYM_ASSETS", str(assets))  # configs/maps.yaml's maps
    env = ArenaVectorEnv(10, config=pretrained(name).config)
    try:
        policy = make_policy(f"pretrained:{name}", env)  # nothing unpickled (trust=False)
        summary = evaluate(env, policy, EPISODES, seed=10_000)
    finally:
        env.close()
    assert summary.success >= 0.9, summary.line()


def test_the_files_are_small():
    for name in PRETRAINED:
        assert pretrained_file(name).stat().st_size < 400_000  # no optimiser moments


def test_eval_runs_a_shipped_policy_on_its_own_config(capsys):
    assert main(["eval", "pretrained:room", "--episodes", "10", "--num-envs", "10"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(r"pretrained:room: 10 episodes: success [\d.]+%.*", line), line


def test_an_unknown_shipped_policy_is_named_with_the_known_ones(capsys):
    assert main(["eval", "pretrained:hall"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "pretrained policy 'hall': expected one of pretrained:room, pretrained:maps, "
        "pretrained:people")
