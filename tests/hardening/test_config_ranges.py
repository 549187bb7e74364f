"""Every numeric config key has its range in the dataclass, checked at load with
"key: expected ..., got ..."; unreadable files are ConfigErrors naming the path."""

from __future__ import annotations

import re

import pytest

from arena_gym.config import ConfigError, EnvConfig, ScanConfig, load_config


@pytest.mark.parametrize("overrides, message", [
    ({"obstacle_pool": 0}, "obstacle_pool: expected an integer >= 1 and <= 1000, got 0"),
    ({"room_size": -3}, "room_size: expected a number >= 1 and <= 1000, got -3.0"),
    ({"scan": {"num_beams": -4}}, "scan.num_beams: expected an integer >= 0 and <= 100000, got -4"),
    ({"scan": {"max_range": -1}}, "scan.max_range: expected a number >= 0 and <= 1000, got -1.0"),
    ({"goal_radius": -1}, "goal_radius: expected a number > 0 and <= 100, got -1.0"),
    ({"start_clearance": -5}, "start_clearance: expected a number >= 0 and <= 10, got -5.0"),
    ({"max_episode_steps": 0}, "max_episode_steps: expected an integer >= 1 and <= 1e+06, got 0"),
    ({"obstacle_size": [0.2, 5000]},
     "obstacle_size[1]: expected a number > 0 and <= 1000, got 5000.0"),
    ({"physics_dt": float("nan")}, "physics_dt: expected a finite number, got nan"),
    ({"reward": {"goal": float("inf")}}, "reward.goal: expected a finite number, got inf"),
    ({"curriculum": {"window": 0}},
     "curriculum.window: expected an integer >= 1 and <= 1e+06, got 0"),
    ({"curriculum": {"advance": 1.5}},
     "curriculum.advance: expected a number >= 0 and <= 1, got 1.5"),
    ({"curriculum": {"advance": 0.2}},
     "curriculum.fall_back: expected a rate <= advance (0.2), got 0.3"),
    ({"curriculum": {"stages": [[3, 1]]}},
     "curriculum.stages: expected min <= max per stage, got (3, 1)"),
    ({"curriculum": {"stages": []}}, "curriculum.stages: expected at least one stage, got ()"),
    ({"curriculum": {"start_stage": 1}},
     "curriculum.start_stage: expected a stage index < 1, got 1"),
])
def test_out_of_range_values_name_the_key(overrides, message):
    with pytest.raises(ConfigError, match=re.escape(message) + "$"):
        load_config(**overrides)


def test_direct_construction_checks_ranges_too():
    with pytest.raises(ConfigError, match=re.escape(
            "room_size: expected a number >= 1 and <= 1000, got -3")):
        EnvConfig(room_size=-3)
    with pytest.raises(ConfigError, match=re.escape(
            "num_beams: expected an integer >= 0 and <= 100000, got -4")):
        ScanConfig(num_beams=-4)


@pytest.mark.parametrize("content, expected", [
    (b"\xff\xfe\x00binary\x00",
     "expected a readable UTF-8 YAML file, got 'utf-8' codec can't decode"),
    (b"room_size: [1, 2", "expected valid YAML, got a syntax error"),
])
def test_unreadable_config_files_are_config_errors_with_the_path(tmp_path, content, expected):
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: {expected}")):
        load_config(path)
    with pytest.raises(ConfigError, match=re.escape(
            f"{tmp_path / 'none.yaml'}: expected an existing YAML file, got no such file")):
        load_config(tmp_path / "none.yaml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


def test_a_number_in_exponent_form_is_taken_from_set_and_from_a_file(tmp_path, capsys):
    """YAML 1.1 reads 2e-3 (no '.') as a string: a number key takes it as the number."""
    from arena_gym.cli import main

    path = tmp_path / "c.yaml"
    path.write_text("physics_dt: 2e-3\nreward:\n  goal: 1E1\n")
    cfg = load_config(path)
    assert (cfg.physics_dt, cfg.reward.goal) == (0.002, 10.0)
    assert main(["eval", "random", "--set", "physics_dt=2e-3", "--episodes", "1",
                 "--num-envs", "1", "--set", "max_episode_steps=5"]) == 0
    assert capsys.readouterr().out.startswith("random: 1 episodes: success")
    with pytest.raises(ConfigError, match=re.escape("physics_dt: expected a number, got "
                                                    "'2e-3 s'")):
        load_config(physics_dt="2e-3 s")
