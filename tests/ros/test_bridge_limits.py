"""The bridge confined and bounded (issue 35): spawn requests read files only inside the
allowed folders, a request too big is answered at once, a long Step leaves the other
services answering, and the bugs of issue 33 on our own services (a Step ending between
ticks publishes that tick, ResetWorld frees pedestrians, DeletePrims takes patterns)."""

from __future__ import annotations

import re
import threading

import pytest

from arena_gym.ros.files import file_roots
from arena_gym.ros.run import build_envs
from arena_gym.ros.wire import MAX_ITEMS, MAX_STEPS
from arena_gym.worlds.default import builtin_robot_urdf
from tests.ros.conftest import Probe, served

SRV = "arena_gym_interfaces/srv/"


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    """The bridge's roots: the built-in robot's folder, the assets and one extra folder."""
    extra = tmp_path_factory.mktemp("allowed")
    return extra, file_roots(builtin_robot_urdf(), [extra])


@pytest.fixture(scope="module")
def confined(ros_env, roots):
    with served(*build_envs("empty", "builtin", 1, seed=0, path_roots=roots[1]), ros_env) as b:
        yield b


@pytest.fixture(scope="module")
def client(confined, ros_env):
    p = Probe(ros_env)
    yield p
    p.close()


def _step(probe: Probe, steps: int) -> dict:
    """A Step from a thread whose probe may be killed meanwhile (then: {})."""
    try:
        return probe.step(steps)
    except RuntimeError:
        return {}


def _urdf(mesh: str) -> str:
    return (f'<robot name="r"><link name="base"><visual><geometry><mesh filename="{mesh}"/>'
            '</geometry></visual><collision><geometry><box size="0.2 0.2 0.2"/></geometry>'
            '</collision><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" '
            'ixy="0" ixz="0" iyz="0"/></inertial></link></robot>')


def test_spawn_requests_read_no_file_outside_the_allowed_folders(confined, client, roots):
    before = list(confined.sim.store[0].entities)
    reply = client.call("/mujoco/spawn_urdf", SRV + "SpawnUrdf", env_id=0, name="peek",
                        urdf_path="/etc/shadow")
    assert reply == {"success": False, "message": (
        "spawn_urdf: URDF file '/etc/shadow': expected a path inside the allowed roots")}
    inside = roots[0] / "sneaky.urdf"
    inside.write_text(_urdf("file:///etc/passwd"))
    reply = client.call("/mujoco/spawn_urdf", SRV + "SpawnUrdf", env_id=0, name="sneaky",
                        urdf_path=str(inside))
    assert reply == {"success": False, "message": (
        "spawn_urdf: robot 'sneaky' (sneaky.urdf): visual mesh of link 'base' refused: "
        "'file:///etc/passwd' is outside the allowed roots")}
    arena = client.call("/mujoco/SpawnUrdf", "arena_mujoco_msgs/srv/SpawnUrdf", env_id=0,
                        name="env_0/peek", urdf_path="/etc/shadow", base_frame="base")
    assert arena == {"path": ""}
    mesh = client.call("/mujoco/SpawnPrims", "arena_mujoco_msgs/srv/SpawnPrims", env_id=0,
                       prims=[{"name": "peek", "mesh_path": "/etc/passwd",
                               "scale": {"x": 1.0, "y": 1.0, "z": 1.0}}])
    assert mesh == {"ret": [False]}
    assert list(confined.sim.store[0].entities) == before


def test_a_request_too_big_is_answered_at_once_naming_the_limit(confined, client):
    reply = client.call("/mujoco/step", SRV + "Step", steps=MAX_STEPS + 1)
    assert reply["success"] is False
    assert reply["message"] == (f"step: expected at most {MAX_STEPS} steps per request (split "
                                f"longer runs into several Steps), got {MAX_STEPS + 1}")
    boxes = [{"name": f"b{i}", "x": 0.0, "y": 0.0, "z": 0.1, "yaw": 0.0,
              "scale": {"x": 0.1, "y": 0.1, "z": 0.1}} for i in range(MAX_ITEMS + 1)]
    reply = client.call("/mujoco/spawn_prims", SRV + "SpawnPrims", env_id=0, prims=boxes)
    assert reply == {"success": False, "names": [], "message": (
        f"spawn_prims: expected at most {MAX_ITEMS} prims per request (split it into "
        f"several), got {MAX_ITEMS + 1}")}
    arena = client.call("/mujoco/Step", "arena_mujoco_msgs/srv/Step", n=MAX_STEPS + 1)
    assert arena["success"] is False
    assert list(confined.sim.store[0].entities) == ["robot"]


def test_a_prim_far_out_is_refused(confined, client):
    far = {"name": "far", "x": 1e300, "y": 0.0, "z": 0.1, "yaw": 0.0,
           "scale": {"x": 0.2, "y": 0.2, "z": 0.2}}
    reply = client.call("/mujoco/spawn_prims", SRV + "SpawnPrims", env_id=0, prims=[far])
    assert reply == {"success": False, "names": [], "message": (
        "spawn_prims: Prim 'far' pose: expected numbers within +-10000 (m, rad), got "
        "(1e+300, 0.0, 0.1, 0.0)")}


def test_a_step_ending_between_ticks_publishes_that_tick(confined, client):
    def ns(t: dict) -> int:
        return t["sec"] * 1_000_000_000 + t["nanosec"]

    client.listen("/clock", "rosgraph_msgs/msg/Clock")
    client.listen("/tf", "tf2_msgs/msg/TFMessage")
    try:
        base = ns(client.step(0)["clock"])
        assert base % 20_000_000 == 0  # on a tick
        reply = client.step(15)
        assert ns(reply["clock"]) == base + 30_000_000
        clocks = [ns(m["clock"]) - base for m in client.take("/clock", count=2)]
        tfs = [ns(m["transforms"][0]["header"]["stamp"]) - base
               for m in client.take("/tf", count=2)]
        assert clocks == tfs == [20_000_000, 30_000_000]  # the short tick too
        arena = client.call("/mujoco/Step", "arena_mujoco_msgs/srv/Step", n=5)
        assert arena == {"success": True, "sim_time": pytest.approx((base + 40e6) / 1e9)}
        assert [ns(m["clock"]) - base for m in client.take("/clock", count=1)] == [40_000_000]
    finally:
        client.ask(do="unlisten", topic="/clock")
        client.ask(do="unlisten", topic="/tf")


def test_reset_world_frees_the_pedestrians_names(confined, client):
    ped = {"name": "walker", "x": 1.0, "y": 0.5, "yaw": 0.0}
    spawn = dict(env_id=0, pedestrians=[ped])
    assert client.call("/mujoco/spawn_pedestrians", SRV + "SpawnPedestrians", **spawn)["success"]
    assert client.call("/mujoco/reset_world", SRV + "ResetWorld", env_id=0)["success"]
    assert list(confined.sim.store[0].pedestrians.slots) == []
    again = client.call("/mujoco/spawn_pedestrians", SRV + "SpawnPedestrians", **spawn)
    assert again == {"success": True, "message": "", "names": ["walker"]}
    client.call("/mujoco/reset_world", SRV + "ResetWorld", env_id=0)


def test_delete_prims_takes_fnmatch_patterns(confined, client):
    boxes = [{"name": n, "x": x, "y": 2.0, "z": 0.1, "yaw": 0.0,
              "scale": {"x": 0.2, "y": 0.2, "z": 0.2}} for x, n in enumerate(["pa", "pb", "q"])]
    assert client.call("/mujoco/spawn_prims", SRV + "SpawnPrims", env_id=0,
                       prims=boxes)["success"]
    reply = client.call("/mujoco/delete_prims", SRV + "DeletePrims", env_id=0, names=["p?"])
    assert reply == {"success": True, "message": "", "deleted": ["pa", "pb"]}
    reply = client.call("/mujoco/delete_prims", SRV + "DeletePrims", env_id=0, names=["*"])
    assert reply == {"success": True, "message": "", "deleted": ["q"]}  # not the robot
    reply = client.call("/mujoco/delete_prims", SRV + "DeletePrims", env_id=0, names=["z*"])
    assert reply["success"] is False
    assert re.fullmatch(re.escape("delete_prims: nothing in env 0 matches 'z*'; it has ") +
                        r"\[.*\]", reply["message"])


def test_a_long_step_leaves_the_other_services_answering(confined, client, ros_env):
    # last in the module: the Step runs on until the module's bridge stops
    stepper = Probe(ros_env)
    answers: list[dict] = []
    long = threading.Thread(target=lambda: answers.append(_step(stepper, MAX_STEPS)))
    try:
        client.listen("/clock", "rosgraph_msgs/msg/Clock")
        long.start()
        assert client.take("/clock", count=3)  # the long Step is under way
        box = {"name": "during", "x": 1.0, "y": 1.0, "z": 0.1, "yaw": 0.0,
               "scale": {"x": 0.2, "y": 0.2, "z": 0.2}}
        reply = client.call("/mujoco/spawn_prims", SRV + "SpawnPrims", env_id=0, prims=[box])
        assert reply["success"], reply
        assert long.is_alive() and not answers  # answered while the Step still runs
        assert "during" in list(confined.sim.store[0].entities)
    finally:
        stepper.process.kill()  # its Step ends when the bridge stops (module teardown)
        stepper.process.wait()
        client.ask(do="unlisten", topic="/clock")
