"""The SB3 adapter and `arena-gym train --shards` over the distributed env (needs the
[train] extra too)."""

from __future__ import annotations

import numpy as np
import pytest

from arena_gym.envs.vector_env import ArenaVectorEnv
from tests.conftest import require
from tests.distributed.compare import assert_identical


@pytest.fixture(autouse=True)
def sb3():
    return require("stable_baselines3", "pip install 'arena_gym[train]'")


def test_the_sb3_adapter_over_the_distributed_env_equals_it_over_the_local_env(ray_cluster):
    from arena_gym.distributed import DistributedVectorEnv
    from arena_gym.wrappers.sb3 import ArenaSB3VecEnv

    remote = ArenaSB3VecEnv(DistributedVectorEnv(4, distributed={"shards": 2},
                                                 max_episode_steps=30), seed=0)
    local = ArenaSB3VecEnv(ArenaVectorEnv(4, max_episode_steps=30), seed=0)
    assert remote.reset().tobytes() == local.reset().tobytes()
    forward = np.tile([1.0, 0.1], (4, 1))  # into the walls: collisions, same-step resets
    ended, results = 0, set()
    for _ in range(120):
        for venv in (remote, local):
            venv.step_async(forward)
        got, want = remote.step_wait(), local.step_wait()
        assert_identical(got, want)
        ended += int(want[2].sum())
        results |= {i["episode_result"]["result"] for i in want[3] if "episode_result" in i}
    assert ended >= 12 and results == {"collision", "timeout"}  # terminal observations too
    remote.close()
    local.close()


def test_train_with_shards_from_the_command_line(ray_cluster, tmp_path, capsys):
    from arena_gym.cli import main

    out = tmp_path / "run"
    assert main(["train", "--minutes", "0.05", "--num-envs", "4", "--shards", "2",
                 "--eval-every", "1000", "--out", str(out), "--no-progress",
                 "--set", "max_episode_steps=20"]) == 0
    assert (out / "final_model.zip").is_file() and (out / "curve.csv").is_file()


def test_distributed_flags_need_shards(capsys):
    from arena_gym.cli import main

    assert main(["train", "--on-failure", "restart"]) == 2
    assert capsys.readouterr().err.strip() == (
        "arena-gym: error: --ray-address and --on-failure: expected with --shards")
    assert main(["train", "--num-envs", "2", "--shards", "3"]) == 2
    assert capsys.readouterr().err.strip() == (
        "arena-gym: error: distributed.shards: expected at most num_envs (2) shards, got 3")
