"""Training a navigation policy with Stable-Baselines3 (PPO by default, SAC optional).

    arena-gym train                              # the reference world, 5 minutes, defaults below
    arena-gym train --algo sac --num-envs 16 --set physics_dt=0.002
    arena-gym train --num-envs 64 --shards 4     # the envs as 4 Ray actors (docs/distributed.md)
    arena-gym train --resume runs/arena --minutes 10   # continue a run

Writes to the run folder (one run per folder: a folder that holds one is refused unless
`overwrite`): run.json (the settings and env config, for --resume), TensorBoard logs,
`best_model.zip`, `final_model.zip`, normaliser.json (the reward normaliser's statistics,
as JSON: nothing pickled) and `curve.csv` (wall time, env steps, training and evaluation
success / collision / timeout rates, env steps/s), a row written as each evaluation ends.
Each evaluation runs the model this process is training (no file in between). Ctrl-C stops
at the next env step (a second one at once), saves `final_model.zip` and the normaliser,
and says how to continue: `resume(folder)` loads the model (weights, optimiser state, step
count), the normaliser and the curve, and goes on for a new budget.
What the prototype of ../shared/FACTS.md found is built in: a 64x64 policy, fixed
observation scaling, reward normalisation only, and torch on one thread while collecting
rollouts (two while updating).
"""

from __future__ import annotations

import csv
import json
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from arena_gym.train.evaluation import evaluate
from arena_gym.train.run_files import (
    TrainSettings,
    read_curve,
    read_normaliser,
    read_run,
    write_run,
)
from arena_gym.train.run_folders import claim, hold

# what a training run writes into its folder (run_folders: a folder holds one run)
RUN_FILES = ("run.json", "final_model.zip", "best_model.zip", "latest_model.zip", "curve.csv",
             "normaliser.json", "tb")
CURVE_KEYS = ("wall_s", "env_steps", "steps_per_s", "train_success", "train_collision",
              "train_timeout", "eval_success", "eval_collision", "eval_timeout",
              "curriculum_stage")
PPO_CLIP_RANGE = 0.2  # SB3's default, which train() keeps


def _import_sb3():
    try:
        import stable_baselines3
        import torch
    except ImportError as exc:
        raise ImportError(
            "training needs stable-baselines3 and torch: pip install 'arena_gym[train]'") from exc
    return stable_baselines3, torch


def train(settings: TrainSettings, overrides: dict[str, Any] | None = None) -> Path:
    """Train; return the run folder. `overrides` go to the env config (EnvConfig keys).
    Ctrl-C saves the model and raises KeyboardInterrupt once that is done."""
    _import_sb3()
    out = Path(settings.out)
    with claim(out, RUN_FILES, settings.overwrite, "training run",
               hint=f", or --resume {out} to continue it"):
        return _run(settings, dict(overrides or {}), resume=False)


def resume(folder: str | Path, minutes: float | None = None, timesteps: int | None = None,
           progress_bar: bool = True) -> Path:
    """Continue the run in `folder` for `minutes` more (default: its own budget), at most
    `timesteps` more env steps: its settings and env config (run.json), model, reward
    normaliser and curve."""
    _import_sb3()
    out = Path(folder)
    run = _read_run(out)
    if (out / "normaliser.json").exists():
        read_normaliser(out / "normaliser.json")  # before any env is built
    read_curve(out, CURVE_KEYS)
    settings = replace(run["settings"], out=str(out), progress_bar=progress_bar,
                       minutes=run["settings"].minutes if minutes is None else minutes,
                       timesteps=timesteps, overwrite=False)
    with hold(out, "training run"):
        return _run(settings, run["overrides"], resume=True)


def _read_run(out: Path) -> dict[str, Any]:
    """run.json of a run folder: its TrainSettings and env overrides (run_files.read_run:
    checked as the command line checks them; ValueError naming the file)."""
    if not out.is_dir():
        raise ValueError(f"--resume: expected a training run folder, got {str(out)!r} "
                         f"({'a file' if out.exists() else 'no such folder'})")
    for name in ("run.json", "final_model.zip"):
        if not (out / name).is_file():
            raise ValueError(f"--resume: expected {out / name} (written by arena-gym train, "
                             "the model once it ends or is stopped with Ctrl-C), got none")
    return read_run(out)


class _Stop:
    """Ctrl-C during a run: the first asks it to stop at the next env step (an evaluation
    in progress is dropped), a second stops it at once. Installed in the main thread only
    (elsewhere Ctrl-C arrives as KeyboardInterrupt, which the run handles alike)."""

    def __init__(self) -> None:
        self.asked = False
        self.evaluating = False
        self._previous: Any = None

    def __enter__(self) -> _Stop:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _handle(self, signum: int, frame: Any) -> None:
        if self.asked or self.evaluating:
            self.asked = True
            raise KeyboardInterrupt
        self.asked = True
        print("\ntraining: stopping at the next env step (Ctrl-C again: at once)",
              file=sys.stderr, flush=True)


def _normaliser(venv: Any, path: Path, load: bool) -> None:
    """The reward normaliser's running statistics to or from `path` (JSON)."""
    rms = venv.ret_rms
    if load:
        rms.mean, rms.var, rms.count = read_normaliser(path)
    else:
        path.write_text(json.dumps({"mean": float(rms.mean), "var": float(rms.var),
                                    "count": float(rms.count)}) + "\n", encoding="utf-8")


def _run(settings: TrainSettings, overrides: dict[str, Any], resume: bool) -> Path:
    sb3, torch = _import_sb3()
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize
    from tqdm import tqdm

    from arena_gym.distributed import vector_env
    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.train.model_files import OBSERVATION_KEY, PRIOR_KEY, resume_sb3
    from arena_gym.train.policies import check_prior, make_prior, model_policy
    from arena_gym.train.progress import progress_callback
    from arena_gym.wrappers.policy_obs import observation_layout
    from arena_gym.wrappers.sb3 import ArenaSB3VecEnv

    out = Path(settings.out)
    if settings.prior is not None:
        check_prior(settings.prior)  # before any env is built
    torch.manual_seed(settings.seed)
    train_env = vector_env(settings.num_envs, settings.distributed, **overrides)
    eval_env = ArenaVectorEnv(settings.eval_envs, **overrides)
    # the prior reads the robot and scan (same config: the eval env's serve the training's)
    prior = None if settings.prior is None else make_prior(settings.prior, eval_env,
                                                           settings.seed)
    raw = ArenaSB3VecEnv(train_env, seed=settings.seed, prior=prior)
    venv = VecNormalize(VecMonitor(raw), norm_obs=False, norm_reward=True, gamma=settings.gamma)
    layout = observation_layout(train_env.single_observation_space)
    out.mkdir(parents=True, exist_ok=True)  # only once the config built envs: no empty runs
    policy_kwargs: dict[str, Any] = {"net_arch": list(settings.net)}
    if settings.log_std_init is not None:
        policy_kwargs["log_std_init"] = settings.log_std_init
    if resume:
        training = {"learning_rate": settings.learning_rate}
        if settings.algo == "ppo":
            training["clip_range"] = PPO_CLIP_RANGE
        model = resume_sb3(out / "final_model.zip", venv, training, layout)
        if (out / "normaliser.json").exists():
            _normaliser(venv, out / "normaliser.json", load=True)
    elif settings.algo == "ppo":
        model = sb3.PPO("MlpPolicy", venv, n_steps=settings.n_steps, batch_size=settings.batch_size,
                        n_epochs=settings.n_epochs, learning_rate=settings.learning_rate,
                        gamma=settings.gamma, clip_range=PPO_CLIP_RANGE,
                        policy_kwargs=policy_kwargs, seed=settings.seed,
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
    setattr(model, OBSERVATION_KEY, layout)
    setattr(model, PRIOR_KEY, settings.prior)  # eval and bench add the same prior
    if not resume:
        write_run(out, settings, overrides)
    earlier = read_curve(out, CURVE_KEYS)
    stop = _Stop()

    class Progress(BaseCallback):
        """Thread switching, training statistics, periodic evaluation, wall-time stop."""

        def __init__(self) -> None:
            super().__init__()
            self.start = time.perf_counter()
            self.offset = float(earlier[-1]["wall_s"]) if earlier else 0.0  # a resumed run
            self.last_eval = 0.0  # the first evaluation after one interval
            self.evaluated_at = -1  # env steps of the last evaluation
            self.results: deque[str] = deque(maxlen=200)
            self.best = max((float(r["eval_success"]) for r in earlier), default=-1.0)
            self.collect_time = 0.0
            self._t0 = 0.0

        def _on_rollout_start(self) -> None:
            torch.set_num_threads(1)  # leave the cores to the simulator's batch threads
            self._t0 = time.perf_counter()

        def _on_rollout_end(self) -> None:
            self.collect_time += time.perf_counter() - self._t0
            torch.set_num_threads(2)
            elapsed = time.perf_counter() - self.start
            if elapsed - self.last_eval >= settings.eval_every_s and not stop.asked:
                self.last_eval = elapsed
                self.evaluate_now()

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                episode = info.get("episode_result")
                if episode:
                    self.results.append(episode["result"])
            return not stop.asked and time.perf_counter() - self.start < settings.minutes * 60

        def _rates(self) -> tuple[float, float, float]:
            n = max(len(self.results), 1)
            return tuple(sum(r == k for r in self.results) / n
                         for k in ("goal", "collision", "timeout"))

        def evaluate_now(self) -> None:
            """Evaluate the model being trained (this process's, no file between), write
            its curve row, keep it as best_model.zip when it is the best so far; a Ctrl-C
            meanwhile drops the evaluation."""
            policy = model_policy(self.model, eval_env.single_observation_space,
                                  eval_env.single_action_space, prior=prior)
            eval_env.curriculum.stage = train_env.curriculum_stage  # evaluate where training is
            stop.evaluating = True
            self.evaluated_at = self.model.num_timesteps
            try:
                summary = evaluate(eval_env, policy, settings.eval_episodes)
            except KeyboardInterrupt:
                return
            finally:
                stop.evaluating = False
            wall = self.offset + time.perf_counter() - self.start
            train_rates = self._rates()
            row = {
                "wall_s": round(wall, 1), "env_steps": self.model.num_timesteps,
                "steps_per_s": round(self.model.num_timesteps / max(wall, 1e-9), 1),
                "train_success": train_rates[0], "train_collision": train_rates[1],
                "train_timeout": train_rates[2], "eval_success": summary.success,
                "eval_collision": summary.collision, "eval_timeout": summary.timeout,
                "curriculum_stage": train_env.curriculum_stage,
            }
            _append_row(out / "curve.csv", row)
            for key, value in row.items():
                self.logger.record(f"arena/{key}", value)
            self.logger.dump(self.model.num_timesteps)
            if summary.success >= self.best:
                self.best = summary.success
                self.model.save(out / "best_model.zip")
                _normaliser(venv, out / "normaliser.json", load=False)
            tqdm.write(evaluation_line(row, self.best))  # above the bar, which stays
            sys.stdout.flush()  # as it happens, into a pipe or file too

    progress = Progress()
    callbacks = [progress]
    if settings.progress_bar:
        callbacks.append(progress_callback(settings.minutes, settings.timesteps))
    limit = settings.timesteps if settings.timesteps is not None else 2**62
    try:
        with stop:
            try:
                model.learn(limit, callback=callbacks, reset_num_timesteps=not resume)
            except KeyboardInterrupt:
                stop.asked = True
            if not stop.asked and progress.evaluated_at != model.num_timesteps:
                progress.evaluate_now()  # the final model, unless just evaluated
        model.save(out / "final_model.zip")
        _normaliser(venv, out / "normaliser.json", load=False)
    finally:
        venv.close()
        eval_env.close()
    if stop.asked:
        print(f"training: stopped at {model.num_timesteps:,} env steps; saved "
              f"{out / 'final_model.zip'} and its normaliser. Continue with: "
              f"arena-gym train --resume {out}", file=sys.stderr, flush=True)
        raise KeyboardInterrupt
    return out


def evaluation_line(row: Mapping[str, Any], best: float) -> str:
    """The line an evaluation prints as it ends: wall minutes, env steps, the deterministic
    policy's success / collision / timeout rates, and the best success so far."""
    return (f"eval {row['wall_s'] / 60:5.1f} min {row['env_steps']:>11,} env steps   "
            f"success {row['eval_success']:4.0%}  collision {row['eval_collision']:4.0%}  "
            f"timeout {row['eval_timeout']:4.0%}   best {best:4.0%}")


def _append_row(path: Path, row: dict[str, Any]) -> None:
    """One curve row, written (and flushed) as its evaluation ends."""
    new = not path.exists()
    with open(path, "a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CURVE_KEYS)
        if new:
            writer.writeheader()
        writer.writerow(row)
