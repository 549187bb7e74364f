"""The simulator side of the bridge: builds the envs, starts the rclpy node in the ROS venv,
and serves it.

    bridge = Bridge.start(sim, suite, robot="robot")      # the node is up when this returns
    bridge.serve(lockstep=True)                           # until the node or a signal ends it

After every tick the frame writer copies the sensor readings into a shared-memory slot and
tells the node, which publishes them; a slot is written again only after the node has
acknowledged it.

Physics runs on the simulator's own loop (sim.start(), sim/container.py) at the real-time
factor, paused in lockstep: the serving thread reads the node's messages and hands every
command (service calls, cmd_vel) to the loop (sim.call_soon), which runs it between ticks,
so one thread steps, renders and edits the scenes. A free-running tick never waits on the
node: when the node still holds every slot, its frame is dropped (`frames_dropped`). The
Step service steps regardless of pause, and each tick it steps waits for a free slot (every
tick is published). Paused while free-running (PauseSimulation), the loop publishes /tf and
joint states at the frozen clock each 1/50 s of wall time (late subscribers such as RViz
still see the robots); in lockstep only Step publishes.
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
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
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
        self.frames_dropped = 0  # free-running ticks the node was too busy to take
        self._may_wait = True  # False on the free-running loop's own ticks: never block
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
        `paused`: a frame of tf and joint states only (the clock stands still). On the
        free-running loop's own ticks, a busy slot drops the frame instead of waiting."""
        slot = self._slot
        if not self._may_wait and self._busy[slot]:
            self.frames_dropped += 1
            return
        self.follow()  # a robot spawned or deleted since: before its frames are written
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
        """Serve until the node exits (or `duration` wall seconds), physics on the
        simulator's loop. Free-running unless `lockstep` (then paused: only the Step
        service advances the clock, and no paused frames go out)."""
        sim = self.sim
        self.commands.paused = lockstep
        end = None if duration is None else time.perf_counter() + duration
        sim.rt_factor = self.rt_factor
        self._may_wait = False
        sim.start(paused=lockstep)
        period = sim.tick_steps * sim.timestep
        next_frame = time.perf_counter()
        try:
            while sim.error is None:
                paused = self.commands.paused
                wait = max(0.0, next_frame - time.perf_counter()) \
                    if paused and not lockstep else 0.05
                try:
                    message = self._next(end, wait)
                except (EOFError, TimeoutError):
                    return
                if message is not None:
                    if message.get("op") == "ack":  # the only message not for the loop
                        self._internal(message)
                    else:
                        self._wait(sim.call_soon(lambda m=message: self._on_loop(m)))
                    if paused and not self.commands.paused:
                        next_frame = time.perf_counter()
                elif paused and not lockstep and time.perf_counter() >= next_frame:
                    # paused while free-running: the clock stands, tf and joint states go on
                    if self.publishing:
                        sim.call_soon(lambda: self.publish_frame(paused=True))
                    next_frame = max(next_frame + period, time.perf_counter() - 1.0)
            raise sim.error
        finally:
            sim.stop()
            self._may_wait = True

    def _next(self, end: float | None, wait: float) -> dict | None:
        """The next message (deferred ones first), None after `wait` s; EOFError when the
        node ended or close() closed the channel, TimeoutError at `end`."""
        if end is not None and time.perf_counter() >= end:
            raise TimeoutError
        if self._deferred:
            return self._deferred.popleft()
        try:
            return self.link.recv(timeout=wait if end is None else
                                  max(0.0, min(wait, end - time.perf_counter())))
        except OSError as exc:
            raise EOFError from exc

    def _wait(self, future: Future) -> None:
        """The result of a call on the loop; the loop's error if it died meanwhile."""
        while True:
            try:
                return future.result(timeout=0.5)
            except FutureTimeout:
                if self.sim.error is not None:
                    raise self.sim.error from None

    def _on_loop(self, message: dict) -> None:
        """A command on the loop's thread, between ticks (the serving thread waits for it,
        so the link is this thread's to wait on: the ticks of a Step are all published)."""
        self._may_wait = True
        try:
            self.handle(message)
        finally:
            self._may_wait = False
        if self.commands.paused:
            self.sim.pause()
        elif not self.sim.running:
            self.sim.unpause()

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
