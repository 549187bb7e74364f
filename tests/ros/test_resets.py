"""Resets over ROS from a real rclpy process (issue 34 item 4): /mujoco/reset (mujoco_ros's
`reset`: every env to its initial state) and /mujoco/reset_to_keyframe (a keyframe by name
or index, or the initial state, as mujoco_ros2_control's ResetWorld), with the failure
text of an unknown keyframe; and joint_states.effort is MuJoCo's qfrc_actuator at each
joint's dof."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ros.conftest import Probe, served

KEYS = "arena_gym_interfaces/srv/ResetToKeyframe"
TWIST = "geometry_msgs/msg/Twist"
JOINTS = "sensor_msgs/msg/JointState"
LIFTED = (0.5, -0.25, 0.3)  # the robot's base in keyframe "lifted"


@pytest.fixture(scope="module")
def keyed(ros_env):
    """A lockstep bridge over 2 envs of the default world whose models hold the keyframe
    "lifted" (added before the bridge starts: its initial state is the state as built)."""
    from arena_gym.ros.run import build_envs

    store, name = build_envs("default", "builtin", 2, seed=0)
    for env in range(2):
        model = store[env].model
        qpos = model.qpos0.copy()
        qpos[:3] = LIFTED  # the robot's free joint comes first
        scene = store.scene(env)
        scene.spec.add_key(name="lifted", qpos=qpos, qvel=np.zeros(model.nv))
        scene.compile()
    with served(store, name, ros_env) as bridge:
        yield bridge


@pytest.fixture(scope="module")
def prober(keyed, ros_env):
    p = Probe(ros_env)
    yield p
    p.close()


def _read(bridge, fn):
    """`fn()` on the bridge's loop, between ticks."""
    return bridge.runner.call_soon(fn).result(timeout=60)


def _states(bridge) -> list[bytes]:
    store = bridge.sim.store
    return _read(bridge, lambda: [store[e].data.qpos.tobytes() + store[e].data.qvel.tobytes()
                                  for e in range(2)])


def _base(bridge, env: int) -> tuple[float, ...]:
    return _read(bridge, lambda: tuple(bridge.sim.store[env].data.qpos[:3].tolist()))


def _drive(bridge, prober: Probe) -> None:
    prober.command(bridge, "cmd_vel", "/robot/cmd_vel", TWIST,
                   {"linear": {"x": 0.2}, "angular": {"z": 1.0}})
    assert prober.step(200)["success"]


def test_reset_puts_every_env_back_to_its_initial_state(keyed, prober):
    initial = _states(keyed)
    _drive(keyed, prober)
    assert _states(keyed) != initial
    reply = prober.call("/mujoco/reset", "std_srvs/srv/Trigger")
    assert reply == {"success": True, "message": "all 2 envs reset to the initial state"}
    assert _states(keyed) == initial


def test_a_keyframe_by_name_or_index_resets_the_envs_named(keyed, prober):
    initial = _states(keyed)
    reply = prober.call("/mujoco/reset_to_keyframe", KEYS, keyframe="lifted", env_id=-1)
    assert reply == {"success": True, "message": "all 2 envs reset to keyframe 'lifted'"}
    assert [_base(keyed, e) for e in range(2)] == [LIFTED, LIFTED]
    prober.call("/mujoco/reset", "std_srvs/srv/Trigger")
    reply = prober.call("/mujoco/reset_to_keyframe", KEYS, index=0, env_id=1)
    assert reply == {"success": True, "message": "env 1 reset to keyframe #0"}
    assert _base(keyed, 1) == LIFTED and _states(keyed)[0] == initial[0]
    reply = prober.call("/mujoco/reset_to_keyframe", KEYS, env_id=1)  # neither: initial
    assert reply == {"success": True, "message": "env 1 reset to the initial state"}
    assert _states(keyed) == initial


def test_an_unknown_keyframe_is_named_and_resets_no_env(keyed, prober):
    _drive(keyed, prober)
    before = _states(keyed)
    reply = prober.call("/mujoco/reset_to_keyframe", KEYS, keyframe="liftd", env_id=-1)
    assert reply == {"success": False, "message": "reset_to_keyframe: unknown keyframe in env "
                                                  "0 'liftd'; did you mean 'lifted'?"}
    reply = prober.call("/mujoco/reset_to_keyframe", KEYS, index=3, env_id=-1)
    assert reply == {"success": False, "message": "reset_to_keyframe: keyframe index 3 in "
                                                  "env 0: expected 0 <= index < 1 (keyframes "
                                                  "['lifted'])"}
    reply = prober.call("/mujoco/reset_to_keyframe", KEYS, keyframe="lifted", env_id=7)
    assert reply == {"success": False, "message": "reset_to_keyframe: unknown env_id 7: "
                                                  "expected 0 <= env_id < 2"}
    assert _states(keyed) == before


def test_joint_effort_is_mujocos_actuator_force_at_each_joint(keyed, prober):
    assert prober.listen("/robot/joint_states", JOINTS) == 1
    prober.call("/mujoco/reset", "std_srvs/srv/Trigger")
    prober.command(keyed, "cmd_vel", "/robot/cmd_vel", TWIST,
                   {"linear": {"x": 0.2}, "angular": {"z": 0.0}})
    assert prober.step(30)["success"]  # accelerating: the wheel servos push
    last = prober.take("/robot/joint_states", 3)[-1]
    store = keyed.sim.store

    def mujocos() -> list[float]:
        model, data = store[0].model, store[0].data
        return [float(data.qfrc_actuator[model.joint(store[0].full_name(f"robot/{n}"))
                                         .dofadr[0]]) for n in last["name"]]

    effort = _read(keyed, mujocos)
    assert last["effort"] == pytest.approx(effort, rel=1e-12, abs=1e-12)
    assert min(abs(e) for e in effort) > 1e-4  # the wheels are driven
