"""The `/arena/viewport` contract (viewport_control_msgs) on the bridge's node, as every Arena
simulator backend serves it: set_view, set_reference_frame, set_projection and capture
services, the cmd_view keyframe stream in, camera_pose (PoseStamped in `map`) out at 10 Hz
of wall time while someone subscribes. Runs in the ROS venv, loaded by node.py by path; the
simulator side is viewport_requests.py.

camera_pose is paced by a plain thread, not an executor timer: every wake-up of rclpy's
executor walks all of the node's services and subscriptions (milliseconds of Python), so
the node wakes only for requests and messages. The thread asks the simulator for the pose
({"op": "viewport_pose"}), whose answer ({"op": "camera_pose"}) the node's reader publishes.
"""

from __future__ import annotations

import os
import threading
import time

from geometry_msgs.msg import PoseStamped
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image
from viewport_control_msgs.msg import ViewportView
from viewport_control_msgs.srv import (
    ViewportCapture,
    ViewportSetProjection,
    ViewportSetReferenceFrame,
    ViewportSetView,
)

NAMESPACE = "/arena/viewport"
FRAME = "map"
POSE_PERIOD = 0.1  # s of wall time
STREAM_QOS = QoSProfile(depth=64, history=HistoryPolicy.KEEP_LAST,
                        reliability=ReliabilityPolicy.BEST_EFFORT,
                        durability=DurabilityPolicy.VOLATILE)


def pose7(p) -> list[float]:
    o = p.orientation
    return [p.position.x, p.position.y, p.position.z, o.w, o.x, o.y, o.z]


def seconds(t) -> float:
    return t.sec + t.nanosec * 1e-9


class ViewportServices:
    """The viewport endpoints on `bridge`'s node (a node.BridgeNode)."""

    def __init__(self, bridge, stamp, qos: QoSProfile) -> None:
        self.bridge, self.stamp = bridge, stamp
        node, group = bridge.node, bridge.group
        for kind, name, callback in (
                (ViewportSetView, "set_view", self._set_view),
                (ViewportSetReferenceFrame, "set_reference_frame", self._set_reference),
                (ViewportSetProjection, "set_projection", self._set_projection),
                (ViewportCapture, "capture", self._capture)):
            node.create_service(kind, f"{NAMESPACE}/{name}", callback, qos_profile=qos,
                                callback_group=group)  # the bridge's depth: no burst is cut
        node.create_subscription(ViewportView, f"{NAMESPACE}/cmd_view", self._cmd_view,
                                 STREAM_QOS, callback_group=group)
        self.pose_pub = node.create_publisher(PoseStamped, f"{NAMESPACE}/camera_pose", 10)
        threading.Thread(target=self._pace, name="viewport-pose", daemon=True).start()

    async def _ask(self, op: str, fields: dict, response):
        reply = await self.bridge.request(op, fields)
        response.success, response.message = reply["success"], reply["message"]
        return reply

    async def _set_view(self, request, response):
        await self._ask("viewport_set_view", {
            "eye": [request.eye.x, request.eye.y, request.eye.z],
            "target": [request.target.x, request.target.y, request.target.z],
            "fov": request.fov}, response)
        return response

    async def _set_reference(self, request, response):
        await self._ask("viewport_set_reference", {
            "entity": request.entity, "pose": pose7(request.pose),
            "has_pose": request.has_pose, "mode": int(request.mode)}, response)
        return response

    async def _set_projection(self, request, response):
        await self._ask("viewport_set_projection", {"projection": request.projection},
                        response)
        return response

    async def _capture(self, request, response):
        reply = await self._ask("viewport_capture", {
            "pose": pose7(request.pose), "world_orientation": request.world_orientation,
            "fov": request.fov, "min_sim_time": seconds(request.min_sim_time)}, response)
        frame = reply.get("image")
        if frame is not None:
            try:
                with open(frame["path"], "rb") as fh:
                    data = fh.read()
            finally:
                os.unlink(frame["path"])
            image = Image()
            image.header.stamp = self.stamp(frame["stamp"])
            image.header.frame_id = FRAME
            image.height, image.width = frame["height"], frame["width"]
            image.encoding, image.is_bigendian, image.step = "rgb8", 0, 3 * frame["width"]
            image.data = data
            response.image = image
        return response

    def _cmd_view(self, msg) -> None:
        if self.bridge.serving:
            self.bridge.link.send({"op": "viewport_keyframe", "time": seconds(msg.target_time),
                                   "pose": pose7(msg.pose),
                                   "world_orientation": msg.world_orientation, "fov": msg.fov})

    def _pace(self) -> None:
        """Ask for the camera's pose each POSE_PERIOD while someone subscribes."""
        while True:
            time.sleep(POSE_PERIOD)
            try:
                if self.bridge.serving and self.pose_pub.get_subscription_count():
                    self.bridge.link.send({"op": "viewport_pose"})
            except Exception:  # noqa: BLE001 - the node is shutting down
                return

    def publish_pose(self, pose: list[float]) -> None:
        """The simulator's answer (the node's reader thread): publish it."""
        x, y, z, qw, qx, qy, qz = pose
        msg = PoseStamped()
        msg.header.stamp = self.bridge.node.get_clock().now().to_msg()
        msg.header.frame_id = FRAME
        p, o = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z, o.w, o.x, o.y, o.z = x, y, z, qw, qx, qy, qz
        self.pose_pub.publish(msg)
