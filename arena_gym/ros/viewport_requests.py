"""The bridge's `/arena/viewport` requests (node: viewport_services.py) on its ViewportControl.

    requests = ViewportRequests(control, folder)
    reply = requests.run({"op": "viewport_capture", "id": 3, ...})   # None: deferred
    for message, reply in requests.due(): ...    # after each tick: captures whose time came

A capture with `min_sim_time` ahead of the clock waits (other commands go on) until a tick
reaches it, or fails after CAPTURE_TIMEOUT seconds of wall time, as Arena's server does.
Its frame goes to the node as a raw rgb8 file in the bridge's shared-memory folder (a
1920 x 1080 frame is 6 MB: not for the JSON channel); the node reads and removes it.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

from arena_gym.ros.viewport_control import ViewportControl, checked, lens

CAPTURE_TIMEOUT = 15.0  # s of wall time a capture waits for its min_sim_time
Reply = dict


def _pose(values: list[float]) -> tuple:
    """x, y, z, qw, qx, qy, qz as (position, quaternion)."""
    return tuple(values[:3]), tuple(values[3:7])


class ViewportRequests:
    """Answers viewport commands; keeps the captures that wait for sim time."""

    def __init__(self, control: ViewportControl, folder: Path) -> None:
        self.control, self.folder = control, folder
        self.waiting: list[tuple[float, float, dict]] = []  # (min time, deadline, message)
        self._files = itertools.count()

    def run(self, message: dict) -> Reply | None:
        op = message["op"].removeprefix("viewport_")
        control = self.control
        try:
            if op == "set_view":
                control.set_view(message["eye"], message["target"], message["fov"])
                return {"success": True, "message": "ok"}
            if op == "set_reference":
                pose = _pose(message["pose"]) if message["has_pose"] else None
                text = control.set_reference(message["entity"], pose, message["mode"])
                return {"success": True, "message": text}
            if op == "set_projection":
                control.set_projection(message["projection"])
                return {"success": True, "message": "ok"}
            if op == "keyframe":
                control.push_message(message)
                return {"success": True, "message": ""}
            if op == "pose":
                position, q = control.world()
                return {"success": True, "message": "", "pose": [*position, *q]}
            if op == "capture":
                checked("pose", _pose(message["pose"]))  # a bad request is told at once
                lens("fov", message["fov"])
                if message["min_sim_time"] > control.sim.clock + 1e-6:
                    self.waiting.append((message["min_sim_time"],
                                         time.monotonic() + CAPTURE_TIMEOUT, message))
                    return None
                return self._capture(message)
        except ValueError as exc:
            return {"success": False, "message": str(exc)}
        return {"success": False, "message": f"unknown viewport command {op!r}"}

    def due(self) -> list[tuple[dict, Reply]]:
        """The waiting captures whose time came (rendered now) or whose wait ran out."""
        if not self.waiting:
            return []
        clock, now, out, still = self.control.sim.clock, time.monotonic(), [], []
        for min_time, deadline, message in self.waiting:
            if clock + 1e-6 >= min_time:
                out.append((message, self._capture(message)))
            elif now > deadline:
                out.append((message, {"success": False, "message":
                                      "capture timed out, min_sim_time not reached"}))
            else:
                still.append((min_time, deadline, message))
        self.waiting = still
        return out

    def _capture(self, message: dict) -> Reply:
        try:
            frame = self.control.capture(_pose(message["pose"]), message["world_orientation"],
                                         message["fov"])
        except (ValueError, RuntimeError) as exc:
            return {"success": False, "message": f"no frame: {exc}"}
        path = self.folder / f"capture_{next(self._files)}.rgb"
        frame.tofile(path)
        return {"success": True, "message": "ok",
                "image": {"path": str(path), "height": int(frame.shape[0]),
                          "width": int(frame.shape[1]), "stamp": self.control.sim.clock}}
