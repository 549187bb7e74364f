"""The `arena-gym` command line.

    arena-gym demo --num-envs 16 --seconds 10 --seed 0
    arena-gym version

Importing this module loads only the standard library; MuJoCo, numpy and the simulator
load when a subcommand runs.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence

CHUNK_STEPS = 50  # physics steps per Simulator.step call in the demo
FORWARD_SPEED = 0.2  # m/s
MAX_TURN_RATE = 0.5  # rad/s, per-env turn rates are drawn from [-MAX, MAX]


class UsageError(ValueError):
    """A mistake in the command line: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one line (`arena-gym: error: ...`), not usage + error."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)


def _bounded(kind: type, low: float, inclusive: bool, what: str):
    """An argparse type: a finite `kind` above `low`, else "expected <what>, got <text>"."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (value >= low if inclusive else value > low)):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return value

    return parse


_positive_int = _bounded(int, 1, True, "an integer >= 1")
_seed = _bounded(int, 0, True, "an integer >= 0")
_positive_float = _bounded(float, 0, False, "a positive number")
_finite_float = _bounded(float, -math.inf, False, "a finite number")


LEARNER_ARGS = ("learning_rate", "n_steps", "batch_size", "n_epochs", "gamma", "net",
                "log_std_init", "prior")


def _layer_sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(
            f"expected positive layer sizes separated by commas, e.g. 64,64, got {text!r}")
    return sizes


def _port(text: str) -> int:
    """An argparse type: a TCP port, 0..65535 (0: any free one)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port in 0..65535, got {text}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="arena-gym",
        description="Fast, vectorised MuJoCo navigation environments (Arena-Rosnav scene model).",
        epilog="Run 'arena-gym COMMAND --help' for a command's options.",
    )
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an error")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    demo = commands.add_parser(
        "demo",
        help="step the default world in many envs and report the stepping speed",
        description=(
            "Build the default world (a 6 x 6 m room, 8 random boxes and the built-in "
            "arena_diffbot robot) in N envs, env i seeded with SEED + i. Each robot drives "
            f"forward at {FORWARD_SPEED} m/s with a constant turn rate drawn from its env's "
            f"generator (|omega| <= {MAX_TURN_RATE} rad/s). All envs are stepped in lockstep "
            f"for the given simulated seconds, {CHUNK_STEPS} physics steps per call. Prints how "
            "the envs were grouped for stepping, aggregate physics steps/s, the real-time "
            "factor, and where each robot started and ended."
        ),
    )
    demo.add_argument("--num-envs", type=_positive_int, default=16, metavar="N",
                      help="number of envs (default: 16)")
    demo.add_argument("--seconds", type=_positive_float, default=10.0, metavar="S",
                      help="simulated seconds to run (default: 10)")
    demo.add_argument("--seed", type=_seed, default=0,
                      help="base seed; env i uses SEED + i (default: 0)")
    demo.set_defaults(run=_demo)
    train = commands.add_parser(
        "train",
        help="train a navigation policy with Stable-Baselines3 (PPO; SAC optional)",
        description=(
            "Train on ArenaMujoco-v0 (by default the reference world: a 6 x 6 m room with "
            "6-10 random boxes and the built-in robot) for a wall-time budget, evaluating the "
            "deterministic policy every --eval-every seconds over 100 episodes. Writes "
            "run.json, TensorBoard logs, best and final models and curve.csv (a row per "
            "evaluation) to --out, and prints the final success, collision and timeout "
            "rates. Ctrl-C saves the model; --resume DIR continues a run. Needs: pip "
            "install 'arena_gym[train]'."
        ),
    )
    train.add_argument("--algo", choices=("ppo", "sac"), default="ppo")
    train.add_argument("--minutes", type=_positive_float, default=None,
                       help="wall-time budget, evaluations included (default: 5)")
    train.add_argument("--num-envs", type=_positive_int, default=None, metavar="N",
                       help="training envs (default: the recipe's, 64)")
    train.add_argument("--steps", type=_positive_int, default=None, metavar="N",
                       help="stop after N env steps (default: the --minutes budget only)")
    train.add_argument("--seed", type=_seed, default=0)
    train.add_argument("--eval-every", type=_positive_float, default=None, metavar="S",
                       help="wall seconds between evaluations (default: 60)")
    train.add_argument("--eval-episodes", type=_positive_int, default=100, metavar="N",
                       help="episodes per evaluation (default: 100; long paths on maps "
                       "make each one slow)")
    learner = train.add_argument_group(
        "learner", "the algorithm's hyperparameters (default: the recipe of TrainSettings)")
    learner.add_argument("--learning-rate", type=_positive_float, default=None, metavar="LR")
    learner.add_argument("--n-steps", type=_positive_int, default=None, metavar="N",
                         help="PPO: env steps per env and rollout")
    learner.add_argument("--batch-size", type=_positive_int, default=None, metavar="N")
    learner.add_argument("--n-epochs", type=_positive_int, default=None, metavar="N",
                         help="PPO: passes over each rollout")
    learner.add_argument("--gamma", type=_positive_float, default=None)
    learner.add_argument("--net", type=_layer_sizes, default=None, metavar="SIZES",
                         help="hidden layers of policy and value networks, e.g. 64,64")
    learner.add_argument("--log-std-init", type=_finite_float, default=None, metavar="X",
                         help="the policy's initial log standard deviation of its actions "
                         "in [-1, 1] (default: the algorithm's, PPO 0, SAC -3)")
    learner.add_argument("--prior", default=None, metavar="POLICY",
                         help="learn a residual on a registered policy, e.g. reactive: the "
                         "policy's action is added to POLICY's (eval and bench add it too)")
    train.add_argument("--out", default="runs/arena", help="run folder (default: runs/arena)")
    train.add_argument("--overwrite", action="store_true",
                       help="replace the run --out holds (else such a folder is refused)")
    train.add_argument("--resume", default=None, metavar="DIR",
                       help="continue the run in DIR (its model, normaliser, curve and "
                       "settings) for --minutes more, at most --steps more env steps")
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.add_argument("--shards", type=_positive_int, default=None, metavar="K",
                       help="run the training envs as K Ray actors (needs: pip install "
                       "'arena_gym[distributed]'; see docs/distributed.md)")
    train.add_argument("--on-failure", choices=("raise", "restart"), default="raise",
                       help="with --shards: stop on a dead actor, or re-create its shard")
    train.add_argument("--ray-address", default=None, metavar="ADDR",
                       help="with --shards: the Ray cluster to join (default: RAY_ADDRESS, "
                       "else a local one; 'auto': the running one)")
    _config_args(train)
    train.set_defaults(run=_train, resumed_defaults={dest: train.get_default(dest)
                                                     for dest in _RESUMED})
    evaluate = commands.add_parser(
        "eval",
        help="run a saved policy or a baseline over N episodes and print its rates",
        description=(
            "Evaluate POLICY (a model .zip saved by 'arena-gym train', or the baselines "
            "'random' and 'reactive') over N deterministic episodes and print the success, "
            "collision and timeout rates and the mean path length."
        ),
    )
    evaluate.add_argument("policy", help="a .zip from 'arena-gym train', 'random', 'reactive', "
                          f"or a shipped policy: {_shipped()} (on the config it was trained "
                          "on unless --config)")
    evaluate.add_argument("--episodes", type=_positive_int, default=100)
    evaluate.add_argument("--num-envs", type=_positive_int, default=20, metavar="N")
    evaluate.add_argument("--seed", type=_seed, default=10_000)
    evaluate.add_argument("--trust-model", action="store_true",
                          help="allow pickled Python in the model file (it could run code): "
                          "only for files you made or trust")
    evaluate.add_argument("--video", default=None, metavar="DIR",
                          help="write env 0's episodes to DIR as MP4 (config `render` picks "
                          "the view; every env renders each step: few --num-envs is faster)")
    evaluate.add_argument("--plot", default=None, metavar="DIR",
                          help="draw each episode to DIR/episode_K.png: its world, the "
                          "driven trajectory and (with paths.subgoal) the global path and "
                          "subgoals (needs matplotlib: pip install 'arena_gym[bench]')")
    _config_args(evaluate)
    evaluate.set_defaults(run=_eval)
    bench = commands.add_parser(
        "bench",
        help="run a benchmark suite (or compare two runs) and write records and a report",
        description=(
            "'arena-gym bench SUITE --policy P' runs every stage of SUITE (a YAML file, or "
            "a built-in suite: default, large, maps) with P in N batched envs, stage i's episode "
            "k seeded SEED + 1000 i + k, and writes records.csv, records.json, "
            "summary.json, report.md and report.html (with plots; needs matplotlib: pip "
            "install 'arena_gym[bench]') to --out. 'arena-gym bench compare A B' writes "
            "and prints a side-by-side report of two run folders."
        ),
    )
    bench.add_argument("target", nargs="+", metavar="SUITE | compare A B",
                       help="a suite file or built-in name; or 'compare' and two run folders")
    bench.add_argument("--policy", default=None,
                       help=f"'reactive', 'random', {_shipped()}, a .zip from 'arena-gym "
                       "train', or module:callable (obs -> action)")
    bench.add_argument("--envs", type=_positive_int, default=None, metavar="N",
                       help="envs per stage (default: the suite's)")
    bench.add_argument("--out", default=None, metavar="DIR",
                       help="run folder (default: runs/bench/SUITE-POLICY, numbered -2, -3, "
                       "... when it holds a run; compare: A/compare-B)")
    bench.add_argument("--overwrite", action="store_true",
                       help="replace the run --out (or the default folder) holds")
    bench.add_argument("--seed", type=_seed, default=None, help="base seed (default: the suite's)")
    bench.add_argument("--episodes", type=_positive_int, default=None, metavar="K",
                       help="episodes per stage instead of the suite's (quick runs)")
    bench.add_argument("--video", type=_seed, default=0, metavar="K",
                       help="record K episodes per stage to MP4 (follow camera; "
                       "needs 'arena_gym[video]')")
    bench.add_argument("--no-progress", action="store_true", help="no progress bar")
    bench.add_argument("--trust-model", action="store_true",
                       help="allow pickled Python in the model file (it could run code)")
    bench.set_defaults(run=_bench)
    view = commands.add_parser(
        "view",
        help="watch env 0 in MuJoCo's viewer while a policy drives the envs in real time",
        description=(
            "Build ArenaMujoco-v0 envs and open MuJoCo's passive viewer on env 0, fed from "
            "its own thread (a slow renderer skips frames, the simulation keeps its pace). "
            "The policy (reactive, random, a model .zip or module:callable) drives every "
            "env at the control rate, episodes restarting as they end, for --seconds of "
            "wall time, until the window is closed or until Ctrl-C (each ends it as "
            "--seconds does, with its summary). Needs a display. With --foxglove, no "
            "window: the bridge's topics (/tf, /tf_static, /clock, per robot odom, scan, "
            "imu, joint_states) are served live over Foxglove's WebSocket protocol instead "
            "(needs: pip install 'arena_gym[foxglove]'; no ROS install)."
        ),
    )
    view.add_argument("--policy", default="reactive", help="what drives (default: reactive)")
    view.add_argument("--num-envs", type=_positive_int, default=1, metavar="N")
    view.add_argument("--seconds", type=_positive_float, default=60.0, metavar="S",
                      help="wall seconds to run (default: 60)")
    view.add_argument("--seed", type=_seed, default=0)
    view.add_argument("--trust-model", action="store_true",
                      help="allow pickled Python in the model file (it could run code)")
    view.add_argument("--foxglove", action="store_true",
                      help="serve the topics to Foxglove (WebSocket) instead of a window")
    view.add_argument("--host", default=None,
                      help="--foxglove's address (default: 127.0.0.1, this machine only)")
    view.add_argument("--port", type=_port, default=None,
                      help="--foxglove's port (default: 8765; 0: any free port)")
    view.add_argument("--allow-origin", action="append", default=[], metavar="URL",
                      help="a web page allowed to connect to --foxglove besides this "
                      "machine's (e.g. https://app.foxglove.dev; repeatable)")
    _config_args(view)
    view.set_defaults(run=_view)
    version = commands.add_parser(
        "version",
        help="print the versions of arena_gym, MuJoCo and Python",
        description="Print the versions of arena_gym, MuJoCo and Python.",
    )
    version.set_defaults(run=_version)
    plugins = commands.add_parser(
        "plugins", help="list the registered sensor kinds, reward terms, policies, drives, plugins",
        description="List every registry's entries (arena_gym.registry) and who registered "
                    "them, and the installed plugins that failed to load.")
    plugins.set_defaults(run=_plugins)
    ros = _ros_parser(commands)
    bridge = commands.add_parser(
        "bridge", help="serve the envs over ROS 2 (the Arena backend's topics and services)",
        description=(
            "Run the simulator headless and publish /clock, /tf, /tf_static and per robot "
            "odom, scan, imu, joint_states and, while subscribed, the camera's image_raw, "
            "depth/image_raw, depth/points, camera_info (env 0 under /ROBOT, env i under "
            "/env_i/ROBOT), take cmd_vel and mujoco/joint_commands_{velocity,position}, and "
            "serve /mujoco/* (pause, unpause, step, reset_world, spawn_prims, edit_prims, "
            "delete_prims, spawn_walls, spawn_floors, spawn_ceilings, spawn_urdf, "
            "pedestrians) and, beside them, the Arena MuJoCo server's /mujoco/CamelCase "
            "services, /mujoco/arena_peds and /arena/viewport. Spawn requests read files only "
            "in the robot's and the asset folders (--allow-root adds more). The rclpy node "
            "runs in the venv of 'arena-gym ros setup'. SIGUSR1 prints every thread's stack."))
    bridge.add_argument("--world", default="default", help="default (a room with random "
                        "boxes), empty, a world source name (random) or a ROS map.yaml path "
                        "(default: default)")
    bridge.add_argument("--robot", default="builtin", help="builtin or a URDF file")
    bridge.add_argument("--robot-description-topic", default=None, metavar="TOPIC",
                        help="build the robot from the URDF text on this latched "
                        "std_msgs/String topic (robot_state_publisher's /robot_description), "
                        "waiting for it; its package:// URIs resolve in the --allow-root "
                        "folders")
    bridge.add_argument("--model", default=None, metavar="FILE",
                        help="serve an MJCF (or URDF) model as the world of every env, as "
                        "MuJoCo simulates the file (nothing added; as arena_gym.Simulation("
                        "model_path=...)), instead of --world and --robot")
    bridge.add_argument("--envs", type=_positive_int, default=1, metavar="N")
    bridge.add_argument("--max-envs", type=_positive_int, default=None, metavar="M",
                        help="envs N .. M-1 start empty (a ground plane and the sun): an "
                             "Arena client's requests fill them, as Arena's server makes an "
                             "env on first contact (default: N, no empty envs)")
    bridge.add_argument("--lockstep", action="store_true",
                        help="start paused: only /mujoco/step advances the clock")
    bridge.add_argument("--rt-factor", type=_positive_float, default=1.0,
                        help="real-time factor when free-running (default: 1)")
    bridge.add_argument("--seed", type=_seed, default=0)
    bridge.add_argument("--venv", default=None, help="the ROS venv (default: as ros setup)")
    bridge.add_argument("--view", action="store_true",
                        help="show env 0 in MuJoCo's viewer while serving (needs a display)")
    bridge.add_argument("--allow-root", action="append", default=[], metavar="DIR",
                        help="a folder spawn requests may read files from, besides the "
                        "robot's and the asset folders (repeatable)")
    bridge.add_argument("--package-path", action="append", default=[], metavar="DIR",
                        help="a folder where package:// URIs of spawned URDFs resolve "
                        "(repeatable; inside the allowed folders)")
    bridge.add_argument("--arena", action="store_true",
                        help="serve an Arena-Rosnav session as Arena's MuJoCo server does: "
                        "no world or robot of ours, the node named mujoco, envs made on first "
                        "contact (up to --max-envs, default 64), Arena's files readable (its "
                        "workspace root), SpawnUrdf robots driven by their joint commands, "
                        "joint states flowing between lockstep Steps")
    bridge.add_argument("--arena-root", default=None, metavar="DIR",
                        help="Arena's workspace root, whose files an Arena session's requests "
                        "may read (default: $ARENA_WS_DIR)")
    bridge.set_defaults(run=_bridge)
    rec = commands.add_parser(
        "record", help="write the bridge's messages to an MCAP file (no ROS install needed)",
        description=(
            "Step the envs for the given sim seconds, every robot driving --cmd-vel, and "
            "write the messages the ROS bridge publishes (/clock, /tf, /tf_static, odom, scan, "
            "imu, joint_states) to an MCAP file with ROS 2 encoding, openable in Foxglove. "
            "Needs: pip install 'arena_gym[record]'."))
    rec.add_argument("--out", default="arena.mcap", help="the MCAP file (default: arena.mcap)")
    rec.add_argument("--seconds", type=_positive_float, default=5.0)
    rec.add_argument("--world", default="default", help="default or empty")
    rec.add_argument("--robot", default="builtin", help="builtin or a URDF file")
    rec.add_argument("--envs", type=_positive_int, default=1, metavar="N")
    rec.add_argument("--cmd-vel", type=float, nargs=2, default=(0.0, 0.0),
                     metavar=("V", "OMEGA"), help="every robot's command (m/s, rad/s)")
    rec.add_argument("--seed", type=_seed, default=0)
    rec.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    rec.set_defaults(run=_record)
    # --debug after the command name too
    for command in (demo, train, evaluate, bench, view, version, plugins, ros, bridge, rec):
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="show the Python traceback of an error")
    return parser


def _ros_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    ros = commands.add_parser(
        "ros", help="the ROS 2 bridge's own virtual environment",
        description="Manage the virtual environment the ROS 2 bridge node runs in.")
    sub = ros.add_subparsers(dest="ros_command", metavar="ACTION", parser_class=_Parser,
                             required=True)
    setup = sub.add_parser(
        "setup", help="create the ROS 2 venv (idempotent)",
        description=(
            "Create (or check) a virtual environment with ROS 2 wheels: rclpy with FastDDS, "
            "the message packages, and tf2_msgs plus arena_gym_interfaces built locally with "
            "the rosidl toolchain from the wheels (needs cmake, a C/C++ compiler and "
            "apt-get download for Debian's ament_cmake .debs). A second run returns at once."))
    setup.add_argument("--distro", choices=("jazzy", "kilted"), default="jazzy")
    setup.add_argument("--venv", default=None,
                       help="where (default: $ARENA_GYM_ROS_VENV, else "
                       "~/.cache/arena_gym/ros-DISTRO)")
    setup.add_argument("--force", action="store_true", help="rebuild even when up to date")
    setup.set_defaults(run=_ros_setup)
    return ros


def _ros_setup(args: argparse.Namespace) -> int:
    from arena_gym.ros.setup_venv import setup

    setup(args.venv, args.distro, force=args.force, progress=lambda m: print(m, flush=True))
    return 0


def _need_display() -> None:
    """MuJoCo's viewer needs a display: say so before anything is built."""
    from arena_gym.render.viewer import NO_DISPLAY_VIEW, has_display

    if not has_display():
        raise UsageError(NO_DISPLAY_VIEW)


def _bridge(args: argparse.Namespace) -> int:
    from arena_gym.ros.run import run

    if args.view:
        _need_display()
    if args.model is not None and (args.world != "default" or args.robot != "builtin"
                                   or args.robot_description_topic or args.max_envs):
        raise UsageError("--model: expected it instead of --world, --robot, "
                         "--robot-description-topic and --max-envs (the model is the world)")
    return run(args.world, args.robot, args.envs, args.lockstep, args.rt_factor, args.seed,
               args.venv, view=args.view, allow_roots=tuple(args.allow_root),
               package_paths=tuple(args.package_path), max_envs=args.max_envs,
               robot_description_topic=args.robot_description_topic, model=args.model,
               arena=args.arena, arena_root=args.arena_root)


def _record(args: argparse.Namespace) -> int:
    from arena_gym.ros.record import record

    counts = record(args.out, args.world, args.robot, args.envs, args.seconds,
                    tuple(args.cmd_vel), args.seed, overwrite=args.overwrite)
    print(f"wrote {sum(counts.values())} messages to {args.out}:")
    for topic, count in sorted(counts.items()):
        print(f"  {topic:32} {count}")
    return 0


def _shipped() -> str:
    """The shipped policies' names, as `eval` and `bench` take them."""
    from arena_gym.train.pretrained import PREFIX, PRETRAINED

    return ", ".join(f"'{PREFIX}{name}'" for name in PRETRAINED)


def _config_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default=None,
                        help="a YAML config file, or a built-in one by name: default, "
                        "staged, pedestrians, maps")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config key, e.g. --set physics_dt=0.002 "
                        "--set reward.goal=20 (repeatable)")


def _overrides(args: argparse.Namespace) -> tuple[str | None, dict]:
    """(config path, overrides), checked by loading the config: nothing has started yet."""
    import yaml

    from arena_gym.config import load_config

    out: dict = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--set: expected KEY=VALUE, got {item!r}")
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise UsageError(f"--set: {key!r} sets a key inside {part!r}, which is a value")
        try:
            node[leaf] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise UsageError(f"--set {key}: expected a YAML value, got {value!r} ({exc})") from None
    load_config(args.config, **out)  # fail early: a bad key or value ends here
    return args.config, out


# what --resume takes from the run's run.json: none of these may be given with it
_RESUMED = ("algo", "num_envs", "seed", "eval_every", "eval_episodes", "out", "overwrite",
            "shards", "on_failure", "ray_address", "config", "set", *LEARNER_ARGS)


def _train(args: argparse.Namespace) -> int:
    from pathlib import Path

    from arena_gym.train.training import TrainSettings, resume, train

    if args.resume is not None:
        given = ["--" + dest.replace("_", "-") for dest, default in args.resumed_defaults.items()
                 if getattr(args, dest) != default]
        if given:
            raise UsageError(f"--resume: expected only --minutes, --steps and --no-progress "
                             f"with it (the run keeps its settings, "
                             f"{Path(args.resume) / 'run.json'}), got {', '.join(given)}")
        out = resume(args.resume, args.minutes, args.steps, progress_bar=not args.no_progress)
        print(f"run folder: {out}")
        return 0
    config, overrides = _overrides(args)
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out: expected a folder, got the file {args.out!r}")
    if config:
        overrides["config"] = config
    distributed = None
    if args.shards is not None:
        from arena_gym.distributed.settings import DistributedSettings, shard_slices

        distributed = DistributedSettings(shards=args.shards, on_failure=args.on_failure,
                                          address=args.ray_address)
        # fail early: more shards than envs
        shard_slices(args.num_envs or TrainSettings.num_envs, args.shards)
    elif args.ray_address is not None or args.on_failure != "raise":
        raise UsageError("--ray-address and --on-failure: expected with --shards")
    # flags not given keep TrainSettings' defaults (the recipe's one home)
    given = {"minutes": args.minutes, "eval_every_s": args.eval_every, "num_envs": args.num_envs,
             **{key: getattr(args, key) for key in LEARNER_ARGS}}
    settings = TrainSettings(algo=args.algo, timesteps=args.steps, seed=args.seed,
                             eval_episodes=args.eval_episodes,
                             out=args.out, progress_bar=not args.no_progress,
                             distributed=distributed, overwrite=args.overwrite,
                             **{k: v for k, v in given.items() if v is not None})
    out = train(settings, overrides)
    print(f"run folder: {out}")
    return 0


def _eval(args: argparse.Namespace) -> int:
    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.train.evaluation import check_episodes, evaluate
    from arena_gym.train.policies import is_named, make_policy

    check_episodes(args.episodes)  # before anything is built
    _pretrained_config(args)
    config, overrides = _overrides(args)
    if not is_named(args.policy) and ":" not in args.policy.removesuffix(".zip"):
        from arena_gym.train.model_files import check_model_file

        check_model_file(args.policy)  # before any env is built
    env = ArenaVectorEnv(args.num_envs, config=config,
                         render_mode="rgb_array" if args.video else None, **overrides)
    try:
        if args.video:
            from arena_gym.render.video import record_video

            env = record_video(env, args.video)
        policy = make_policy(args.policy, env, seed=args.seed, trust=args.trust_model)
        summary = evaluate(env, policy, args.episodes, seed=args.seed,
                           each=_plotter(args.plot, env) if args.plot else None)
    finally:
        env.close()
    print(f"{args.policy}: {summary.line()}")
    return 0


def _pretrained_config(args: argparse.Namespace) -> None:
    """A shipped policy ("pretrained:NAME") runs on the env config it was trained on unless
    --config names another."""
    from arena_gym.train.pretrained import is_pretrained, pretrained, pretrained_file

    if is_pretrained(args.policy):
        pretrained_file(args.policy)  # an unknown name or a missing file: before any env
        if args.config is None:
            args.config = pretrained(args.policy).config


def _plotter(folder: str, env):
    """An `evaluate` callback drawing episode k to folder/episode_K.png."""
    from pathlib import Path

    from arena_gym.bench.plots import episode

    layouts = env.unwrapped.core.layouts
    out = Path(folder)

    def draw(k: int, record: dict) -> None:
        title = f"episode {k}: {record['result']}, {record['path_length']:.1f} m driven"
        episode(out / f"episode_{k:03d}.png", layouts[record["env"]], record, title)

    return draw


def _view(args: argparse.Namespace) -> int:
    from arena_gym.envs.vector_env import ArenaVectorEnv
    from arena_gym.train.policies import make_policy

    if args.foxglove:
        from arena_gym.ros.foxglove_server import DEFAULT_HOST, DEFAULT_PORT, require_sdk

        require_sdk()  # the install hint before any work
        host = DEFAULT_HOST if args.host is None else args.host
        port = DEFAULT_PORT if args.port is None else args.port
    elif args.host is not None or args.port is not None or args.allow_origin:
        raise UsageError("--host/--port/--allow-origin: expected --foxglove too (they are its "
                         "address)")
    else:
        _need_display()
    _pretrained_config(args)
    config, overrides = _overrides(args)
    env = ArenaVectorEnv(args.num_envs, config=config, **overrides)
    shown = None
    try:
        policy = make_policy(args.policy, env, seed=args.seed, trust=args.trust_model)
        if args.foxglove:
            from arena_gym.ros.foxglove_server import start_foxglove

            shown = start_foxglove(env, host, port, tuple(args.allow_origin))
        obs, _ = env.reset(seed=args.seed)
        if args.foxglove:
            # told once every channel is made: a client subscribing to a channel the server
            # is making as the client joins can be refused it ("unknown channel")
            shown.publish()
            print(f"serving Foxglove on {shown.url} (open it in Foxglove: Open connection > "
                  "Foxglove WebSocket)", flush=True)
        else:
            from arena_gym.render.live_viewer import LiveViewer

            shown = LiveViewer(env.core.sim).start()
        dt = env.core.cfg.control_dt
        start = time.perf_counter()
        steps = 0
        try:
            while time.perf_counter() - start < args.seconds and (args.foxglove
                                                                  or shown.running):
                obs, *_ = env.step(policy(obs))
                steps += 1
                time.sleep(max(0.0, start + steps * dt - time.perf_counter()))  # real time
        except KeyboardInterrupt:  # Ctrl-C ends the view as --seconds does
            pass
        wall = time.perf_counter() - start
    finally:
        if shown is not None:
            shown.close()
        env.close()
    what = (f"{sum(shown.counts.values())} messages" if args.foxglove
            else f"{shown.frames_shown} frames shown")
    print(f"{'served' if args.foxglove else 'viewed'} {steps} steps ({steps * dt:.1f} s "
          f"simulated) in {wall:.1f} s, {what}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.target[0] == "compare":
        if len(args.target) != 3:
            raise UsageError(f"bench compare: expected two run folders, got {args.target[1:]}")
        from arena_gym.bench.compare import compare

        out = compare(args.target[1], args.target[2], args.out)
        print((out / "compare.md").read_text(encoding="utf-8"))
        return 0
    if len(args.target) != 1:
        raise UsageError(f"bench: expected one suite, got {args.target}")
    if args.policy is None:
        raise UsageError("bench: expected --policy (reactive, random, a model .zip or "
                         "module:callable)")
    import dataclasses

    from arena_gym.bench.runner import run_suite
    from arena_gym.bench.suite import load_suite

    suite = load_suite(args.target[0])
    if args.episodes:
        suite = dataclasses.replace(suite, stages=tuple(
            dataclasses.replace(s, episodes=args.episodes) for s in suite.stages))
    label = Path(args.policy).stem if args.policy.endswith(".zip") else args.policy
    out = args.out
    if out is None:
        from arena_gym.bench.runner import RUN_FILES
        from arena_gym.train.run_folders import numbered

        base = Path(f"runs/bench/{suite.name}-{label.replace(':', '-')}")
        out = str(base if args.overwrite else numbered(base, RUN_FILES))
        if out != str(base):
            print(f"bench: {base} holds a run; this one goes to {out} (--overwrite replaces "
                  "it instead)", file=sys.stderr, flush=True)
    run_suite(suite, args.policy, out, envs=args.envs, seed=args.seed, video=args.video,
              progress=not args.no_progress, trust=args.trust_model, overwrite=args.overwrite)
    print((Path(out) / "report.md").read_text(encoding="utf-8").split("\n## Metrics")[0].strip())
    print(f"run folder: {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; a user mistake prints `arena-gym: error: ...` and returns 2 (with
    --debug it raises, traceback and all)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        args = _parser().parse_args(argv)
        if args.command is None:
            _parser().print_help()
            return 2
        return args.run(args)
    except KeyboardInterrupt:  # Ctrl-C: the command said what it kept
        if debug:
            raise
        print("arena-gym: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError, ImportError) as exc:  # the domain errors are ValueErrors
        if debug:
            raise
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"arena-gym: error: {message}", file=sys.stderr)
        return 2


def _plugins(args: argparse.Namespace) -> int:
    # the modules whose import registers each kind's built-ins
    from arena_gym.registry import REGISTRIES, load_entry_points
    from arena_gym.sensors import kinds  # noqa: F401
    from arena_gym.sim import drive  # noqa: F401
    from arena_gym.tasks import rewards  # noqa: F401
    from arena_gym.train import policies  # noqa: F401
    from arena_gym.worlds import layouts  # noqa: F401

    for registry in REGISTRIES:
        entries = [f"{name} ({registry.source(name)})" if registry.source(name) else name
                   for name in registry.names()]
        print(f"{registry.plural}: {', '.join(entries) or '-'}")
    for failure in load_entry_points().values():
        print(f"failed: {failure}")
    return 0


def _version(args: argparse.Namespace) -> int:
    import mujoco

    import arena_gym

    print(f"arena_gym {arena_gym.__version__} (mujoco {mujoco.__version__}, "
          f"python {sys.version.split()[0]})")
    return 0


def _demo(args: argparse.Namespace) -> int:
    import numpy as np

    from arena_gym.geometry.rotations import quat_yaw
    from arena_gym.scene import SceneStore
    from arena_gym.sim import Simulator
    from arena_gym.worlds import build_default_world
    from arena_gym.worlds.default import ROBOT_NAME

    n = args.num_envs
    t0 = time.perf_counter()
    store = SceneStore(num_envs=n)
    starts, turn_rates = [], []
    for env in range(n):
        rng = np.random.default_rng(args.seed + env)
        starts.append(build_default_world(store, env, rng))
        turn_rates.append(float(rng.uniform(-MAX_TURN_RATE, MAX_TURN_RATE)))
    sim = Simulator(store)
    for env, omega in enumerate(turn_rates):
        sim.set_cmd_vel(env, ROBOT_NAME, FORWARD_SPEED, omega)
    groups = sim.groups()  # compiles and groups the envs
    build_s = time.perf_counter() - t0

    total = max(1, round(args.seconds / sim.timestep))
    t0 = time.perf_counter()
    remaining = total
    while remaining:
        chunk = min(CHUNK_STEPS, remaining)
        sim.step(chunk)
        remaining -= chunk
    wall = time.perf_counter() - t0
    sim_seconds = total * sim.timestep

    print(f"built {n} envs in {build_s:.2f} s; timestep {sim.timestep:g} s, "
          f"{sim.nthread} threads")
    for kind, ids in groups:
        print(f"  {kind} group: {len(ids)} envs {_id_ranges(ids)}")
    print(f"stepped {sim_seconds:g} sim s ({total} steps per env) in {wall:.2f} s wall")
    print(f"  aggregate physics steps/s: {n * total / wall:,.0f}")
    print(f"  real-time factor: {sim_seconds / wall:.1f}x (each env), "
          f"{n * sim_seconds / wall:.1f}x (all envs)")
    if sim.diverged:
        print(f"  diverged (reset) in the last step: envs {sim.diverged}")
    print()
    print(f"{'env':>4} {'omega':>6} | {'start x':>8} {'y':>7} {'yaw':>7} | "
          f"{'end x':>8} {'y':>7} {'yaw':>7} | {'moved':>6}")
    for env in range(n):
        x0, y0, yaw0 = starts[env]
        pos, quat = store[env].get_pose(ROBOT_NAME)
        moved = math.hypot(pos[0] - x0, pos[1] - y0)
        print(f"{env:>4} {turn_rates[env]:>6.2f} | {x0:>8.2f} {y0:>7.2f} "
              f"{math.degrees(yaw0):>7.1f} | {pos[0]:>8.2f} {pos[1]:>7.2f} "
              f"{math.degrees(float(quat_yaw(quat))):>7.1f} | {moved:>6.2f}")
    print("(x, y in m; yaw in degrees; omega in rad/s; moved: start-to-end distance in m)")
    sim.close()
    return 0


def _id_ranges(ids: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2, 5'."""
    parts: list[list[int]] = []
    for i in ids:
        if parts and parts[-1][1] == i - 1:
            parts[-1][1] = i
        else:
            parts.append([i, i])
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in parts)


if __name__ == "__main__":
    sys.exit(main())
