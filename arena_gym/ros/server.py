"""The simulator side of the bridge: builds the envs, starts the rclpy node in the ROS venv,
and serves it.

    bridge = Bridge.start(sim, suite, robot="robot")      # the node is up when this returns
    bridge.serve(lockstep=True)                           # until the node or a signal ends it

After every tick the frame writer copies the sensor readings into a shared-memory slot and
tells the node, which publishes them; a slot is written again only after the node has
acknowledged it.

Physics runs on the bridge's Runner (sim/runner.py: a loop of its own) at the real-time
factor, paused in lockstep. One reader thread takes everything the node sends: acks free
their slots at once, the rest queues for the serving thread, which hands every command
(service calls, cmd_vel) to the loop (runner.call_soon) without waiting for it; the loop runs
them between ticks, so one thread steps, renders and edits the scenes, and replies when
done. A free-running tick never waits on the node: when the node still holds every slot,
its frame is dropped (`frames_dropped`). The Step service steps regardless of pause, a tick
at a time with the commands that came meanwhile in between (stepping.py), and each tick it
steps waits for a free slot (every tick is published). Paused while free-running
(PauseSimulation), the loop publishes /tf and joint states at the frozen clock each 1/50 s
of wall time (late subscribers such as RViz still see the robots); in lockstep only Step
publishes.

The node dying (killed, crashed) ends `serve` with NodeExited; a Step running when the
bridge stops (a signal) ends at its next tick.

An Arena session (`session=ArenaSession(...)`, `arena-gym bridge --arena`): no robot of
ours (robot None), the node named `mujoco` as Arena's server, an env made on an Arena
request's first contact up to `max_envs` (the simulator, the sensor suite and the roster
grow with it), robots of Arena's SpawnUrdf driven by their joint commands alone (their
names one by one), and /tf and joint states going on at the frozen clock in lockstep too,
between Steps.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from arena_gym.ros import camera
from arena_gym.ros.arena_commands import ArenaCommands
from arena_gym.ros.commands import Commands
from arena_gym.ros.roster import Roster
from arena_gym.ros.setup_venv import RosSetupError, default_venv, venv_python
from arena_gym.ros.shm import make_folder
from arena_gym.ros.stepping import Stepper
from arena_gym.ros.viewport_control import ViewportControl
from arena_gym.ros.viewport_requests import ViewportRequests
from arena_gym.ros.wire import SLOTS, Frames, Link
from arena_gym.sensors.suite import SensorSuite
from arena_gym.sim.runner import Runner
from arena_gym.sim.simulator import Simulator

NODE = Path(__file__).resolve().parent / "node.py"
NODE_NAME, ARENA_NODE = "arena_gym_bridge", "mujoco"  # ours; an Arena session's (Arena's)
READY_TIMEOUT = 120.0  # s: the node's first start imports rclpy (the wheels re-exec Python)
# commands that may spawn or delete a robot (reset_world deletes all but the bridged one)
SCENE_OPS = frozenset({"spawn_urdf", "delete_prims", "reset_world"})
# Arena's: their robots may change even when some item failed
ARENA_SCENE_OPS = frozenset({"arena_spawn_urdf", "arena_delete_prims", "arena_reset_world"})
_EOF = {"op": "eof"}  # the reader's last message: the node closed the channel


class NodeExited(RuntimeError):
    """The bridge's ROS node ended while the bridge was serving (killed, crashed)."""


@dataclass(frozen=True)
class ArenaSession:
    """How a bridge serves an Arena session (module docstring): envs made on first contact
    up to `max_envs`, a bound on the memory their models take."""

    max_envs: int = 64


def frames_file(meta: dict, path: Path) -> Frames:
    """A robot name's frames file (its layout), named in its description for the node."""
    meta["shm"] = str(path)
    return Frames(path, meta["layout"], create=True)


class Bridge:
    """The simulator side of the ROS bridge: its node process, the frames it publishes and
    the commands it serves (see the module docstring)."""

    def __init__(self, sim: Simulator, suite: SensorSuite, robot: str | None, link: Link,
                 roster: Roster, frames: dict[str, Frames], process: subprocess.Popen,
                 folder: tempfile.TemporaryDirectory,
                 session: ArenaSession | None = None) -> None:
        self.sim, self.suite, self.robot = sim, suite, robot
        self.session = session
        self.runner = Runner(sim)  # the loop that serves: steps, commands, captures
        self.link, self.process, self._folder = link, process, folder
        # every robot of every env (roster.py), each robot name with a frames file of its own
        # (same slots): robots spawned or deleted later join or leave (follow())
        self.roster, self.frames = roster, frames
        self._files = itertools.count(len(frames))
        self.serving = True
        self.commands = Commands(sim, robot, on_reset=lambda env: suite.reset([env]),
                                 runner=self.runner)
        self.runner.capture_initial_state()  # what /mujoco/reset goes back to
        self.arena = ArenaCommands(  # /mujoco/CamelCase
            self.commands, roster.naming, self.runner,
            grow=None if session is None else self._grow,
            max_envs=session.max_envs if session is not None else None)
        suite.renderers.lighting = self.arena.lights.lighting  # robot cameras: the tables
        self.viewport = ViewportRequests(
            ViewportControl(sim, lambda env: self.arena.lights.get(env), roster.frame_body,
                            runner=self.runner), Path(folder.name))
        self.rt_factor = 1.0
        self.frames_sent = 0
        self.frames_dropped = 0  # free-running ticks the node was too busy to take
        self.commands_run: Counter[str] = Counter()  # by op, once run on the loop (a
        # topic's command has no reply: this is how a caller sees that it landed)
        self._may_wait = True  # False on the free-running loop's own ticks: never block
        self._busy = [False] * SLOTS
        self._acks = threading.Condition()  # guards _busy and _gone
        self._gone = False  # the node closed the channel
        self._inbox: queue.Queue[dict] = queue.Queue()  # for the serving thread
        self._watchers: deque[dict] = deque()  # camera watchers, applied by the stepping side
        self.watched: dict[str, list[int]] = {}  # robot -> the envs whose camera someone
        # watches, as the node last said (rendered from the next tick or command on)
        self.stepper = Stepper(self)
        self._slot = 0
        self._closed = False
        self._warned: set[str] = set()
        sim.hooks.tick.append(self._on_tick)  # after the suite's hook: readings are current
        self._publishing = True
        # serving: one reader thread takes everything the node sends; before (a sidecar, a
        # simulator stepped directly) the stepping thread reads acks itself, a few per recv
        self._reader: threading.Thread | None = None

    @classmethod
    def start(cls, sim: Simulator, suite: SensorSuite, robot: str | None,
              venv: Path | None = None, serving: bool = True,
              session: ArenaSession | None = None) -> Bridge:
        """Start the node process; returns once it has created its topics and services.
        serving=False (a sidecar): the node refuses service calls and drops cmd_vel itself,
        for someone else drives the simulator. `session`: an Arena session (module
        docstring); `robot` None: no robot of ours."""
        venv = Path(venv) if venv is not None else default_venv()
        if not venv_python(venv).exists():
            raise RosSetupError(f"no ROS venv at {venv}; expected one made by "
                                "'arena-gym ros setup' (or set ARENA_GYM_ROS_VENV)")
        sim.stepping_groups()  # compile first: the description reads the models
        roster = Roster(sim, suite, robot)
        members, _ = roster.sync()
        folder = make_folder()  # removes the folders dead bridges left behind
        frames = {m.robot: frames_file(m.meta, Path(folder.name) / f"frames_{k}")
                  for k, m in enumerate(members)}
        meta_path = Path(folder.name) / "meta.json"
        meta_path.write_text(json.dumps({"serving": serving, "node": ARENA_NODE if session
                                         else NODE_NAME, "members": [m.meta for m in members]}))
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
        bridge = cls(sim, suite, robot, link, roster, frames, process, folder, session)
        bridge.serving = serving
        return bridge

    def _grow(self, env: int) -> None:
        """Envs up to `env` made (an Arena request's first contact; on the loop): the
        simulator steps them, the suite reads them, their initial state is kept for
        /mujoco/reset, and every robot is described again for the new env count before
        the next frame."""
        new = self.sim.add_envs(env + 1 - self.sim.store.num_envs)
        self.suite.add_envs()
        self.runner.capture_initial_state(new)
        self.roster.forget()

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
            self.sim.hooks.tick.append(self._on_tick)
        elif not on and self._publishing:
            self.flush()
            self.sim.hooks.tick.remove(self._on_tick)
        self._publishing = bool(on)

    def _on_tick(self, sim: Simulator) -> None:
        self.publish_frame()
        self.captures_due()

    def captures_due(self) -> None:
        """Answer the viewport captures whose sim time came (or whose wait ran out)."""
        for message, reply in self.viewport.due():
            self.reply(message, reply)

    def publish_frame(self, paused: bool = False) -> None:
        """Copy the current readings into the next free slot and hand it to the node;
        `paused`: a frame of tf and joint states only (the clock stands still). On the
        free-running loop's own ticks, a busy slot drops the frame instead of waiting."""
        slot = self._slot
        self._apply_watchers()
        if not self._may_wait and self._busy[slot]:
            self.frames_dropped += 1
            return
        self.follow()  # a robot spawned or deleted since: before its frames are written
        if not self._wait_free([slot]):
            return  # the node is gone: nobody to publish to
        for name, member in self.roster.members.items():
            member.writer.write(self.frames[name].slots[slot], paused)
        with self._acks:
            self._busy[slot] = True
        # the clock rides along for a world without robots (a served model, an Arena session
        # before its first SpawnUrdf): the node publishes /clock from it when no robot's
        # frame carries one
        clock = None if paused else self.sim.clock
        if not self._send({"op": "frame", "slot": slot, "clock": clock}):
            return
        self.frames_sent += 1
        self._slot = (slot + 1) % SLOTS

    def flush(self) -> None:
        """Wait until the node has published every frame sent."""
        self._wait_free(range(SLOTS))

    def _wait_free(self, slots) -> bool:
        """Wait for the node's acks of `slots`; False when the node is gone."""
        if self._reader is None:  # not serving: read them here
            while any(self._busy[s] for s in slots) and not self._gone:
                try:
                    message = self.link.recv(None)
                except (EOFError, OSError):
                    self._gone = True
                    break
                self._take(message)
            return not self._gone
        with self._acks:
            while any(self._busy[s] for s in slots) and not self._gone:
                self._acks.wait()
            return not self._gone

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Ticks stepped inside wait for a free slot (none dropped): a Step's, a command's."""
        before, self._may_wait = self._may_wait, True
        try:
            yield
        finally:
            self._may_wait = before

    def _send(self, message: dict) -> bool:
        try:
            self.link.send(message)
        except OSError:
            return False  # the node is gone: the serving thread hears of it from the reader
        return True

    def _read(self) -> None:
        """The reader thread (while serving): every message the node sends (_take), then an
        eof message."""
        for message in self.link.messages():
            self._take(message)
        with self._acks:
            self._gone = True
            self._acks.notify_all()
        self._inbox.put(_EOF)

    def _take(self, message: dict) -> None:
        """Acks free their slots, camera watchers wait for the stepping side, everything
        else queues for the serving thread."""
        op = message.get("op")
        if op == "ack":
            with self._acks:
                self._busy[message["slot"]] = False
                self._acks.notify_all()
        elif op == "watchers":
            self.watched[message["robot"]] = list(message["envs"])
            self._watchers.append(message)
        else:
            self._inbox.put(message)

    def _apply_watchers(self) -> None:
        """Which envs render each robot's camera (the node's "watchers" messages)."""
        while self._watchers:
            message = self._watchers.popleft()
            member = self.roster.members.get(message["robot"])
            if member is not None:  # else it left since the node looked
                camera.watch(self.suite, member.cameras.get(message["sensor"]), message["envs"])

    def reply(self, message: dict, reply: dict) -> None:
        """Answer a request once the frames sent before reach the node (a Step's ticks
        are published before its answer)."""
        if "id" in message:
            self.flush()
            self._send({"op": "reply", "id": message["id"], **reply})

    # ------------------------------------------------------------ serving
    def handle(self, message: dict) -> None:
        """Run one command (on the stepping side) and answer it."""
        self._apply_watchers()
        op = message.get("op", "")
        if op.startswith("viewport_"):
            reply = self.viewport.run(message)
            if op == "viewport_pose" and reply is not None and reply["success"]:
                self._send({"op": "camera_pose", "pose": reply["pose"]})  # the node publishes
            elif reply is not None:  # None: a capture waiting for its sim time
                self.reply(message, reply)
            return
        arena = op.startswith("arena_")
        reply = (self.arena if arena else self.commands).run(message)
        if (reply["success"] and op in SCENE_OPS) or op in ARENA_SCENE_OPS:
            self.sim.stepping_groups()  # compile what changed
            self.follow()  # a robot's topics exist (or are gone) when the caller hears back
        if arena and reply["message"]:  # Arena's answers carry no message: say it here
            self._warn(f"{op.removeprefix('arena_')}: {reply['message']}")
        if "id" in message:
            self.reply(message, reply)
        elif not arena and not reply["success"]:
            self._warn(f"ignored {reply['message']}")

    def _warn(self, text: str) -> None:
        """Say something once on stderr (a topic's message or an Arena request has nobody
        to tell why it failed)."""
        if text not in self._warned:
            self._warned.add(text)
            print(f"bridge: {text}", file=sys.stderr, flush=True)

    def serve(self, lockstep: bool = False, duration: float | None = None) -> None:
        """Serve until the node exits (or `duration` wall seconds), physics on the
        simulator's loop. Free-running unless `lockstep` (then paused: only the Step
        service advances the clock, and no paused frames go out). NodeExited when the node
        ends without close() having asked it to."""
        sim, runner = self.sim, self.runner
        self.commands.paused = lockstep
        # while the clock stands: /tf and joint states go on (in lockstep only an Arena
        # session's, as Arena's server keeps joint states flowing between Steps)
        flowing = not lockstep or self.session is not None
        end = None if duration is None else time.perf_counter() + duration
        runner.rt_factor = self.rt_factor
        self._may_wait = False
        self.stepper.stopping = False
        if self._reader is None:
            self._reader = threading.Thread(target=self._read, name="bridge-link", daemon=True)
            self._reader.start()
        runner.start(paused=lockstep)
        period = sim.tick_steps * sim.timestep
        next_frame = time.perf_counter()
        try:
            while runner.error is None:
                paused = self.commands.paused
                wait = max(0.0, next_frame - time.perf_counter()) \
                    if paused and flowing else 0.05
                if end is not None and time.perf_counter() >= end:
                    return
                try:
                    message = self._inbox.get(timeout=wait)
                except queue.Empty:
                    message = None
                if message is _EOF:
                    if self._closed:
                        return
                    raise NodeExited(f"the bridge's ROS node exited unexpectedly (exit status "
                                     f"{self.process.wait()}); the bridge stops")
                if message is not None:
                    self._post(message)
                    if paused and not self.commands.paused:
                        next_frame = time.perf_counter()
                elif self.viewport.waiting:  # their wait may run out while nothing ticks
                    runner.call_soon(self.captures_due)
                if message is None and paused and flowing and \
                        time.perf_counter() >= next_frame:
                    # paused while free-running: the clock stands, tf and joint states go on
                    if self.publishing:
                        runner.call_soon(lambda: self.publish_frame(paused=True))
                    next_frame = max(next_frame + period, time.perf_counter() - 1.0)
            raise runner.error
        finally:
            self.stepper.stopping = True  # a Step running ends at its next tick
            if runner.error is None:  # the capture's GL context is the loop thread's: free it there
                with contextlib.suppress(Exception):
                    runner.call_soon(self.viewport.control.close).result(timeout=10)
            runner.stop()
            self._may_wait = True

    def _post(self, message: dict) -> None:
        """Hand a message to the loop (serving thread); it never waits for the command."""
        if message.get("op") == "step" and "id" in message:
            self.stepper.start(message)
        else:
            self.runner.call_soon(lambda: self._on_loop(message))

    def _on_loop(self, message: dict) -> None:
        """A command on the loop's thread, between ticks."""
        try:
            with self.waiting():
                self.handle(message)
        except Exception as exc:  # a bug must not leave a caller waiting, nor stop serving
            traceback.print_exc()
            self.reply(message, {"success": False,
                                 "message": f"{message.get('op')}: internal error: {exc!r}"})
        self.commands_run[message.get("op", "")] += 1
        if self.commands.paused:
            self.runner.pause()
        elif not self.runner.running:
            self.runner.unpause()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.publishing:
            self.sim.hooks.tick.remove(self._on_tick)
        if self.suite.renderers.lighting == self.arena.lights.lighting:
            self.suite.renderers.lighting = None  # the suite may outlive the bridge
        self._send({"op": "quit"})
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        with contextlib.suppress(OSError):
            self.link.sock.shutdown(socket.SHUT_RDWR)  # the reader's recv returns
        if self._reader is not None:
            self._reader.join(timeout=10)
        self.link.sock.close()  # (serve frees the viewport's GL context on its loop thread)
        for file in self.frames.values():
            file.close(unlink=True)
        self._folder.cleanup()
