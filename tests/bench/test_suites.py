"""The built-in suites load, and every stage makes a valid env config."""

from __future__ import annotations

import re

import pytest

from arena_gym.bench.suite import load_suite, stage_config
from arena_gym.config import ConfigError


def test_default_suite_stages_make_their_env_configs():
    suite = load_suite("default")
    configs = {s.name: stage_config(suite, s)[2] for s in suite.stages}
    assert list(configs) == ["empty", "sparse", "cluttered", "large_room", "crowd"]
    assert configs["empty"].curriculum.stages == ((0, 0),)
    assert configs["large_room"].room_size == 10.0
    assert configs["large_room"].max_episode_steps == 600  # 60 s at control_dt 0.1 s
    crowd = configs["crowd"]
    assert (crowd.num_pedestrians, crowd.pedestrian_slots, crowd.curriculum.pedestrians) == (
        4, 4, ((2, 4),))


def test_large_suite_reads_the_shared_worlds(assets, monkeypatch):
    monkeypatch.setenv("ARENA_GYM_ASSETS", str(assets))
    suite = load_suite("large")
    configs = {s.name: stage_config(suite, s)[2] for s in suite.stages}
    assert configs["map_empty_small"].world == str(
        assets / "worlds" / "map_empty_small" / "map" / "map.yaml")
    assert configs["arena_rooms1_scenario"].scenario.endswith("arena_rooms1/scenarios/default.json")


def test_large_suite_names_the_missing_variable(monkeypatch):
    monkeypatch.delenv("ARENA_GYM_ASSETS", raising=False)
    with pytest.raises(ConfigError, match=re.escape(
            "stages[4].world: expected the environment variables in "
            "'$ARENA_GYM_ASSETS/worlds/map_empty_small/map/map.yaml' set")):
        load_suite("large")


def test_maps_suite_drives_each_map_on_the_maps_config(assets, monkeypatch):
    monkeypatch.setenv("ARENA_GYM_ASSETS", str(assets))
    suite = load_suite("maps")
    configs = {s.name: stage_config(suite, s)[2] for s in suite.stages}
    assert list(configs) == ["experiment_rooms", "hospital", "evaluation_floor"]
    for name, cfg in configs.items():
        # the stage's own map, not configs/maps.yaml's training mix; its subgoal observed
        assert cfg.worlds == () and cfg.world == str(assets / "worlds" / name / "map" / "map.yaml")
        assert cfg.paths.subgoal


def test_a_stage_name_too_long_for_its_files_is_refused_at_load(tmp_path):
    """A 300-character name would fail at the report (its plot's file name): refused first."""
    from arena_gym.bench.suite import load_suite

    long = "s" * 300
    path = tmp_path / "suite.yaml"
    path.write_text(f"name: long\nstages:\n  - name: {long}\n    episodes: 1\n")
    with pytest.raises(ConfigError, match=re.escape(
            "stage name: expected 1 to 100 letters, digits, '_', '-' or '.' (it names the "
            f"stage's files), got {long[:60]!r}... (300 characters)")):
        load_suite(path)
