"""An Arena-Rosnav session against `arena-gym bridge --arena`, written only from Arena's
interface (service names, arena_mujoco_msgs types and fields, topics a SpawnUrdf request
names) and run as Arena's runtime runs one (MujocoHost: pause, cleanup of each env's
namespace, Step; MujocoSimulator: walls, floors, SpawnUrdf, prims, lights), as a separate
rclpy process.

    <ros venv>/bin/python arena_session.py CONFIG.json     # prints the transcript (JSON)

CONFIG: {"urdf": the robot's URDF (absolute file:// meshes inside the Arena root), "lamp":
a lamp model's body mesh, "shade": its glow part's mesh, "links": the URDF's links,
"max_envs": the bridge's bound}. The transcript lists every call and answer and what the
topics showed; tests/ros/test_arena_session.py checks it.
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
from pathlib import Path

import rclpy
from arena_mujoco_msgs.msg import Floor, Light, LightState, Prim, Scale, Sensor, Visual, Wall
from arena_mujoco_msgs.srv import (
    DeletePrims,
    ResetWorld,
    SetLights,
    SpawnFloors,
    SpawnLights,
    SpawnPrims,
    SpawnUrdf,
    SpawnWalls,
    Step,
)
from geometry_msgs.msg import Point, Pose, Quaternion, Twist, Vector3
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Image, JointState
from std_msgs.msg import ColorRGBA
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: waiting.py
from waiting import within  # noqa: E402 - after the path it is found on

TIMEOUT = 120.0
PHYSICS_DT = 0.002  # Arena's MujocoHost steps seconds / 0.002 physics steps


def pose(x: float, y: float, z: float = 0.0, yaw: float = 0.0) -> Pose:
    return Pose(position=Point(x=x, y=y, z=z),
                orientation=Quaternion(w=math.cos(yaw / 2), z=math.sin(yaw / 2)))


def seconds(t) -> float:
    return t.sec + t.nanosec * 1e-9


class Session:
    """The runtime's node: service calls (kept in the transcript) and topic listeners."""

    def __init__(self) -> None:
        self.node = rclpy.create_node("task_generator_node")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        threading.Thread(target=self._spin, daemon=True).start()
        self.transcript: list[dict] = []
        self.seen: dict[str, list] = {}
        self._lock = threading.Condition()
        self._clients: dict[str, object] = {}
        self._publishers: dict[str, object] = {}

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except ExternalShutdownException:
            pass

    def call(self, kind, service: str, request, note: str = "", log: bool = True):
        client = self._clients.get(service)
        if client is None:
            client = self._clients[service] = self.node.create_client(kind, service)
        if not client.wait_for_service(timeout_sec=TIMEOUT):
            raise SystemExit(f"no service {service}")
        future = client.call_async(request)
        answered = threading.Event()
        future.add_done_callback(lambda _: answered.set())
        if not answered.wait(TIMEOUT):
            raise SystemExit(f"{service}: no answer in {TIMEOUT} s")
        answer = future.result()
        if not log:
            return answer
        fields = {name: getattr(answer, name) for name in answer.get_fields_and_field_types()}
        self.transcript.append({"call": service, "note": note, "answer": {
            k: (list(v) if not isinstance(v, (str, bool, int, float)) else v)
            for k, v in fields.items()}})
        return answer

    def listen(self, kind, topic: str, qos=100) -> None:
        self.seen[topic] = []

        def keep(msg, topic=topic):
            with self._lock:
                self.seen[topic].append(msg)
                self._lock.notify_all()

        self.node.create_subscription(kind, topic, keep, qos)

    def wait(self, topic: str, ok, what: str):
        """The last message on `topic` once ok(messages) holds for the messages so far."""
        with self._lock:
            found = self._lock.wait_for(lambda: ok(self.seen[topic]), TIMEOUT)
            if not found:
                raise SystemExit(f"{topic}: {what} not seen in {TIMEOUT} s")
            return self.seen[topic][-1]

    def publish(self, kind, topic: str, msg, note: str, log: bool = True,
                subscribed: bool = True) -> None:
        """Publish, once a subscriber is there when `subscribed` (else at once); the
        subscribers it had go into the transcript (when `log`)."""
        publisher = self._publishers.get(topic)
        if publisher is None:
            publisher = self._publishers[topic] = self.node.create_publisher(kind, topic, 10)
        if subscribed:
            within(lambda: publisher.get_subscription_count() > 0, TIMEOUT)
        publisher.publish(msg)
        if log:
            self.transcript.append({"topic": topic, "note": note,
                                    "subscribers": publisher.get_subscription_count()})

    def step(self, seconds_: float, note: str = "", log: bool = True) -> float:
        """MujocoHost.step_seconds: n physics steps, then the clock at the answer's time."""
        n = max(1, round(seconds_ / PHYSICS_DT))
        answer = self.call(Step, "/mujoco/Step", Step.Request(n=n), note, log)
        self.wait("/clock", lambda ms: ms and seconds(ms[-1].clock) >= answer.sim_time - 1e-9,
                  f"the clock at {answer.sim_time}")
        return answer.sim_time


def robot_request(env: int, name: str, urdf: str, x: float, yaw: float = 0.0,
                  camera: bool = False) -> SpawnUrdf.Request:
    """What MujocoSimulator.robot_spawn sends for robot `name` of env `env`."""
    ns = f"/env_{env}/{name}"
    sensors = [Sensor(name="lidar", type="laserscan", topic=f"{ns}/scan", frame="base_scan",
                      sensor="base_scan")]
    if camera:
        sensors.append(Sensor(name="camera", type="image", topic=f"{ns}/camera/image_raw",
                              frame="", sensor="cam"))
    return SpawnUrdf.Request(
        env_id=env, name=f"env_{env}/Robots/{name}", urdf_path=urdf, robot_model=name,
        localization=True, tf_prefix=f"env_{env}/{name}/", base_frame="base_footprint",
        odom_frame="odom", pose=pose(x, 0.0, yaw=yaw), cmd_vel_topic=f"{ns}/cmd_vel",
        joint_states_topic=f"{ns}/joint_states", odom_topic=f"{ns}/odom", sensors=sensors)


def cleanup(s: Session, env: int) -> bool:
    """MujocoHost.cleanup_namespace: DeletePrims of the env's prefix."""
    answer = s.call(DeletePrims, "/mujoco/DeletePrims",
                    DeletePrims.Request(env_id=env, names=[f"env_{env}/"]), f"cleanup env_{env}")
    return bool(answer.ret and answer.ret[0])


def lamp_light(level: float) -> Light:
    """A bulb inside the lamp's shade (it lights the room, not the shade's outside) whose
    glow visuals shine with it."""
    return Light(name="lamp", shape="sphere", radius=0.03, positions=[Point(x=1.5, y=0.0, z=0.2)],
                 intensity=4000.0, level=level, glow_prim="env_1/Obstacles/lamp",
                 glow_color=ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0))


def mean(image: Image) -> float:
    data = bytes(image.data)
    return sum(data) / max(len(data), 1)


def centre(image: Image) -> list[int]:
    row, col = image.height // 2, image.width // 2
    at = row * image.step + col * 3
    return list(bytes(image.data)[at:at + 3])


def main() -> None:
    with open(sys.argv[1]) as fh:
        config = json.load(fh)
    rclpy.init()
    s = Session()
    urdf = config["urdf"]
    latched = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    s.listen(Clock, "/clock")
    s.listen(TFMessage, "/tf")
    s.listen(TFMessage, "/tf_static", latched)
    s.listen(Odometry, "/env_3/sessionbot/odom")
    s.listen(JointState, "/env_3/sessionbot/mujoco/joint_states")
    s.listen(Image, "/env_1/sessionbot/camera/image_raw")
    seen: dict = {}

    # MujocoHost: pause; the task generator cleans each env's namespace (first contact)
    s.call(Trigger, "/mujoco/PauseSimulation", Trigger.Request(), "MujocoHost.pause")
    seen["cleanup"] = [cleanup(s, env) for env in range(4)]
    seen["clock_without_robots"] = s.step(0.02, "no robot yet: the clock goes on")
    # the graph learns node names on its own time
    seen["server_node"] = bool(within(lambda: "mujoco" in [
        n for n, _ in s.node.get_node_names_and_namespaces()], TIMEOUT))
    seen["robot_of_ours"] = [t for t, _ in s.node.get_topic_names_and_types()
                             if t.startswith("/robot/")]

    # env 0: a room and a robot, cleaned up again (DeletePrims env_0/ leaves nothing)
    s.call(SpawnWalls, "/mujoco/SpawnWalls", SpawnWalls.Request(env_id=0, walls=[
        Wall(name="env_0/Walls/wall_0", start=Point(x=-3.0, y=-3.0), end=Point(x=3.0, y=-3.0,
                                                                                 z=2.0))]))
    s.call(SpawnFloors, "/mujoco/SpawnFloors", SpawnFloors.Request(env_id=0, floors=[
        Floor(name="env_0/Floors/floor_0", x_length=6.0, y_length=6.0, pos=Point())]))
    first = s.call(SpawnUrdf, "/mujoco/SpawnUrdf", robot_request(0, "sessionbot", urdf, 0.0))
    seen["cleanup_env_0"] = cleanup(s, 0)
    again = s.call(SpawnUrdf, "/mujoco/SpawnUrdf", robot_request(0, "sessionbot", urdf, 0.0),
                   "the same name again: nothing of it was left")
    seen["paths"] = [first.path, again.path]
    cleanup(s, 0)

    # env 1: a robot with a camera facing a lamp whose shade glows with its light
    s.call(SpawnUrdf, "/mujoco/SpawnUrdf", robot_request(1, "sessionbot", urdf, 0.0, camera=True))
    s.call(SpawnPrims, "/mujoco/SpawnPrims", SpawnPrims.Request(env_id=1, prims=[Prim(
        name="env_1/Obstacles/lamp", pose=pose(1.5, 0.0), scale=Scale(x=1.0, y=1.0, z=1.0),
        mesh_path=config["lamp"], visuals=[Visual(
            name="glow_Shade", mesh_path="file://" + config["shade"],
            pose=pose(0.0, 0.0, 0.2), scale=Scale(x=1.0, y=1.0, z=1.0))])]))
    s.call(SpawnLights, "/mujoco/SpawnLights", SpawnLights.Request(env_id=1, lights=[
        lamp_light(1.0)]))
    seen["camera"] = []
    for level in (1.0, 0.5, 0.0):
        if level < 1.0:
            s.call(SetLights, "/mujoco/SetLights", SetLights.Request(env_id=1, lights=[
                LightState(name="lamp", level=level)]), f"dim to {level}")
        t = s.step(0.3, f"frames at level {level}")
        image = s.wait("/env_1/sessionbot/camera/image_raw",
                       lambda ms, t=t: ms and seconds(ms[-1].header.stamp) >= t - 0.1 - 1e-9,
                       f"a frame at {t}")
        seen["camera"].append({"level": level, "mean": mean(image), "centre": centre(image),
                               "size": [image.width, image.height]})
    s.call(ResetWorld, "/mujoco/ResetWorld", ResetWorld.Request(env_id=1))
    seen["lights_after_reset"] = list(s.call(SetLights, "/mujoco/SetLights", SetLights.Request(
        env_id=1, lights=[LightState(name="lamp", level=1.0)]), "ResetWorld dropped it").ret)

    # env 2: a box (first contact by SpawnPrims)
    s.call(SpawnPrims, "/mujoco/SpawnPrims", SpawnPrims.Request(env_id=2, prims=[Prim(
        name="env_2/Obstacles/box", pose=pose(1.0, 1.0, 0.25),
        scale=Scale(x=0.5, y=0.5, z=0.5))]))

    # env 3: a robot driven as ros2_control drives it: cmd_vel is the controller's, not ours
    s.call(SpawnUrdf, "/mujoco/SpawnUrdf", robot_request(3, "sessionbot", urdf, 0.0))
    t = s.step(0.2, "settle")
    x0 = s.wait("/env_3/sessionbot/odom", lambda ms, t=t: ms and seconds(
        ms[-1].header.stamp) >= t - 1e-9, "odometry").pose.pose.position.x
    # the robot's subscriptions known (its joint commands'), who takes its cmd_vel?
    within(lambda: s.node.count_subscribers(
        "/env_3/sessionbot/mujoco/joint_commands_velocity") > 0, TIMEOUT)
    s.publish(Twist, "/env_3/sessionbot/cmd_vel", Twist(linear=Vector3(x=0.5)),
              "a twist for the runtime's controller", subscribed=False)
    t = s.step(0.5, "after the twist")
    x1 = s.wait("/env_3/sessionbot/odom", lambda ms, t=t: ms and seconds(
        ms[-1].header.stamp) >= t - 1e-9, "odometry").pose.pose.position.x
    def drive(log: bool) -> tuple[float, float]:
        """As the runtime's controller_manager: a joint command, then a cycle (0.1 s); the
        clock and the odometry's x after it. A topic and a service are not ordered: a
        command may take effect a cycle or more later."""
        s.publish(JointState, "/env_3/sessionbot/mujoco/joint_commands_velocity", JointState(
            name=["wheel_left_joint", "wheel_right_joint", "phantom_joint"],
            velocity=[6.0, 6.0, 1.0]), "a joint command, one name unknown", log=log)
        t = s.step(0.1, "after the joint command" if log else "", log=log)
        return t, s.wait("/env_3/sessionbot/odom", lambda ms, t=t: ms and seconds(
            ms[-1].header.stamp) >= t - 1e-9, "odometry").pose.pose.position.x

    t, x = drive(log=True)
    for _ in range(int(TIMEOUT / 0.1)):  # until the commands move it
        if x - x1 > 0.01:
            break
        t, x = drive(log=False)
    moving = x
    for _ in range(10):  # then one second more of commands
        t, x = drive(log=False)
    seen["odom_x"] = [x0, x1, moving, x]

    # lockstep, between Steps: joint states go on at the frozen clock
    before = len(s.seen["/env_3/sessionbot/mujoco/joint_states"])
    states = s.wait("/env_3/sessionbot/mujoco/joint_states",
                    lambda ms: len(ms) >= before + 5, "joint states between Steps")
    seen["joint_states_between_steps"] = {
        "more": len(s.seen["/env_3/sessionbot/mujoco/joint_states"]) - before,
        "stamp": seconds(states.header.stamp), "clock": t, "names": list(states.name)}

    # beyond the bound: the item fails (the bridge says why on its stderr)
    s.call(SpawnPrims, "/mujoco/SpawnPrims", SpawnPrims.Request(
        env_id=config["max_envs"], prims=[Prim(name="far/box", scale=Scale(x=1.0, y=1.0,
                                                                             z=1.0))]))
    static = s.wait("/tf_static", lambda ms: bool(ms), "a latched /tf_static")
    seen["tf_static"] = [[tr.header.frame_id, tr.child_frame_id] for tr in static.transforms]
    tf = s.wait("/tf", lambda ms: bool(ms), "/tf")
    seen["tf_children"] = sorted({tr.child_frame_id for tr in tf.transforms})
    print(json.dumps({"transcript": s.transcript, "seen": seen}), flush=True)
    rclpy.try_shutdown()
    os._exit(0)  # the executor thread may sit in a DDS wait: do not join it


if __name__ == "__main__":
    main()
