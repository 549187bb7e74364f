"""The bridge as a sidecar of a training env: it publishes what the env's own sensors read.

    env = ArenaVectorEnv(4)
    bridge = start_sidecar(env)          # needs 'arena-gym ros setup'
    env.reset(seed=0); env.step(actions) # each control step is published
    bridge.close()

The env drives the simulator; the bridge only publishes, once per control step, after the
env has sampled its sensors (env 0 under /robot, env i under /env_i/robot): `scan` is the
env's "scan" reading, the one its observations come from. An odometry reading is added to
the env's suite (tf and odom need it). Service calls are refused (success False) and
cmd_vel is dropped: a second driver would fight the policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena_gym.envs.core import ROBOT
from arena_gym.ros.server import Bridge
from arena_gym.ros.stream import env_odometry


def start_sidecar(env: Any, venv: Path | None = None) -> Bridge:
    """Start a publishing bridge on an ArenaVectorEnv or ArenaEnv (through its `core`)."""
    core, odom = env_odometry(env)
    suite = core.sensor_suite
    bridge = Bridge.start(core.sim, suite, ROBOT, venv=venv, serving=False)
    # the env samples its suite once per control step (not in a tick hook): publish then,
    # when the odometry (added last, so sampled last) has shown its sample
    bridge.publishing = False
    suite.subscribe(odom.key, lambda reading, envs: bridge.publish_frame())
    return bridge
