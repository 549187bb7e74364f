"""A client of the Arena MuJoCo server, written only from Arena's interface (its service
names, the arena_mujoco_msgs / arena_people_msgs / viewport_control_msgs types and their
fields): what Arena's runtime and task generator do to a world, as a separate rclpy process.

    <ros venv>/bin/python arena_client.py CONFIG.json     # prints the transcript (JSON)

CONFIG: {"urdf": a robot URDF with package:// meshes, "mesh": a furnished obstacle's mesh,
"mdl": an .mdl material, "actor": a pedestrian actor SDF}. The transcript lists every call
(service, answer) and what the topics showed; a test checks it.
"""

from __future__ import annotations

import array
import json
import math
import os
import sys
import threading
from pathlib import Path

import rclpy
import rclpy.duration
from arena_mujoco_msgs.msg import Light, Material, Prim, Scale, Sensor, Wall
from arena_mujoco_msgs.srv import (
    DeletePrims,
    EditPrims,
    ResetWorld,
    SpawnLights,
    SpawnPrims,
    SpawnUrdf,
    SpawnWalls,
    Step,
)
from arena_people_msgs.msg import Pedestrian, Pedestrians, SpawnPedestrian
from arena_people_msgs.srv import SpawnPedestrians
from geometry_msgs.msg import Point, Pose, Quaternion
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState, LaserScan
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from viewport_control_msgs.srv import ViewportCapture, ViewportSetView

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: waiting.py
from waiting import within  # noqa: E402 - after the path it is found on

TIMEOUT = 120.0


def plain(msg):
    """A message as JSON data (an image's bytes by their count)."""
    if hasattr(msg, "get_fields_and_field_types"):
        out = {}
        for name in msg.get_fields_and_field_types():
            value = getattr(msg, name)
            out[name] = (len(value) if name == "data" and hasattr(msg, "encoding")
                         else plain(value))
        return out
    if isinstance(msg, (list, tuple, array.array)) or type(msg).__name__ == "ndarray":
        return [plain(v) for v in msg]
    return msg


def pose(x: float, y: float, z: float = 0.0, yaw: float = 0.0, pitch: float = 0.0) -> Pose:
    cy, sy, cp, sp = math.cos(yaw / 2), math.sin(yaw / 2), math.cos(pitch / 2), math.sin(pitch / 2)
    return Pose(position=Point(x=x, y=y, z=z),
                orientation=Quaternion(w=cy * cp, x=-sy * sp, y=cy * sp, z=sy * cp))


class Client:
    def __init__(self) -> None:
        self.node = rclpy.create_node("arena_client")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        threading.Thread(target=self._spin, daemon=True).start()
        self.transcript: list[dict] = []
        self.seen: dict[str, list] = {}
        self._lock = threading.Condition()  # notified with every message kept
        self._clients: dict[str, object] = {}

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except ExternalShutdownException:
            pass

    def call(self, kind, service: str, request):
        # one client per service, kept: destroying one while the executor's thread builds
        # its wait set ends that thread (rclpy's InvalidHandle)
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
        self.transcript.append({"service": service, "answer": plain(answer)})
        return answer

    def listen(self, kind, topic: str) -> None:
        self.seen[topic] = []

        def keep(msg, topic=topic):
            with self._lock:
                self.seen[topic].append(msg)
                self._lock.notify_all()

        self.node.create_subscription(kind, topic, keep, 100)

    def wait(self, topic: str, ok) -> object:
        """The first message on `topic` for which ok(msg) holds (TIMEOUT s at most)."""
        with self._lock:
            found = self._lock.wait_for(lambda: [m for m in self.seen[topic] if ok(m)], TIMEOUT)
        if not found:
            raise SystemExit(f"{topic}: nothing as expected in {TIMEOUT} s")
        return found[-1]

    def publish(self, kind, topic: str, msg) -> None:
        publisher = self.node.create_publisher(kind, topic, 10)
        within(lambda: publisher.get_subscription_count() > 0, TIMEOUT)
        publisher.publish(msg)
        publisher.wait_for_all_acked(rclpy.duration.Duration(seconds=TIMEOUT))  # delivered
        self.transcript.append({"topic": topic, "published": len(msg.pedestrians)})


def seconds(t) -> float:
    return t.sec + t.nanosec * 1e-9


def stamp(header) -> float:
    return seconds(header.stamp)


def world(c: Client, config: dict) -> dict[str, object]:
    """Spawn Arena's kind of world in env 0; the answers that name things."""
    urdf = c.call(SpawnUrdf, "/mujoco/SpawnUrdf", SpawnUrdf.Request(
        env_id=0, name="env_0/Robots/burger", urdf_path=config["urdf"], robot_model="burger",
        tf_prefix="burger/", base_frame="base_footprint", odom_frame="odom",
        pose=pose(1.0, 0.0, yaw=0.5), cmd_vel_topic="/env_0/burger/cmd_vel",
        joint_states_topic="/env_0/burger/joint_states", odom_topic="/env_0/burger/odom",
        localization=True, sensors=[Sensor(name="lidar", type="laserscan",
                                           topic="/env_0/burger/scan", frame="base_scan",
                                           sensor="lds_lfcd_sensor")]))
    c.call(SpawnPrims, "/mujoco/SpawnPrims", SpawnPrims.Request(env_id=0, prims=[
        Prim(name="env_0/Obstacles/table", pose=pose(2.0, 1.5), scale=Scale(x=1.0, y=1.0, z=1.0),
             mesh_path=config["mesh"]),
        Prim(name="env_0/Obstacles/box", pose=pose(-1.5, 1.0, 0.25),
             scale=Scale(x=0.5, y=0.5, z=0.5), material=Material(path=config["mdl"],
                                                                 name="Red"))]))
    c.call(SpawnWalls, "/mujoco/SpawnWalls", SpawnWalls.Request(env_id=0, walls=[
        Wall(name="env_0/Walls/wall_0", start=Point(x=-3.0, y=-3.0, z=0.0),
             end=Point(x=3.0, y=-3.0, z=1.0), thickness=0.1),
        Wall(name="env_0/Walls/shelf", start=Point(x=-3.0, y=3.0, z=0.5),
             end=Point(x=3.0, y=3.0, z=1.5), thickness=0.2)]))
    c.call(SpawnPedestrians, "/mujoco/SpawnPedestrians", SpawnPedestrians.Request(pedestrians=[
        SpawnPedestrian(pedestrian=Pedestrian(name="env_0/Pedestrians/walker",
                                              pose=pose(0.0, -1.5)), model_ref="actor1")]))
    return {"path": urdf.path}


def main() -> None:
    with open(sys.argv[1]) as fh:
        config = json.load(fh)
    rclpy.init()
    c = Client()
    for kind, topic in ((Clock, "/clock"), (TFMessage, "/tf"), (Odometry, "/env_0/burger/odom"),
                        (LaserScan, "/env_0/burger/scan"),
                        (JointState, "/env_0/burger/mujoco/joint_states")):
        c.listen(kind, topic)
    c.call(Trigger, "/mujoco/PauseSimulation", Trigger.Request())
    first = world(c, config)
    c.call(SpawnLights, "/mujoco/SpawnLights", SpawnLights.Request(env_id=0, lights=[
        Light(name="sky", shape="dome", intensity=300.0),
        Light(name="lamp", shape="sphere", positions=[Point(x=0.0, y=0.0, z=2.5)],
              intensity=800.0, level=0.8)]))
    step = c.call(Step, "/mujoco/Step", Step.Request(n=15))
    seen = {
        "clock": seconds(c.wait("/clock", lambda m: seconds(m.clock) >= step.sim_time - 1e-9
                                ).clock),
        "tf": [[t.header.frame_id, t.child_frame_id, stamp(t.header)] for t in c.wait(
            "/tf", lambda m: stamp(m.transforms[0].header) >= step.sim_time - 1e-9).transforms],
    }
    odom = c.wait("/env_0/burger/odom", lambda m: True)
    seen["odom"] = [odom.header.frame_id, odom.child_frame_id,
                    [odom.pose.pose.position.x, odom.pose.pose.position.y]]
    scan = c.wait("/env_0/burger/scan", lambda m: True)
    seen["scan"] = [scan.header.frame_id, len(scan.ranges)]
    joints = c.wait("/env_0/burger/mujoco/joint_states", lambda m: True)
    seen["joint_states"] = [list(joints.name), len(joints.effort)]
    c.call(ViewportSetView, "/arena/viewport/set_view", ViewportSetView.Request(
        eye=Point(x=4.0, y=-4.0, z=3.0), target=Point(), fov=1.0))
    shot = c.call(ViewportCapture, "/arena/viewport/capture", ViewportCapture.Request(
        pose=pose(-5.0, 0.0, 3.0, pitch=0.5), fov=1.2))
    pixels = bytes(shot.image.data)
    seen["capture_levels"] = len(set(pixels[::997]))  # a blank frame has one
    c.call(EditPrims, "/mujoco/EditPrims", EditPrims.Request(env_id=0, pose=True, prims=[
        Prim(name="env_0/Obstacles/box", pose=pose(-1.5, -1.0, 0.25)),
        Prim(name=first["path"], pose=pose(0.5, 0.5, yaw=1.0))]))
    c.call(DeletePrims, "/mujoco/DeletePrims", DeletePrims.Request(
        env_id=0, names=["env_0/Walls/", "env_0/Obstacles/missing"]))
    c.call(ResetWorld, "/mujoco/ResetWorld", ResetWorld.Request(env_id=0))
    world(c, config)  # the same names again
    c.call(Step, "/mujoco/Step", Step.Request(n=10))
    c.publish(Pedestrians, "/mujoco/arena_peds", Pedestrians(pedestrians=[Pedestrian(
        name="env_0/Pedestrians/walker", pose=pose(0.5, -2.0, yaw=1.57),
        model_uri=config["actor"])]))
    print(json.dumps({"transcript": c.transcript, "seen": seen}), flush=True)
    rclpy.try_shutdown()
    os._exit(0)  # the executor thread may sit in a DDS wait: do not join it


if __name__ == "__main__":
    main()
