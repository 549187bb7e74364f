"""A free-running simulation, as mujoco_ros2_control's MujocoSimulation: a Runner drives a
lockstep Simulator from a thread of its own, paced at a real-time factor, and publishes a
snapshot of every tick for consumers on other threads.

    runner = Runner(sim)
    runner.start()                                    # ticks on a thread at runner.rt_factor
    with runner.snapshots.take() as snap:             # the latest tick (sim/snapshots.py)
        x = snap.field("qpos", 0)[0]
    sim.set_ctrl(0, "robot/wheel_left_joint_vel", 3.0)    # staged: the next tick writes it
    runner.reset_to_keyframe("home")                  # a keyframe of the env models
    runner.capture_initial_state(); runner.reset_to_initial_state()
    runner.set_free_bodies(0, {"robot": FreeBodyState(pos=(1, 0, 0))})  # all or none
    runner.call_soon(lambda: sim.step(20)).result()   # on the loop's thread, between ticks
    snap = runner.snapshot(0); runner.restore(snap)   # whole states (sim/state.py)
    runner.stage_qfrc_applied(0, qfrc)                # held from the next tick on
    data = runner.copy_data(0); runner.overwrite_data(0, data)   # whole MjData, locked
    runner.close()                                    # stop, and publish no more

The Runner reaches its Simulator only through its public API: `step`, the lock, `hooks`
(the snapshots are an observer: they leave `step(n)` one call per group),
`saved_state` and `restore`. Consumers on other threads only ever stage commands or take
snapshots, so they never hold the step lock for a step. One Runner per Simulator.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass

import mujoco
import numpy as np

from arena_gym.sim import state as whole
from arena_gym.sim.free_bodies import FreeBodyState, check_free_bodies
from arena_gym.sim.simulator import SavedState, Simulator, SimulatorClosed
from arena_gym.sim.snapshots import Snapshots

CATCH_UP = 1.0  # s of wall time the loop may fall behind its pace before it stops catching up


@dataclass(frozen=True)
class SimInfo:
    """Where a free-running simulation stands (`Runner.info`), for status replies: clock,
    step count, pause, real-time factor (target and measured), compiles per env."""

    clock: float  # shared sim time, seconds
    step_count: int
    paused: bool
    rt_factor_target: float
    rt_factor_measured: float  # sim seconds per wall second since the last unpause
    compile_counts: tuple[int, ...]


class Runner:
    """Steps `sim` tick by tick on a thread of its own (see the module docstring).

        runner = Runner(sim); runner.start(paused=True); runner.unpause(); runner.close()
    """

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.rt_factor = 1.0  # sim seconds per wall second; <= 0: as fast as possible
        self.busywait = False  # pace by spinning instead of sleeping (sub-millisecond)
        self.error: Exception | None = None  # what stopped the loop, if anything
        self._paused = True
        self._thread: threading.Thread | None = None
        self._running = False
        self._calls: deque = deque()  # (fn, Future) for the loop's thread (call_soon)
        self._wake = threading.Event()  # wakes a paused loop
        self._rtf_window: tuple[float, float] | None = None  # (wall, sim) at window start
        self._rtf_measured = 0.0
        self._snapshots: Snapshots | None = None  # made by the first reader of `snapshots`
        self._initial: dict[int, SavedState] = {}

    # ------------------------------------------------------------ the stepping thread
    @property
    def running(self) -> bool:
        """Whether the loop is stepping (started and not paused)."""
        return self._thread is not None and not self._paused

    def start(self, paused: bool = False) -> None:
        """Run ticks in a background thread at `rt_factor` (<= 0: as fast as possible);
        SimulatorClosed for a closed simulator (a runner kept past its world's reload)."""
        if self.sim.closed:
            raise SimulatorClosed("runner: its simulator is closed (by close(), or replaced "
                                  "by a Simulation's reload() or load_from_*); expected the "
                                  "open one's runner (Simulation.runner)")
        if self._thread is not None:
            return
        self._running, self._paused = True, paused
        self._wake.clear()
        self._thread = threading.Thread(target=self._loop, name="arena-sim", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the loop after the tick under way; calls not yet run fail."""
        self._running = False
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._paused = True
        while self._calls:  # posted after the loop's last look: they never run
            self._calls.popleft()[1].set_exception(RuntimeError(
                "call_soon: the simulator stopped before the call ran"))

    def pause(self) -> None:
        """Stop ticking after the tick under way (calls still run)."""
        self._paused = True

    def unpause(self) -> None:
        self._paused = False
        self._rtf_window = None
        self._wake.set()

    def call_soon(self, fn: Callable[[], object]) -> Future:
        """Run `fn()` on the loop's thread between two ticks (also while paused), under the
        step lock; the Future holds its result or exception. For a consumer whose work must
        share the stepping thread (a server's commands: one thread steps, renders and edits
        the scenes)."""
        if self._thread is None:
            raise RuntimeError("call_soon: expected a started simulator (start()), got "
                               "one not running")
        future: Future = Future()
        self._calls.append((fn, future))
        self._wake.set()  # a paused loop runs it now
        return future

    def _run_calls(self) -> None:
        while self._calls:
            fn, future = self._calls.popleft()
            with self.sim.lock():
                try:
                    future.set_result(fn())
                except BaseException as exc:  # the caller gets it from result()
                    future.set_exception(exc)

    def _loop(self) -> None:
        sim = self.sim
        while self._running:
            self._run_calls()
            if self._paused:  # until unpause(), stop() or call_soon() (set after appending)
                self._wake.wait(0.1)
                self._wake.clear()
                continue
            wall0, clock0 = time.perf_counter(), sim.clock
            try:
                sim.step(sim.tick_steps)
            except Exception as exc:  # surface it: a dead loop must not look like a pause
                self.error, self._paused = exc, True
                raise
            self._pace(wall0, clock0)

    def _pace(self, wall0: float, clock0: float) -> None:
        clock = self.sim.clock
        now = time.perf_counter()
        if self._rtf_window is None:
            self._rtf_window = (wall0, clock0)
        if self.rt_factor > 0:
            target = self._rtf_window[0] + (clock - self._rtf_window[1]) / self.rt_factor
            if target < now - CATCH_UP:  # far behind (a long command, a busy machine):
                self._rtf_window = (now, clock)  # pace on from here, do not race
            elif target > now:
                if self.busywait:  # sub-millisecond pacing, at the price of a busy core
                    while time.perf_counter() < target:
                        pass
                else:
                    time.sleep(target - now)
                now = time.perf_counter()
        elapsed = now - self._rtf_window[0]
        if elapsed > 0:
            self._rtf_measured = (clock - self._rtf_window[1]) / elapsed

    @property
    def info(self) -> SimInfo:
        sim = self.sim
        return SimInfo(clock=sim.clock, step_count=sim.step_count, paused=self._paused,
                       rt_factor_target=self.rt_factor, rt_factor_measured=self._rtf_measured,
                       compile_counts=tuple(s.compile_count for s in sim.store.scenes))

    # ------------------------------------------------------------ snapshots
    @property
    def snapshots(self) -> Snapshots:
        """Post-tick snapshots for other threads (sim/snapshots.py). Publishing starts with
        the first read of this property, which publishes the current state; from then on
        every completed tick and every reset is published (an observer of the simulator)."""
        if self._snapshots is None:
            sim = self.sim
            with sim.lock():
                if self._snapshots is None:
                    snapshots = Snapshots(sim.store.num_envs)
                    snapshots.publish(sim.stepping_groups(), sim.step_count, sim.clock)
                    sim.hooks.observers.append(snapshots.publish)
                    self._snapshots = snapshots
        return self._snapshots

    def _publish(self) -> None:
        """A state edited between ticks (not a reset): published at once."""
        if self._snapshots is not None:
            sim = self.sim
            self._snapshots.publish(sim.stepping_groups(), sim.step_count, sim.clock)

    def close(self) -> None:
        """Stop the loop and publish no more snapshots (the simulator stays usable)."""
        self.stop()
        observers = self.sim.hooks.observers
        if self._snapshots is not None and self._snapshots.publish in observers:
            observers.remove(self._snapshots.publish)

    # ------------------------------------------------------------ resets, free bodies
    def reset_to_keyframe(self, name: str | int, env_ids: list[int] | None = None) -> None:
        """Every env (or `env_ids`) to the model keyframe `name` (full or env-relative, or
        an index; every env is checked to have it before any is reset): reset_envs."""
        self.sim.reset_envs(self._env_ids(env_ids), keyframe=name)

    def capture_initial_state(self, env_ids: list[int] | None = None) -> None:
        """Keep the current state of every env (or `env_ids`) as its initial state."""
        with self.sim.lock():
            for env in self._env_ids(env_ids):
                self._initial[env] = self.sim.saved_state(env)

    def reset_to_initial_state(self, env_ids: list[int] | None = None) -> None:
        """Every env (or `env_ids`) back to its captured initial state; every env is checked
        to have one that fits its model before any is reset. Reset hooks run after, with
        fill_initial_state=True (sim/hooks.py)."""
        envs = self._env_ids(env_ids)
        for env in envs:
            if env not in self._initial:
                raise ValueError(f"initial state of env {env}: expected one captured by "
                                 "capture_initial_state(), got none")
        self.sim.restore({env: self._initial[env] for env in envs}, what="initial state",
                         fill_initial_state=True)

    def set_free_bodies(self, env_id: int, entries: Mapping[str, FreeBodyState]) -> None:
        """Set the pose and velocity of several free bodies of one env at once (between
        ticks). Every entry is checked first (sim/free_bodies.py); one bad entry raises,
        naming it, and nothing is written. Derived quantities follow at the next step."""
        sim = self.sim
        with sim.lock():
            writes = check_free_bodies(sim.store.scene(env_id), entries)
            qpos, qvel = sim.state(env_id, "qpos"), sim.state(env_id, "qvel")
            for write in writes:
                qpos[write.qposadr:write.qposadr + 7] = write.qpos
                qvel[write.dofadr:write.dofadr + 6] = write.qvel
            self._publish()

    # ------------------------------------------------------------ whole states (container)
    def snapshot(self, env_id: int) -> whole.StateSnapshot:
        """Env's whole integration state now (every mjtState component, sim/state.py),
        taken between ticks under the step lock."""
        sim = self.sim
        with sim.lock():
            saved = sim.saved_state(env_id)
            scene = sim.store.scene(env_id)
            return whole.take(scene.env_id, saved.compile_count, sim.step_count,
                              saved.values, scene.compiled)

    def restore(self, snapshot: whole.StateSnapshot) -> None:
        """Put a snapshot's env back into it, bit for bit (the step that followed it comes
        again, given the same commands). A snapshot of an older compile of the env's model
        raises ValueError and nothing is written; reset hooks run after (not an initial
        state: fill_initial_state=False)."""
        if not isinstance(snapshot, whole.StateSnapshot):
            raise ValueError(f"restore: expected a StateSnapshot from runner.snapshot(env), "
                             f"got {type(snapshot).__name__}")
        self.sim.restore({snapshot.env: SavedState(snapshot.compile_count, snapshot.values)},
                         what="snapshot")

    def stage_qfrc_applied(self, env_id: int, values: np.ndarray) -> None:
        """Stage env's qfrc_applied (nv generalised forces): written at the next tick, right
        before its first step, and held there until staged again (zeros to stop), as
        mujoco_ros2_control holds its staged qfrc_applied; a reset writes it again. Through
        the simulator's controller, as every command."""
        self.sim.controller.set_qfrc_applied(env_id, values)

    def copy_data(self, env_id: int) -> mujoco.MjData:
        """A whole copy of env's MjData now (its model: `sim.store[env].model`), made
        between ticks under the step lock (mujoco_ros2_control's copy_physics_data)."""
        with self.sim.lock():
            scene = self.sim.store.scene(env_id)
            return copy.copy(scene.data)

    def overwrite_data(self, env_id: int, data: mujoco.MjData) -> None:
        """Overwrite env's MjData with `data` (mujoco_ros2_control's overwrite_physics_data)
        between ticks under the step lock. Its fields' shapes and its model's sizes are
        checked first: one that does not fit raises ValueError naming it, and nothing is
        written. Its integration state is what the next step continues from."""
        sim = self.sim
        with sim.lock():
            scene = sim.store.scene(env_id)
            target = scene.data
            whole.check_data(scene.env_id, scene.compiled, target, data)
            mujoco.mj_copyData(target, scene.compiled, data)
            self._publish()

    def _env_ids(self, env_ids: list[int] | None) -> list[int]:
        """Every env, or these (each checked to exist)."""
        store = self.sim.store
        if env_ids is None:
            return list(range(store.num_envs))
        return [store.scene(env).env_id for env in env_ids]
