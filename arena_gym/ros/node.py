"""The bridge's rclpy node: runs in the ROS venv, started by arena_gym.ros.server.

    <ros venv>/bin/python node.py --fd FD --meta META.json

It imports only rclpy, the message packages, `wire.py` and `messages.py` (beside it, by
path): never arena_gym. Per frame (one simulator tick) it publishes the messages that
messages.py serializes, in its order (`/tf` first, `/clock` last: the clock never runs
ahead of the transforms) of the topics with subscribers, as raw CDR bytes: building rclpy
message objects field by field
cost more than the physics. Service requests, `cmd_vel` and the joint commands become
commands on the link; the simulator process answers them. The node also tells it which
envs' camera topics have subscribers, per robot name ("watchers"): images render only there.
Robot names come and go ("robot", "unbridge" on the link, between frames): the node creates,
keeps or destroys their publishers and subscriptions to match, on the executor's thread (rclpy
builds its wait set there from the node's entities: one destroyed by another thread meanwhile
raised InvalidHandle in it and ended every service), while the reader thread waits.

Service callbacks are coroutines: each awaits its reply while the executor serves the
others (a long Step never holds the rest). A request of more than MAX_ITEMS items is
answered at once. The node ignores SIGINT (the simulator process stops it), and it warns
once when another node serves the same services on this ROS domain.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import signal
import socket
import sys
import threading
import time

import arena_gym_interfaces.srv as srv
import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future
from ros_gz_interfaces.msg import Contacts
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image, Imu, JointState, LaserScan, PointCloud2
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arena_services import ArenaServices  # noqa: E402
from messages import (  # noqa: E402
    KIND_TOPICS,
    clock_message,
    frame_messages,
    nanos,
    static_messages,
    topics_of,
)
from viewport_services import ViewportServices  # noqa: E402
from wire import MAX_ITEMS, Frames, Link  # noqa: E402

DEPTH = 1000  # bursts of requests from several envs are not dropped
TYPES = {"sensor_msgs/msg/LaserScan": LaserScan, "sensor_msgs/msg/PointCloud2": PointCloud2,
         "sensor_msgs/msg/Imu": Imu, "sensor_msgs/msg/Image": Image,
         "sensor_msgs/msg/CameraInfo": CameraInfo, "ros_gz_interfaces/msg/Contacts": Contacts}
JOINT_MODES = ("velocity", "position")
WATCH_PERIOD = 0.05  # s of wall time between looks at the topics' subscriber counts
RIVALS_PERIOD = 1.0  # s between looks for another node serving our services
ITEMS = ("prims", "edits", "walls", "slabs", "pedestrians", "names", "lights", "floors",
         "ceilings")  # the list fields a request may hold (MAX_ITEMS each)


def slabs(request) -> dict:
    """The Slab messages of a SpawnFloors or SpawnCeilings request."""
    return {"slabs": [{"name": s.name, "center": [s.x, s.y, s.z], "size": [s.size_x, s.size_y]}
                      for s in request.slabs]}


def peds(request) -> dict:
    """The fields of each Pedestrian message of a request (commands.py checks them)."""
    return {"pedestrians": [{"name": p.name, "x": p.x, "y": p.y, "yaw": p.yaw,
                             "actor": p.actor, "joint_names": list(p.joint_names),
                             "joint_angles": list(p.joint_angles)}
                            for p in request.pedestrians]}


def names(request) -> dict:
    return {"names": list(request.names)}


def too_many(request) -> str:
    """Why a request is refused before it is read ("" when it is not): a list field of more
    than MAX_ITEMS items."""
    for field in ITEMS:
        n = len(getattr(request, field, ()))
        if n > MAX_ITEMS:
            return (f"expected at most {MAX_ITEMS} {field} per request (split it into "
                    f"several), got {n}")
    return ""


def with_env(request, fields: dict) -> dict:
    """The command of a request: its fields, and its env_id if it has one."""
    return {"env": request.env_id, **fields} if hasattr(request, "env_id") else fields


def stamp(t: float) -> Time:
    sec = int(t // 1)
    return Time(sec=sec, nanosec=min(int(round((t - sec) * 1e9)), 999_999_999))


class BridgeNode:
    """`meta`: {"serving": bool, "members": [the description of each robot name]}."""

    def __init__(self, node: rclpy.node.Node, link: Link, meta: dict, executor) -> None:
        self.node, self.link, self.serving = node, link, meta["serving"]
        self.executor = executor
        self._ids = itertools.count(1)
        self._pending: dict[int, Future] = {}  # request id -> its reply, once it comes
        # one reentrant group: a request awaiting its reply holds no other callback (in the
        # default, mutually exclusive group the executor would not even wait on `_wake`)
        self.group = ReentrantCallbackGroup()
        self._wake = node.create_guard_condition(lambda: None, self.group)  # a reply came
        qos = QoSProfile(depth=DEPTH)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.publishers = {"/clock": node.create_publisher(Clock, "/clock", qos),
                           "/tf": node.create_publisher(TFMessage, "/tf", qos)}
        self.groups: dict[str, tuple[dict, Frames]] = {}  # per robot name: (meta, frames)
        self._owned: dict[str, set[str]] = {}  # per robot name: its topics in publishers
        self._subs: dict[str, dict[str, list]] = {}  # per robot name: ns -> subscriptions
        # per (robot name, camera): the envs watching it
        self._watched: dict[tuple[str, str], list[int]] = {}
        # the reader thread changes topics while the executor's watch() counts subscribers
        self._lock = threading.Lock()
        self.wanted: frozenset[str] = frozenset()  # the topics with subscribers (watch)
        self._next_watch = 0.0
        self.static = node.create_publisher(TFMessage, "/tf_static", latched)
        for member in meta["members"]:
            self.bridge(member, latch=False)
        self._latch()
        self._services(qos)

    def _wanted(self, meta: dict) -> dict[str, type]:
        """The topics a robot name publishes: {topic: message class}."""
        types: dict[str, type] = {"odom": Odometry, "joint_states": JointState}
        for sensor in meta["sensors"]:
            types |= {sensor["prefix"] + name: TYPES[kind]
                      for name, kind in KIND_TOPICS[sensor["kind"]].items()}
        return {topic: kind for r in meta["robots"] for name, kind in types.items()
                if (topic := topics_of(r)[name])}

    def _commands(self, robot: str, r: dict) -> list:
        """The cmd_vel and joint command subscriptions of one robot (one namespace; the
        topics its spawn request named, if any). A robot of an Arena session (`arena`) is
        driven by its joint commands alone, entry by entry, as Arena's server drives it."""
        node, qos, ns = self.node, QoSProfile(depth=DEPTH), "/" + r["ns"]
        target = {"env": r["env"], "robot": robot}
        subs = [] if r.get("arena") else [
            node.create_subscription(Twist, r.get("cmd_vel") or f"{ns}/cmd_vel",
                                     lambda msg, t=target: self._cmd_vel(t, msg), qos,
                                     callback_group=self.group)]
        commands = r.get("commands") or f"{ns}/mujoco"
        op = "arena_joint_commands" if r.get("arena") else "joint_commands"
        for mode in JOINT_MODES:
            subs.append(node.create_subscription(
                JointState, f"{commands}/joint_commands_{mode}",
                lambda msg, t=target, mode=mode: self._joints(t, mode, msg, op), qos,
                callback_group=self.group))
        return subs

    def bridge(self, meta: dict, latch: bool = True) -> None:
        """A robot name joins, or is described again (spawned into or deleted from some
        envs; reader thread, before the frames that hold it): its frames, and its topics
        made to match (kept where they stay, destroyed where its robots left), then
        /tf_static again with every robot's sensor mounts."""
        name, qos = meta["robot"], QoSProfile(depth=DEPTH)
        frames = Frames(meta["shm"], {k: tuple(v) for k, v in meta["layout"].items()},
                        create=False)
        wanted = self._wanted(meta)
        # a robot's command subscriptions, by where they listen
        spaces = {(r["ns"], r.get("cmd_vel"), r.get("commands")): r for r in meta["robots"]}
        with self._lock:
            owned = self._owned.get(name, set())
            for topic in owned - wanted.keys():
                self.node.destroy_publisher(self.publishers.pop(topic))
            for topic, kind in wanted.items():
                if topic not in owned:
                    self.publishers[topic] = self.node.create_publisher(kind, topic, qos)
            self._owned[name] = set(wanted)
            subs = self._subs.setdefault(name, {})
            for ns in [ns for ns in subs if ns not in spaces]:
                for sub in subs.pop(ns):
                    self.node.destroy_subscription(sub)
            for ns, r in spaces.items():
                if ns not in subs:
                    subs[ns] = self._commands(name, r)
            old = self.groups.get(name)
            self.groups[name] = (meta, frames)
            for key in [k for k in self._watched if k[0] == name]:  # described again:
                del self._watched[key]  # say who watches its cameras
            self._next_watch = 0.0  # its topics' subscribers: counted at the next frame
        if old is not None:
            old[1].close()
        if latch:
            self._latch()

    def unbridge(self, name: str) -> None:
        """A robot name left (deleted from every env): its topics and subscriptions are
        destroyed, its frames closed, /tf_static sent again without its mounts."""
        with self._lock:
            for topic in self._owned.pop(name, set()):
                self.node.destroy_publisher(self.publishers.pop(topic))
            for subs in self._subs.pop(name, {}).values():
                for sub in subs:
                    self.node.destroy_subscription(sub)
            _, frames = self.groups.pop(name)
            for key in [k for k in self._watched if k[0] == name]:
                del self._watched[key]
        frames.close()
        self._latch()

    def _latch(self) -> None:
        for _, _, data, _ in static_messages([m for m, _ in self.groups.values()]):
            self.static.publish(data)

    # ------------------------------------------------------------ services
    def _services(self, qos: QoSProfile) -> None:
        node = self.node
        node.create_service(Trigger, "/mujoco/pause_simulation",
                            functools.partial(self._trigger, "pause"), qos_profile=qos,
                            callback_group=self.group)
        node.create_service(Trigger, "/mujoco/unpause_simulation",
                            functools.partial(self._trigger, "unpause"), qos_profile=qos,
                            callback_group=self.group)
        node.create_service(Trigger, "/mujoco/reset",  # mujoco_ros's reset: initial state
                            functools.partial(self._trigger, "reset"), qos_profile=qos,
                            callback_group=self.group)
        # each request's fields as a command; the env_id of those that have one is added
        plain = {
            "step": (srv.Step, lambda q: {"steps": q.steps}),
            "reset_world": (srv.ResetWorld, lambda q: {}),
            "reset_to_keyframe": (srv.ResetToKeyframe, lambda q: {"keyframe": q.keyframe,
                                                                  "index": q.index}),
            "spawn_prims": (srv.SpawnPrims, lambda q: {"prims": [
                {"name": p.name, "pose": [p.x, p.y, p.z, p.yaw],
                 "scale": [p.scale.x, p.scale.y, p.scale.z], "movable": p.movable}
                for p in q.prims]}),
            "edit_prims": (srv.EditPrims, lambda q: {"edits": [
                {"name": e.name, "pose": [e.x, e.y, e.z, e.yaw] if e.set_pose else None,
                 "scale": [e.scale.x, e.scale.y, e.scale.z] if e.set_scale else None}
                for e in q.edits]}),
            "spawn_walls": (srv.SpawnWalls, lambda q: {"walls": [
                {"name": w.name, "start": [w.x0, w.y0], "end": [w.x1, w.y1],
                 "height": w.height, "thickness": w.thickness} for w in q.walls]}),
            "spawn_floors": (srv.SpawnFloors, slabs),
            "spawn_ceilings": (srv.SpawnCeilings, slabs),
            "delete_prims": (srv.DeletePrims, names),
            "spawn_urdf": (srv.SpawnUrdf, lambda q: {"name": q.name, "urdf": q.urdf_path,
                                                     "pose": [q.x, q.y, q.yaw]}),
            "spawn_pedestrians": (srv.SpawnPedestrians, peds),
            "move_pedestrians": (srv.MovePedestrians, peds),
            "update_pedestrians": (srv.UpdatePedestrians, peds),
            "delete_pedestrians": (srv.DeletePedestrians, names),
        }
        for op, (kind, fields) in plain.items():
            node.create_service(kind, f"/mujoco/{op}",
                                functools.partial(self._call, op, fields), qos_profile=qos,
                                callback_group=self.group)
        ArenaServices(self, qos, too_many)  # the Arena server's, beside ours
        self.viewport = ViewportServices(self, stamp, qos)  # /arena/viewport

    async def request(self, op: str, fields: dict) -> dict:
        """Send a command and await the simulator's reply (the reader thread sets it)."""
        if not self.serving:
            return {"success": False, "message": f"{op}: refused, this bridge is a sidecar "
                    "of an env that drives the simulator"}
        self.watch()  # a Step renders for whoever subscribed just before it
        k = next(self._ids)
        future = Future(executor=self.executor)
        self._pending[k] = future
        self.link.send({"op": op, "id": k, **fields})
        return await future

    async def _trigger(self, op: str, request, response: Trigger.Response) -> Trigger.Response:
        reply = await self.request(op, {})
        response.success, response.message = reply["success"], reply["message"]
        return response

    async def _call(self, op: str, fields, request, response):
        refused = too_many(request)
        reply = ({"success": False, "message": f"{op}: {refused}"} if refused else
                 await self.request(op, with_env(request, fields(request))))
        response.success, response.message = reply["success"], reply["message"]
        if "clock" in reply and hasattr(response, "clock"):
            response.clock = stamp(reply["clock"])
        for name in ("names", "deleted"):
            if name in reply and hasattr(response, name):
                setattr(response, name, reply[name])
        return response

    def _cmd_vel(self, target: dict, msg: Twist) -> None:
        if not self.serving:
            return  # a sidecar: the env's policy drives
        self.link.send({"op": "cmd_vel", **target,
                        "twist": [msg.linear.x, msg.linear.y, msg.angular.z]})

    def _joints(self, target: dict, mode: str, msg: JointState, op: str) -> None:
        if not self.serving:
            return  # a sidecar: the env's policy drives
        values = msg.velocity if mode == "velocity" else msg.position
        self.link.send({"op": op, **target, "mode": mode,
                        "names": list(msg.name), "values": [float(v) for v in values]})

    def watch(self) -> None:
        """Look at the subscriber counts: only topics with subscribers are encoded and
        published, and the simulator side hears which envs' camera topics have any, per
        robot name ("watchers", on change): images render only there. Called before each
        service request (so a Step serves whoever subscribed just before it) and by the
        frames, at most each WATCH_PERIOD: no timer, for every wake-up of rclpy's executor
        costs milliseconds of Python with this many subscriptions and services."""
        with self._lock:
            self._next_watch = time.monotonic() + WATCH_PERIOD
            self.wanted = frozenset(topic for topic, publisher in self.publishers.items()
                                    if publisher.get_subscription_count())
            for name, (meta, _) in self.groups.items():
                for camera in (s for s in meta["sensors"] if s["kind"] == "camera"):
                    keys = [camera["prefix"] + topic for topic in KIND_TOPICS["camera"]]
                    envs = [r["env"] for r in meta["robots"]
                            if any(topics_of(r)[key] in self.wanted for key in keys)]
                    if envs != self._watched.get((name, camera["sensor"])):
                        self._watched[(name, camera["sensor"])] = envs
                        self.link.send({"op": "watchers", "robot": name,
                                        "sensor": camera["sensor"], "envs": envs})

    def in_executor(self, change, *args) -> None:
        """Run `change(*args)` as a task of the executor, on its thread, and wait until it
        ran (re-raising what it raised): the node's publishers and subscriptions are made
        and destroyed only where rclpy's executor gathers them, never while it does."""
        done, failed = threading.Event(), []

        def run() -> None:
            try:
                change(*args)
            except Exception as exc:  # noqa: BLE001 - raised in the reader thread below
                failed.append(exc)
            finally:
                done.set()

        self.executor.create_task(run)
        done.wait()
        if failed:
            raise failed[0]

    # ------------------------------------------------------------ reader thread
    def read(self) -> None:
        """Serve the link until the simulator closes it or says quit."""
        for message in self.link.messages():
            op = message.get("op")
            if op == "frame":
                self.publish(message["slot"], message.get("clock"))
                self.link.send({"op": "ack", "slot": message["slot"]})
            elif op == "robot":
                self.in_executor(self.bridge, message["meta"])
            elif op == "unbridge":
                self.in_executor(self.unbridge, message["robot"])
            elif op == "camera_pose":
                self.viewport.publish_pose(message["pose"])
            elif op == "reply":
                self._pending.pop(message["id"]).set_result(message)
                self._wake.trigger()  # the executor resumes the request awaiting it
            elif op == "quit":
                break

    def publish(self, slot: int, clock: float | None = None) -> None:
        """One frame (slot `slot` of every robot name's frames): the serialized messages of
        messages.py, of the topics with subscribers, published as they are. With no robot
        (a served model's world, an Arena session before its first SpawnUrdf) the frame's
        `clock` alone: /clock (None: paused, nothing)."""
        if time.monotonic() >= self._next_watch:
            self.watch()
        wanted = self.wanted
        if not self.groups:
            if clock is not None and "/clock" in wanted:
                self.publishers["/clock"].publish(clock_message(nanos(clock)))
            return
        if not wanted:
            return
        for topic, _, data, _ in frame_messages([(m, frames.slots[slot])
                                                 for m, frames in self.groups.values()],
                                                wanted):
            self.publishers[topic].publish(data)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--meta", required=True)
    args = parser.parse_args()
    with open(args.meta) as fh:
        meta = json.load(fh)
    link = Link(socket.socket(fileno=args.fd))
    # Ctrl-C reaches the whole process group: the simulator process stops this node itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(meta.get("node", "arena_gym_bridge"))
    executor = SingleThreadedExecutor()
    bridge = BridgeNode(node, link, meta, executor)
    executor.add_node(node)
    threading.Thread(target=spin, args=(executor,), name="bridge-executor", daemon=True).start()
    # another server of our services (an Arena session: another of Arena's, run_mujoco too)
    rival = "/mujoco/Step" if meta.get("node") == "mujoco" else "/mujoco/step"
    threading.Thread(target=rivals, args=(node, rival), name="bridge-rivals",
                     daemon=True).start()
    link.send({"op": "ready"})
    try:
        bridge.read()  # until the simulator process ends (EOF) or says quit
    except KeyboardInterrupt:
        pass
    rclpy.try_shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # the executor thread may sit in a DDS wait: do not join it


def rivals(node: rclpy.node.Node, service: str = "/mujoco/step") -> None:
    """Warn once when another node serves our services on this domain: a client's calls
    would reach either bridge."""
    while rclpy.ok():
        try:
            count = node.count_services(service)
        except Exception:  # noqa: BLE001 - the graph during shutdown: nothing to warn about
            return
        if count > 1:
            domain = os.environ.get("ROS_DOMAIN_ID", "0")
            print(f"bridge: warning: {count} nodes serve {service} on ROS_DOMAIN_ID {domain} "
                  "(this bridge and another): a client's requests reach either; give each "
                  "bridge its own ROS_DOMAIN_ID", file=sys.stderr, flush=True)
            return
        time.sleep(RIVALS_PERIOD)


def spin(executor: SingleThreadedExecutor) -> None:
    """Spin until rclpy shuts down; a callback's exception is told on stderr and the
    executor spins on (no request ends the services)."""
    while True:
        try:
            executor.spin()
            return
        except ExternalShutdownException:
            return
        except Exception as exc:  # noqa: BLE001 - told, and served on
            if not rclpy.ok():
                return
            print(f"bridge: executor: {type(exc).__name__}: {exc} (serving on)",
                  file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
