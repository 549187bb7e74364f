"""The simulator side of the bridge: builds the envs, starts the rclpy node in the ROS venv,
and serves it.

    bridge = Bridge.start(sim, suite, robot="robot")      # the node is up when this returns
    bridge.serve(lockstep=True)                           # until the node or a signal ends it

One thread, one loop: it drains the node's commands (service calls, cmd_vel) and, while not
paused, advances one tick (10 physics steps) each 1/50 s of wall time divided by the
real-time factor. Paused (PauseSimulation while free-running), it keeps publishing /tf and
joint states at the frozen clock each 1/50 s of wall time (late subscribers such as RViz
still see the robots); in lockstep only Step publishes. After every tick the frame writer
copies the sensor readings into a shared-memory slot and tells the node, which publishes
them; a slot is written again only after the node has acknowledged it. The Step service
steps regardless of pause.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

from arena_gym.ros import camera
from arena_gym.ros.commands import Commands
from arena_gym.ros.roster import Roster
from arena_gym.ros.setup_venv import RosSetupError, default_venv, venv_python
from arena_gym.ros.wire import SLOTS, Frames, Link
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.simulator import Simulator

NODE = Path(__file__).resolve().parent / "node.py"
READY_TIMEOUT = 120.0  # s: the node's first start imports rclpy (the wheels re-exec Python)
# commands that may spawn or delete a robot (reset_world deletes all but the bridged one)
SCENE_OPS = frozenset({"spawn_urdf", "delete_prims", "reset_world"})


def frames_file(meta: dict, path: Path) -> Frames:
    """A robot name's frames file (its layout), named in its description for the node."""
    meta["shm"] = str(path)
    return Frames(path, meta["layout"], create=True)


class Bridge:
    def __init__(self, sim: Simulator, suite: SensorSuite, robot: str, link: Link,
                 roster: Roster, frames: dict[str, Frames], process: subprocess.Popen,
                 folder: tempfile.TemporaryDirectory) -> None:
        self.sim, self.suite, self.robot = sim, suite, robot
        self.link, self.process, self._folder = link, process, folder
        # every robot of every env (roster.py), each robot name with a frames file of its own
        # (same slots): robots spawned or deleted later join or leave (follow())
        self.roster, self.frames = roster, frames
        self._files = itertools.count(len(frames))
        self.serving = True
        self.commands = Commands(sim, robot, on_reset=lambda env: suite.reset([env]))
        self.rt_factor = 1.0
        self.frames_sent = 0
        self._busy = [False] * SLOTS
        self._deferred: deque[dict] = deque()  # commands that came while waiting for acks
        self._slot = 0
        self._closed = False
        self._warned: set[str] = set()
        sim.add_tick_hook(self._on_tick)  # after the suite's hook: readings are current
        self._publishing = True

    @classmethod
    def start(cls, sim: Simulator, suite: SensorSuite, robot: str, venv: Path | None = None,
              serving: bool = True) -> Bridge:
        """Start the node process; returns once it has created its topics and services.
        serving=False (a sidecar): the node refuses service calls and drops cmd_vel itself,
        for someone else drives the simulator."""
        venv = Path(venv) if venv is not None else default_venv()
        if not venv_python(venv).exists():
            raise RosSetupError(f"no ROS venv at {venv}; expected one made by "
                                "'arena-gym ros setup' (or set ARENA_GYM_ROS_VENV)")
        sim.stepping_groups()  # compile first: the description reads the models
        roster = Roster(sim, suite, robot)
        members, _ = roster.sync()
        folder = tempfile.TemporaryDirectory(prefix="arena-bridge-",
                                             dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        frames = {m.robot: frames_file(m.meta, Path(folder.name) / f"frames_{k}")
                  for k, m in enumerate(members)}
        meta_path = Path(folder.name) / "meta.json"
        meta_path.write_text(json.dumps({"serving": serving,
                                         "members": [m.meta for m in members]}))
        ours, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if k != "_ROS_WHEELS_BOOTSTRAP_COMPLETE"}
        env.pop("PYTHONPATH", None)  # the ROS venv's own packages only
        process = subprocess.Popen(
            [str(venv_python(venv)), "-O", str(NODE), "--fd", str(theirs.fileno()),
             "--meta", str(meta_path)], pass_fds=(theirs.fileno(),), env=env)
        theirs.close()
        link = Link(ours)
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            try:
                message = link.recv(timeout=0.5)
            except EOFError:
                message = None
            if message is not None and message.get("op") == "ready":
                break
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                for file in frames.values():
                    file.close(unlink=True)
                folder.cleanup()
                raise RosSetupError(
                    f"the bridge's ROS node did not start (exit status {process.poll()}; "
                    f"its error is printed above); expected a venv made by "
                    f"'arena-gym ros setup' at {venv}")
        bridge = cls(sim, suite, robot, link, roster, frames, process, folder)
        bridge.serving = serving
        return bridge

    def follow(self) -> None:
        """Follow robots spawned or deleted since the last call (roster.py): once the node
        has published every frame sent, a robot name that joined or changed gets a frames
        file of its own and a "robot" message with its description (the node creates,
        keeps or destroys its topics to match), one that left an "unbridge" message (the
        node destroys its topics); the node handles them before the next frame."""
        changed, gone = self.roster.sync()
        if not changed and not gone:
            return
        self.flush()
        for name in gone:
            self.link.send({"op": "unbridge", "robot": name})
            self.frames.pop(name).close(unlink=True)  # the node's mapping stays valid
        for member in changed:
            meta = dict(member.meta)  # its own frames file: its "shm"
            old = self.frames.get(member.robot)
            self.frames[member.robot] = frames_file(
                meta, Path(self._folder.name) / f"frames_{next(self._files)}")
            self.link.send({"op": "robot", "meta": meta})
            if old is not None:
                old.close(unlink=True)

    # ------------------------------------------------------------ frames
    @property
    def publishing(self) -> bool:
        """Whether every tick goes to the node (True from the start)."""
        return self._publishing

    @publishing.setter
    def publishing(self, on: bool) -> None:
        if on and not self._publishing:
            self.sim.add_tick_hook(self._on_tick)
        elif not on and self._publishing:
            self.flush()
            self.sim.remove_tick_hook(self._on_tick)
        self._publishing = bool(on)

    def _on_tick(self, sim: Simulator) -> None:
        self.publish_frame()

    def publish_frame(self, paused: bool = False) -> None:
        """Copy the current readings into the next free slot and hand it to the node;
        `paused`: a frame of tf and joint states only (the clock stands still)."""
        self.follow()  # a robot spawned or deleted since: before its frames are written
        slot = self._slot
        self._wait_free([slot])
        for name, member in self.roster.members.items():
            member.writer.write(self.frames[name].slots[slot], paused)
        self._busy[slot] = True
        self.link.send({"op": "frame", "slot": slot})
        self.frames_sent += 1
        self._slot = (slot + 1) % SLOTS

    def flush(self) -> None:
        """Wait until the node has published every frame sent."""
        self._wait_free(range(SLOTS))

    def _wait_free(self, slots) -> None:
        while any(self._busy[s] for s in slots):
            message = self.link.recv(None)
            if message is not None and not self._internal(message):
                self._deferred.append(message)

    def _internal(self, message: dict) -> bool:
        """Handle the node's own messages (acks, camera watchers), even in a sidecar
        that serves no commands; False for everything else."""
        op = message.get("op")
        if op == "ack":
            self._busy[message["slot"]] = False
        elif op == "watchers":
            member = self.roster.members.get(message["robot"])
            if member is not None:  # else it left since the node looked
                camera.watch(self.suite, member.camera, message["envs"])
        else:
            return False
        return True

    # ------------------------------------------------------------ serving
    def handle(self, message: dict) -> None:
        if self._internal(message):
            return
        reply = self.commands.run(message)
        if reply["success"] and message.get("op") in SCENE_OPS:
            self.sim.stepping_groups()  # compile what changed
            self.follow()  # a robot's topics exist (or are gone) when the caller hears back
        if "id" in message:
            self.flush()  # the frames of a Step reach the node before its answer
            self.link.send({"op": "reply", "id": message["id"], **reply})
        elif not reply["success"] and reply["message"] not in self._warned:
            # a topic (cmd_vel, joint commands) has nobody to answer: say it once
            self._warned.add(reply["message"])
            print(f"bridge: ignored {reply['message']}", file=sys.stderr, flush=True)

    def serve(self, lockstep: bool = False, duration: float | None = None) -> None:
        """Serve until the node exits (or `duration` wall seconds). Free-running unless
        `lockstep` (then paused: only the Step service advances the clock)."""
        self.commands.paused = lockstep
        period = self.sim.tick_steps * self.sim.timestep
        next_tick = time.perf_counter()
        end = None if duration is None else time.perf_counter() + duration
        while True:
            now = time.perf_counter()
            if end is not None and now >= end:
                return
            running = not self.commands.paused
            wait = max(0.0, next_tick - now) if running or not lockstep else 0.05
            try:
                message = (self._deferred.popleft() if self._deferred
                           else self.link.recv(timeout=wait))
            except (EOFError, OSError):  # the node ended, or close() closed the channel
                return
            if message is not None:
                self.handle(message)
                if not running and not self.commands.paused:
                    next_tick = time.perf_counter()  # unpaused: the wall clock restarts
                continue
            if time.perf_counter() < next_tick or (lockstep and not running):
                continue
            if running:
                self.sim.step(self.sim.tick_steps)
                next_tick += period / self.rt_factor if self.rt_factor > 0 else 0.0
            else:  # paused while free-running: the clock stands, tf and joint states go on
                if self.publishing:
                    self.publish_frame(paused=True)
                next_tick += period
            if next_tick < time.perf_counter() - 1.0:  # far behind: do not race to catch up
                next_tick = time.perf_counter()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.publishing:
            self.sim.remove_tick_hook(self._on_tick)
        try:
            self.link.send({"op": "quit"})
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.link.sock.close()
        for file in self.frames.values():
            file.close(unlink=True)
        self._folder.cleanup()
