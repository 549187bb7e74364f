"""Rendering cost: frames/s of the follow and top-down views, env steps/s with a frame
rendered every step against none, all in one run (compare the ratios, not the numbers).

    python benchmarks/render.py [--width 320] [--height 240] [--steps 200] [--repeats 3]
                                [--frames-dir docs]

One ArenaEnv per case (default world, seed 0), the same random actions. For each repeat the
cases take turns (plain stepping, follow, top-down), so a change in machine speed hits all
alike; the table shows medians. `--frames-dir` also saves one frame of each view as PNG
(render_follow.png, render_top_down.png) and a strip of both views over one random-policy
episode (render_strip.png, shown in docs/rendering.md; `--policy model.zip` drives it with a trained
policy instead of random actions), palette-quantised to stay small.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import gymnasium as gym
import numpy as np

import arena_gym  # noqa: F401


def _run(env: gym.Env, actions: np.ndarray, render: bool) -> tuple[float, float]:
    """(env steps/s including rendering, mean seconds per render)."""
    env.reset(seed=0)
    rendering = 0.0
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if render:
            t = time.perf_counter()
            env.render()
            rendering += time.perf_counter() - t
        if terminated or truncated:
            env.reset()
    total = time.perf_counter() - start
    return len(actions) / total, rendering / len(actions)


def _save(image, path: Path) -> None:
    image.quantize(64).save(path, optimize=True)
    print(f"saved {path} ({path.stat().st_size / 1024:.1f} KB)")


def _strip(envs: dict, act, every: int = 40, count: int = 4):
    """Both views (rows) every `every` steps of one episode (seed 3), half size; `act(obs,
    k)` gives step k's action."""
    from PIL import Image

    rows = []
    for name in ("top_down", "follow"):
        env = envs[name]
        obs, _ = env.reset(seed=3)
        frames = []
        for k in range(every * count):
            if k % every == 0:
                frames.append(env.render()[::2, ::2])
            obs, _, terminated, truncated, _ = env.step(act(obs, k))
            if terminated or truncated:
                break
        frames += frames[-1:] * (count - len(frames))  # an episode shorter than the strip
        rows.append(np.concatenate(frames, axis=1))
    return Image.fromarray(np.concatenate(rows, axis=0))


def _actor(policy_path: str | None, env: gym.Env, actions: np.ndarray):
    """act(obs, k): a trained policy's action, or the k-th random one."""
    if policy_path is None:
        return lambda obs, k: actions[k % len(actions)]
    from arena_gym.train.policies import sb3_policy

    policy = sb3_policy(policy_path, env.observation_space, env.action_space)
    return lambda obs, k: policy({key: v[None] for key, v in obs.items()})[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=240)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--frames-dir", default=None)
    parser.add_argument("--policy", default=None,
                        help="a model .zip from 'arena-gym train' for the strip (default: random)")
    args = parser.parse_args()
    size = {"width": args.width, "height": args.height}
    envs = {
        "none": gym.make("ArenaMujoco-v0"),
        "follow": gym.make("ArenaMujoco-v0", render_mode="rgb_array",
                           render={"view": "follow", **size}),
        "top_down": gym.make("ArenaMujoco-v0", render_mode="rgb_array",
                             render={"view": "top_down", **size}),
    }
    space = envs["none"].action_space
    actions = np.random.default_rng(0).uniform(space.low, space.high, (args.steps, space.shape[0]))
    actions = actions.astype(np.float32)
    for name, env in envs.items():  # warm-up: GL contexts, first frames
        env.reset(seed=0)
        if name != "none":
            env.render()
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in envs}
    for _ in range(args.repeats):
        for name, env in envs.items():
            results[name].append(_run(env, actions[: args.steps], render=name != "none"))
    base = statistics.median(r[0] for r in results["none"])
    print(f"{args.width}x{args.height}, {args.steps} steps x {args.repeats} repeats (medians)")
    print(f"{'case':<10} {'steps/s':>9} {'vs none':>8} {'frames/s':>9}")
    for name, rows in results.items():
        rate = statistics.median(r[0] for r in rows)
        fps = "" if name == "none" else f"{1 / statistics.median(r[1] for r in rows):9.1f}"
        print(f"{name:<10} {rate:9.1f} {rate / base:8.2f} {fps:>9}")
    if args.frames_dir:
        from PIL import Image

        out = Path(args.frames_dir)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("follow", "top_down"):
            env = envs[name]
            env.reset(seed=3)
            for action in actions[:10]:
                env.step(action)
            _save(Image.fromarray(env.render()), out / f"render_{name}.png")
        _save(_strip(envs, _actor(args.policy, envs["none"], actions)),
              out / "render_strip.png")
    for env in envs.values():
        env.close()


if __name__ == "__main__":
    main()
