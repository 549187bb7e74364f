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
from arena_gym.ros.frames import FrameWriter, describe
from arena_gym.ros.setup_venv import RosSetupError, default_venv, venv_python
from arena_gym.ros.wire import SLOTS, Frames, Link
from arena_gym.sensors.suite import SensorSuite, default_specs
from arena_gym.sim.simulator import Simulator

NODE = Path(__file__).resolve().parent / "node.py"
READY_TIMEOUT = 120.0  # s: the node's first start imports rclpy (the wheels re-exec Python)


class Bridge:
    def __init__(self, sim: Simulator, suite: SensorSuite, robot: str, link: Link,
                 frames: Frames, process: subprocess.Popen, folder: tempfile.TemporaryDirectory
                 ) -> None:
        self.sim, self.suite, self.robot = sim, suite, robot
        self.link, self.frames, self.process, self._folder = link, frames, process, folder
        self.writer = FrameWriter(sim, suite, robot)
        # (writer, frames) per bridged robot name: the bridge's robot, then each robot
        # spawned through SpawnUrdf after the start (its own frames file, same slots)
        self.groups: list[tuple[FrameWriter, Frames]] = [(self.writer, frames)]
        self.serving = True
        self.camera = self.writer.readings.get("camera")
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
        camera.add_camera(suite, robot)  # rendered only while the node reports watchers
        meta = describe(sim, suite, robot)
        meta["serving"] = serving
        folder = tempfile.TemporaryDirectory(prefix="arena-bridge-",
                                             dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        meta["shm"] = str(Path(folder.name) / "frames")
        frames = Frames(meta["shm"], meta["layout"], create=True)
        meta_path = Path(folder.name) / "meta.json"
        meta_path.write_text(json.dumps(meta))
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
                frames.close(unlink=True)
                folder.cleanup()
                raise RosSetupError(
                    f"the bridge's ROS node did not start (exit status {process.poll()}; "
                    f"its error is printed above); expected a venv made by "
                    f"'arena-gym ros setup' at {venv}")
        bridge = cls(sim, suite, robot, link, frames, process, folder)
        bridge.serving = serving
        return bridge

    def add_robot(self, robot: str) -> None:
        """Bridge a robot spawned after the start (SpawnUrdf with a new name): the readings
        of its declared sensors and odometry (default specs), a frames file of its own, and
        a "robot" message with its description: the node creates its topics before the
        next frame. Cameras of spawned robots are not bridged."""
        if any(writer.robot == robot for writer, _ in self.groups):
            return  # a name already bridged (its envs are those holding it at its start)
        self.flush()
        self.sim.stepping_groups()  # compile the spawned robot
        for spec in default_specs(self.sim.store):
            if spec.robot == robot:
                self.suite.add(spec)
        meta = describe(self.sim, self.suite, robot)
        meta["serving"] = self.serving
        meta["shm"] = str(Path(self._folder.name) / f"frames_{len(self.groups)}")
        frames = Frames(meta["shm"], meta["layout"], create=True)
        self.groups.append((FrameWriter(self.sim, self.suite, robot), frames))
        self.link.send({"op": "robot", "meta": meta})

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
        slot = self._slot
        self._wait_free([slot])
        for writer, frames in self.groups:
            writer.write(frames.slots[slot], paused)
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
            camera.watch(self.suite, self.camera, message["envs"])  # type: ignore[arg-type]
        else:
            return False
        return True

    # ------------------------------------------------------------ serving
    def handle(self, message: dict) -> None:
        if self._internal(message):
            return
        reply = self.commands.run(message)
        if message.get("op") == "spawn_urdf" and reply["success"]:
            self.add_robot(message["name"])  # its topics exist when the caller hears back
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
        for _, frames in self.groups:
            frames.close(unlink=True)
        self._folder.cleanup()
