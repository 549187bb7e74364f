"""The Arena MuJoCo server's ROS interface on the bridge's node: its services under their own
names and types (arena_mujoco_msgs, arena_people_msgs, std_srvs), beside ours, and its
`/mujoco/arena_peds` stream. Runs in the ROS venv, loaded by node.py by path.

Each request becomes a command ("arena_<op>", arena_commands.py runs it) and each reply
fills Arena's answer: `ret` (one bool per item, or one), `results` (pedestrians), `path`
(SpawnUrdf), `success` and `sim_time` (Step). Pause, Unpause and Step share our commands.
A request of more than MAX_ITEMS items fails every item at once (and says why on stderr).
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable

import arena_mujoco_msgs.srv as mj
import arena_people_msgs.srv as people
from arena_people_msgs.msg import Pedestrians
from rclpy.qos import QoSProfile
from std_srvs.srv import Trigger

STREAM_DEPTH = 10  # the arena_peds subscription keeps as many messages as Arena's


def pose(p) -> list[float]:
    """A geometry_msgs/Pose as x, y, z, qw, qx, qy, qz."""
    o = p.orientation
    return [p.position.x, p.position.y, p.position.z, o.w, o.x, o.y, o.z]


def point(p) -> list[float]:
    return [p.x, p.y, p.z]


def material(m) -> dict:
    return {"path": m.path, "name": m.name}


def scale(s) -> list[float]:
    return [s.x, s.y, s.z]


def prim(p) -> dict:
    return {"name": p.name, "pose": pose(p.pose), "scale": scale(p.scale),
            "mesh_path": p.mesh_path, "material": material(p.material),
            "visuals": [{"name": v.name, "mesh_path": v.mesh_path, "pose": pose(v.pose),
                         "scale": scale(v.scale)} for v in p.visuals]}


def wall(w) -> dict:
    return {"name": w.name, "start": point(w.start), "end": point(w.end),
            "thickness": w.thickness, "material": material(w.material)}


def slab(s) -> dict:
    return {"name": s.name, "size": [s.x_length, s.y_length], "pos": point(s.pos),
            "material": material(s.material)}


def pedestrian(p) -> dict:
    """An arena_people_msgs/Pedestrian: name, pose, actor, ROS4HRI joint angles by name."""
    joints = dict(zip(p.joint_state.name, p.joint_state.position, strict=False))
    return {"name": p.name, "pose": pose(p.pose), "model_uri": p.model_uri,
            "joints": {k: float(v) for k, v in joints.items() if math.isfinite(v)}}


def light(item) -> dict:
    """A Light (Arena's light contract) as plain fields."""
    c = item.glow_color
    return {"name": item.name, "shape": item.shape, "x_length": item.x_length,
            "y_length": item.y_length, "radius": item.radius, "cone": item.cone,
            "positions": [point(p) for p in item.positions],
            "direction": [item.direction.x, item.direction.y, item.direction.z],
            "intensity": item.intensity, "cct_k": item.cct_k,
            "cast_shadows": item.cast_shadows, "level": item.level,
            "alive": [bool(a) for a in item.alive], "intrinsic": item.intrinsic,
            "glow_prim": item.glow_prim, "glow_color": [c.r, c.g, c.b, c.a]}


def light_state(item) -> dict:
    """A LightState (SetLights): level and alive mask, or a move."""
    return {"name": item.name, "level": item.level, "alive": [bool(a) for a in item.alive],
            "move": item.move, "position": point(item.position), "yaw": item.yaw}


def urdf(q) -> dict:
    return {"name": q.name, "urdf_path": q.urdf_path, "robot_model": q.robot_model,
            "tf_prefix": q.tf_prefix, "base_frame": q.base_frame, "odom_frame": q.odom_frame,
            "pose": pose(q.pose), "cmd_vel_topic": q.cmd_vel_topic,
            "joint_states_topic": q.joint_states_topic, "odom_topic": q.odom_topic,
            "localization": q.localization,
            "sensors": [{"name": s.name, "type": s.type, "topic": s.topic, "frame": s.frame,
                         "sensor": s.sensor} for s in q.sensors]}


def with_env(q, fields: dict) -> dict:
    return {"env": int(q.env_id), **fields}


# service name: (type, command op, the request's items (None: one), command fields)
SERVICES: dict[str, tuple[type, str, Callable | None, Callable]] = {
    "ResetWorld": (mj.ResetWorld, "arena_reset_world", None, lambda q: with_env(q, {})),
    "DeletePrims": (mj.DeletePrims, "arena_delete_prims", lambda q: q.names,
                    lambda q: with_env(q, {"names": list(q.names)})),
    "EditPrims": (mj.EditPrims, "arena_edit_prims", lambda q: q.prims,
                  lambda q: with_env(q, {"prims": [prim(p) for p in q.prims],
                                         "pose": q.pose, "scale": q.scale})),
    "SpawnPrims": (mj.SpawnPrims, "arena_spawn_prims", lambda q: q.prims,
                   lambda q: with_env(q, {"prims": [prim(p) for p in q.prims]})),
    "SpawnWalls": (mj.SpawnWalls, "arena_spawn_walls", lambda q: q.walls,
                   lambda q: with_env(q, {"walls": [wall(w) for w in q.walls]})),
    "SpawnFloors": (mj.SpawnFloors, "arena_spawn_floors", lambda q: q.floors,
                    lambda q: with_env(q, {"slabs": [slab(s) for s in q.floors]})),
    "SpawnCeilings": (mj.SpawnCeilings, "arena_spawn_ceilings", lambda q: q.ceilings,
                      lambda q: with_env(q, {"slabs": [slab(s) for s in q.ceilings]})),
    "SpawnUrdf": (mj.SpawnUrdf, "arena_spawn_urdf", None, lambda q: with_env(q, urdf(q))),
    "SpawnLights": (mj.SpawnLights, "arena_spawn_lights", lambda q: q.lights,
                    lambda q: with_env(q, {"lights": [light(x) for x in q.lights]})),
    "SetLights": (mj.SetLights, "arena_set_lights", lambda q: q.lights,
                  lambda q: with_env(q, {"lights": [light_state(x) for x in q.lights]})),
    "DeleteLights": (mj.DeleteLights, "arena_delete_lights", lambda q: q.names,
                     lambda q: with_env(q, {"names": list(q.names)})),
    "SpawnPedestrians": (people.SpawnPedestrians, "arena_spawn_pedestrians",
                         lambda q: q.pedestrians, lambda q: {"pedestrians": [
                             {**pedestrian(s.pedestrian), "model_ref": s.model_ref}
                             for s in q.pedestrians]}),
    "MovePedestrians": (people.MovePedestrians, "arena_move_pedestrians",
                        lambda q: q.pedestrians,
                        lambda q: {"pedestrians": [pedestrian(p) for p in q.pedestrians]}),
    "UpdatePedestrians": (people.UpdatePedestrians, "arena_update_pedestrians",
                          lambda q: q.pedestrians,
                          lambda q: {"pedestrians": [pedestrian(p) for p in q.pedestrians]}),
    "DeletePedestrians": (people.DeletePedestrians, "arena_delete_pedestrians",
                          lambda q: q.names, lambda q: {"names": list(q.names)}),
}


def answer(response, reply: dict, n: int):
    """Fill Arena's answer from a reply (or from a refusal: every item failed)."""
    if hasattr(response, "results"):
        failed = response.FAILED_CREATE if hasattr(response, "FAILED_CREATE") else \
            response.NOT_FOUND
        response.results = list(reply.get("results", [failed] * n))
    elif hasattr(response, "path"):
        response.path = reply.get("path", "")
    elif response.get_fields_and_field_types()["ret"].startswith("sequence"):
        response.ret = [bool(v) for v in reply.get("ret", [False] * n)]
    else:
        response.ret = bool(reply.get("ret", False))
    return response


class ArenaServices:
    """Arena's services and stream on `bridge`'s node (a node.BridgeNode)."""

    def __init__(self, bridge, qos: QoSProfile, too_many: Callable) -> None:
        self.bridge, self.too_many = bridge, too_many
        node, group = bridge.node, bridge.group
        for name, op in (("PauseSimulation", "pause"), ("UnpauseSimulation", "unpause")):
            node.create_service(Trigger, f"/mujoco/{name}", functools.partial(self._trigger, op),
                                qos_profile=qos, callback_group=group)
        node.create_service(mj.Step, "/mujoco/Step", self._step, qos_profile=qos,
                            callback_group=group)
        for name, (kind, op, items, fields) in SERVICES.items():
            node.create_service(kind, f"/mujoco/{name}",
                                functools.partial(self._call, name, op, items, fields),
                                qos_profile=qos, callback_group=group)
        node.create_subscription(Pedestrians, "/mujoco/arena_peds", self._peds,
                                 QoSProfile(depth=STREAM_DEPTH), callback_group=group)

    async def _trigger(self, op: str, request, response):
        reply = await self.bridge.request(op, {})
        response.success = reply["success"]  # Arena's server says nothing more
        return response

    async def _step(self, request, response):
        reply = await self.bridge.request("step", {"steps": int(request.n)})
        response.success = reply["success"]
        response.sim_time = float(reply.get("clock", 0.0))
        if not reply["success"]:
            print(f"bridge: Step: {reply['message']}", file=sys.stderr, flush=True)
        return response

    async def _call(self, name: str, op: str, items, fields, request, response):
        n = len(items(request)) if items is not None else 0
        refused = self.too_many(request)
        if refused:
            print(f"bridge: {name}: refused: {refused}", file=sys.stderr, flush=True)
            return answer(response, {}, n)
        if not self.bridge.serving:
            return answer(response, {}, n)
        reply = await self.bridge.request(op, fields(request))
        return answer(response, reply, n)

    def _peds(self, msg) -> None:
        """The task generator's stream of pedestrian poses and joints (no answer)."""
        if self.bridge.serving and not self.too_many(msg):
            self.bridge.link.send({"op": "arena_peds",
                                   "pedestrians": [pedestrian(p) for p in msg.pedestrians]})
