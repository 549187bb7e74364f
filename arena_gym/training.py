"""Training a navigation policy with Stable-Baselines3 (PPO by default, SAC optional).

    arena-gym train --minutes 15                 # the reference world, defaults below
    arena-gym train --algo sac --num-envs 16 --set physics_dt=0.002
    arena-gym train --num-envs 64 --shards 4     # the envs as 4 Ray actors (docs/distributed.md)

Writes to the run folder: TensorBoard logs, checkpoints, `best_model.zip`, `final_model.zip`
and `curve.csv` (wall time, env steps, training and evaluation success / collision / timeout
rates, env steps/s). What the prototype of ../shared/FACTS.md found is built in: a 64x64
policy, fixed observation scaling, reward normalisation only, and torch on one thread while
collecting rollouts (two while updating).
"""

from __future__ import annotations

import csv
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_gym.evaluation import evaluate


@dataclass(frozen=True)
class TrainSettings:
    algo: str = "ppo"
    num_envs: int = 32
    minutes: float = 15.0
    timesteps: int | None = None  # env steps; None: the wall-time budget alone ends the run
    seed: int = 0
    eval_every_s: float = 60.0  # wall seconds between evaluations
    eval_episodes: int = 100
    eval_envs: int = 20
    out: str = "runs/arena"
    progress_bar: bool = True
    # PPO
    n_steps: int = 256  # per env: 8192 samples per rollout with 32 envs
    batch_size: int = 512  # SB3 spends ~5 ms per gradient step at any batch up to 512
    n_epochs: int = 10
    learning_rate: float = 3e-4
    gamma: float = 0.99
    net: tuple[int, ...] = (64, 64)
    # None: one local ArenaVectorEnv; else arena_gym.distributed's settings (a mapping like
    # {"shards": 2, "on_failure": "restart"}): the training envs run as Ray actors
    distributed: Mapping[str, Any] | None = None


def _import_sb3():
    try:
        import stable_baselines3
        import torch
    except ImportError as exc:
        raise ImportError(
            "training needs stable-baselines3 and torch: pip install 'arena_gym[train]'") from exc
    return stable_baselines3, torch


def train(settings: TrainSettings, overrides: dict[str, Any] | None = None) -> Path:
    """Train; return the run folder. `overrides` go to the env config (EnvConfig keys)."""
    sb3, torch = _import_sb3()
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from arena_gym.distributed import vector_env
    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.model_files import OBSERVATION_KEY
    from arena_gym.policies import sb3_policy
    from arena_gym.training_progress import progress_callback
    from arena_gym.wrappers.policy_obs import observation_layout
    from arena_gym.wrappers.sb3 import ArenaSB3VecEnv

    overrides = overrides or {}
    out = Path(settings.out)
    torch.manual_seed(settings.seed)
    train_env = vector_env(settings.num_envs, settings.distributed, **overrides)
    raw = ArenaSB3VecEnv(train_env, seed=settings.seed)
    venv = VecNormalize(VecMonitor(raw), norm_obs=False, norm_reward=True, gamma=settings.gamma)
    eval_env = ArenaVectorEnv(settings.eval_envs, **overrides)
    out.mkdir(parents=True, exist_ok=True)  # only once the config built envs: no empty runs
    policy_kwargs = {"net_arch": list(settings.net)}
    if settings.algo == "ppo":
        model = sb3.PPO("MlpPolicy", venv, n_steps=settings.n_steps, batch_size=settings.batch_size,
                        n_epochs=settings.n_epochs, learning_rate=settings.learning_rate,
                        gamma=settings.gamma, policy_kwargs=policy_kwargs, seed=settings.seed,
                        tensorboard_log=str(out / "tb"), device="cpu", verbose=0)
    elif settings.algo == "sac":
        model = sb3.SAC("MlpPolicy", venv, learning_rate=settings.learning_rate,
                        gamma=settings.gamma, policy_kwargs=policy_kwargs, seed=settings.seed,
                        train_freq=1,
                        gradient_steps=1, learning_starts=5000, tensorboard_log=str(out / "tb"),
                        device="cpu", verbose=0)
    else:
        raise ValueError(f"algo: expected 'ppo' or 'sac', got {settings.algo!r}")
    # saved with the model (a JSON entry of its `data`): eval and bench check it
    setattr(model, OBSERVATION_KEY, observation_layout(train_env.single_observation_space))

    class Progress(BaseCallback):
        """Thread switching, training statistics, periodic evaluation, wall-time stop."""

        def __init__(self) -> None:
            super().__init__()
            self.start = time.perf_counter()
            self.last_eval = 0.0  # the first evaluation after one interval
            self.results: deque[str] = deque(maxlen=200)
            self.rows: list[dict[str, float]] = []
            self.best = -1.0
            self.collect_time = 0.0
            self._t0 = 0.0

        def _on_rollout_start(self) -> None:
            torch.set_num_threads(1)  # leave the cores to the simulator's batch threads
            self._t0 = time.perf_counter()

        def _on_rollout_end(self) -> None:
            self.collect_time += time.perf_counter() - self._t0
            torch.set_num_threads(2)
            elapsed = time.perf_counter() - self.start
            if elapsed - self.last_eval >= settings.eval_every_s:
                self.last_eval = elapsed
                self._evaluate(elapsed)

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                episode = info.get("episode_result")
                if episode:
                    self.results.append(episode["result"])
            return time.perf_counter() - self.start < settings.minutes * 60

        def _rates(self) -> tuple[float, float, float]:
            n = max(len(self.results), 1)
            return tuple(sum(r == k for r in self.results) / n
                         for k in ("goal", "collision", "timeout"))

        def _evaluate(self, elapsed: float) -> None:
            path = out / "latest_model.zip"
            self.model.save(path)
            policy = sb3_policy(path, eval_env.single_observation_space,
                                eval_env.single_action_space)
            eval_env.curriculum.stage = train_env.curriculum_stage  # evaluate where training is
            summary = evaluate(eval_env, policy, settings.eval_episodes)
            train_rates = self._rates()
            row = {
                "wall_s": round(elapsed, 1), "env_steps": self.num_timesteps,
                "steps_per_s": round(self.num_timesteps / elapsed, 1),
                "train_success": train_rates[0], "train_collision": train_rates[1],
                "train_timeout": train_rates[2], "eval_success": summary.success,
                "eval_collision": summary.collision, "eval_timeout": summary.timeout,
                "curriculum_stage": train_env.curriculum_stage,
            }
            self.rows.append(row)
            for key, value in row.items():
                self.logger.record(f"arena/{key}", value)
            self.logger.dump(self.num_timesteps)
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
            if summary.success >= self.best:
                self.best = summary.success
                self.model.save(out / "best_model.zip")

    progress = Progress()
    callbacks = [progress]
    if settings.progress_bar:
        callbacks.append(progress_callback(settings.minutes, settings.timesteps))
    limit = settings.timesteps if settings.timesteps is not None else 2**62
    model.learn(limit, callback=callbacks)
    progress._evaluate(time.perf_counter() - progress.start)
    model.save(out / "final_model.zip")
    with open(out / "curve.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(progress.rows[0]))
        writer.writeheader()
        writer.writerows(progress.rows)
    venv.close()
    eval_env.close()
    return out
