"""A map world with a door between its two rooms: episodes run with the door's tick, and
nothing recompiles across resets and steps."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from arena_gym.envs.vector_env import ArenaVectorEnv

RES = 0.1  # m per pixel: 8 x 4 m, a wall at x = 4 m with a 1.2 m doorway around y = 2 m


def two_rooms(folder: Path) -> Path:
    pixels = np.full((40, 80), 255, np.uint8)
    pixels[:2], pixels[-2:], pixels[:, :2], pixels[:, -2:] = 0, 0, 0, 0
    pixels[:, 39:41] = 0
    pixels[14:26, 39:41] = 255  # the doorway: rows 14..25 are y = 1.4 .. 2.6 m
    (folder / "map.pgm").write_bytes(b"P5\n80 40\n255\n" + pixels.tobytes())
    (folder / "map.yaml").write_text(
        f"image: map.pgm\nresolution: {RES}\norigin: [0.0, 0.0, 0.0]\nnegate: 0\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\n")
    (folder / "mechanisms.yaml").write_text(
        f"doors:\n  - {{name: door, pose: [4.0, 2.0, {math.pi / 2}], size: [1.2, 0.05, 1.0],"
        " zone: 1.0}\n")
    return folder / "map.yaml"


def test_episodes_in_a_world_with_a_door_never_recompile_nor_start_in_its_sweep(tmp_path):
    env = ArenaVectorEnv(2, world=str(two_rooms(tmp_path)), curriculum={"stages": [[2, 4]]})
    env.reset(seed=0)
    core = env.core
    assert "door" in list(core.store[0].entities) and core.mechanisms is not None
    compiles = [core.store[e].compile_count for e in range(2)]
    keep_out = core.layout.mechanisms.keep_out
    starts, goals = [], []
    for k in range(10):
        env.reset(seed=k)
        starts.append(core.task.pose[:, :2].copy())
        goals.append(core.task.goal.copy())
        for _ in range(3):
            env.step(np.zeros((2, 2)))
    starts, goals = np.concatenate(starts), np.concatenate(goals)
    assert not keep_out(starts, core.params.radius).any()
    assert not keep_out(goals, 0.0).any()
    assert ((starts[:, 0] < 4) != (goals[:, 0] < 4)).any()  # some episodes cross the door
    assert [core.store[e].compile_count for e in range(2)] == compiles
    env.close()


def test_a_world_declares_its_lights_and_frames_follow_their_regime(tmp_path):
    map_yaml = two_rooms(tmp_path)
    with open(tmp_path / "mechanisms.yaml", "a") as fh:
        fh.write("lights:\n  - {name: hall, shape: distant, level: 0.9, regime: [2.0, 1.0]}\n")
    env = ArenaVectorEnv(1, world=str(map_yaml), render_mode="rgb_array",
                         render={"view": "top_down", "width": 64, "height": 32})
    env.reset(seed=0)
    assert env.view.lights(0).get("hall").regime == (2.0, 1.0)
    lit = env.render()[0].max(axis=-1)  # sim time 0: inside the on second
    for _ in range(10):  # 1 s later: off
        env.step(np.zeros((1, 2)))
    dark = env.render()[0].max(axis=-1)
    # the world's only light off: all but the overlays (goal, beams: they glow) goes black
    assert (lit == 0).mean() < 0.05 < 0.5 < (dark == 0).mean()
    env.close()


def tiny_room_with_a_door(folder: Path) -> Path:
    """A 2 x 2 m room whose swinging door's sweep covers every start and goal."""
    folder.mkdir()
    pixels = np.full((20, 20), 255, np.uint8)
    pixels[:2], pixels[-2:], pixels[:, :2], pixels[:, -2:] = 0, 0, 0, 0
    (folder / "map.pgm").write_bytes(b"P5\n20 20\n255\n" + pixels.tobytes())
    (folder / "map.yaml").write_text(
        f"image: map.pgm\nresolution: {RES}\norigin: [0.0, 0.0, 0.0]\nnegate: 0\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\n")
    (folder / "mechanisms.yaml").write_text(
        "doors:\n  - {name: door, pose: [1.0, 1.0, 0.0], size: [1.6, 0.05, 1.0], "
        "motion: swing}\n")
    return folder / "map.yaml"


def test_doors_that_leave_no_start_are_a_one_line_error_naming_the_world(tmp_path, capsys):
    from arena_gym.cli import main

    world = tiny_room_with_a_door(tmp_path / "tiny")
    assert main(["eval", "reactive", "--episodes", "2", "--num-envs", "1",
                 "--set", f"world={world}"]) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: world {str(world)!r}: no collision-free start and goal 2.0 m apart "
        "after 40 attempts; expected a world with more free space or fewer obstacles (no "
        "start or goal lies where its doors and elevators move)\n")


def test_a_door_inside_a_wall_is_refused_naming_the_file(tmp_path, capsys):
    from arena_gym.cli import main

    world = two_rooms(tmp_path)
    (tmp_path / "mechanisms.yaml").write_text(  # in the wall at x = 4 m, below the doorway
        f"doors:\n  - {{name: door, pose: [4.0, 0.5, {math.pi / 2}], size: [0.8, 0.05, 1.0]}}\n")
    assert main(["eval", "reactive", "--episodes", "1", "--set", f"world={world}"]) == 2
    assert capsys.readouterr().err == (
        f"arena-gym: error: {tmp_path / 'mechanisms.yaml'}: doors[0].pose: expected the door's "
        "centre on a free cell of the map (a doorway), got (4, 0.5) inside a wall or outside "
        "the map\n")
