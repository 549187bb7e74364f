"""The free-running container of the ROS bridge, as mujoco_ros2_control's MujocoSimulation:
the Simulator's stepping thread, the snapshots it publishes, resets to keyframes and to a
captured initial state, atomic free-body state, and the callbacks around steps and resets.

    sim.start()                                    # ticks on a thread at sim.rt_factor
    with sim.snapshots.take() as snap:             # the latest tick (sim/snapshots.py)
        x = snap.field("qpos", 0)[0]
    sim.set_ctrl(0, "robot/wheel_left_joint_vel", 3.0)    # staged: the next tick writes it
    sim.reset_to_keyframe("home")                  # a keyframe of the env models
    sim.capture_initial_state(); sim.reset_to_initial_state()
    sim.set_free_bodies(0, {"robot": FreeBodyState(pos=(1, 0, 0))})  # all or none
    sim.call_soon(lambda: sim.step(20)).result()   # on the loop's thread, between ticks

A mixin of Simulator (sim/simulator.py owns the state it uses: the lock, the groups, the
clock); consumers on other threads only ever stage commands or take snapshots, so they
never hold the step lock for a step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

import mujoco

from arena_gym.errors import unknown
from arena_gym.sim.free_bodies import FreeBodyState, check_free_bodies
from arena_gym.sim.snapshots import Snapshots

TickHook = Callable[[Any], None]  # called with the Simulator
CATCH_UP = 1.0  # s of wall time the loop may fall behind its pace before it stops catching up
ResetCallback = Callable[[Any, list[int]], None]  # (the Simulator, env ids)


class Container:
    """What Simulator adds to lockstep stepping for a free-running simulation."""

    # ------------------------------------------------------------ the stepping thread
    @property
    def running(self) -> bool:
        """Whether the free-running loop is stepping (started and not paused)."""
        return self._thread is not None and not self._paused

    def start(self, paused: bool = False) -> None:
        """Run ticks in a background thread at `rt_factor` (<= 0: as fast as possible)."""
        if self._thread is not None:
            return
        self._running, self._paused = True, paused
        self._wake.clear()
        self._thread = threading.Thread(target=self._loop, name="arena-sim", daemon=True)
        self._thread.start()

    def stop(self) -> None:
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
        self._paused = True

    def unpause(self) -> None:
        self._paused = False
        self._rtf_window = None
        self._wake.set()

    def call_soon(self, fn: Callable[[], object]) -> Future:
        """Run `fn()` on the free-running loop's thread between two ticks (also while
        paused), under the step lock; the Future holds its result or exception. For a
        consumer whose work must share the stepping thread (a server's commands: one
        thread steps, renders and edits the scenes)."""
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
            with self._lock:
                try:
                    future.set_result(fn())
                except BaseException as exc:  # the caller gets it from result()
                    future.set_exception(exc)

    def _loop(self) -> None:
        while self._running:
            self._run_calls()
            if self._paused:  # until unpause(), stop() or call_soon() (set after appending)
                self._wake.wait(0.1)
                self._wake.clear()
                continue
            wall0, clock0 = time.perf_counter(), self.clock
            try:
                self.step(self.tick_steps)
            except Exception as exc:  # surface it: a dead loop must not look like a pause
                self.error, self._paused = exc, True
                raise
            self._pace(wall0, clock0)

    def _pace(self, wall0: float, clock0: float) -> None:
        now = time.perf_counter()
        if self._rtf_window is None:
            self._rtf_window = (wall0, clock0)
        if self.rt_factor > 0:
            target = self._rtf_window[0] + (self.clock - self._rtf_window[1]) / self.rt_factor
            if target < now - CATCH_UP:  # far behind (a long command, a busy machine):
                self._rtf_window = (now, self.clock)  # pace on from here, do not race
            elif target > now:
                if self.busywait:  # sub-millisecond pacing, at the price of a busy core
                    while time.perf_counter() < target:
                        pass
                else:
                    time.sleep(target - now)
                now = time.perf_counter()
        elapsed = now - self._rtf_window[0]
        if elapsed > 0:
            self._rtf_measured = (self.clock - self._rtf_window[1]) / elapsed

    # ------------------------------------------------------------ callbacks, snapshots
    def add_pre_step_callback(self, callback: TickHook) -> None:
        """Call `callback(sim)` right before every physics step, for advanced control (it
        may write `ctrl()` and `state()` views). While one is registered, envs step one
        physics step at a time: slower than ticks of `tick_steps`."""
        self._pre_step.append(callback)

    def remove_pre_step_callback(self, callback: TickHook) -> None:
        self._pre_step.remove(callback)

    def add_reset_callback(self, callback: ResetCallback) -> None:
        """Call `callback(sim, env_ids)` after every reset (reset_envs, a keyframe, the
        initial state), under the step lock, before the reset state is published."""
        self._reset_callbacks.append(callback)

    def remove_reset_callback(self, callback: ResetCallback) -> None:
        self._reset_callbacks.remove(callback)

    @property
    def snapshots(self) -> Snapshots:
        """Post-tick snapshots for other threads (sim/snapshots.py). Publishing starts with
        the first read of this property, which publishes the current state."""
        if self._snapshots is None:
            with self._lock:
                if self._snapshots is None:
                    self._prepare()
                    snapshots = Snapshots(self.store.num_envs)
                    snapshots.publish(self._groups, self.step_count, self._clock)
                    self._snapshots = snapshots
        return self._snapshots

    def _publish(self) -> None:
        if self._snapshots is not None:
            self._prepare()  # hand edits pushed, a recompile regrouped: publish what steps
            self._snapshots.publish(self._groups, self.step_count, self._clock)

    # ------------------------------------------------------------ resets, free bodies
    def reset_to_keyframe(self, name: str, env_ids: list[int] | None = None) -> None:
        """Every env (or `env_ids`) to the model keyframe `name`: reset_envs(..., keyframe)."""
        self.reset_envs(self._env_ids(env_ids), keyframe=name)

    def capture_initial_state(self, env_ids: list[int] | None = None) -> None:
        """Keep the current state of every env (or `env_ids`) as its initial state."""
        with self._lock:
            self._prepare()
            for env in self._env_ids(env_ids):
                self._flush_touched(env)
                self._initial[env] = (self.store.scenes[env].compile_count,
                                      self._group_of[env].get_state(env))

    def reset_to_initial_state(self, env_ids: list[int] | None = None) -> None:
        """Every env (or `env_ids`) back to its captured initial state; every env is checked
        to have one that fits its model before any is reset. Reset callbacks run after."""
        with self._lock:
            self._prepare()
            envs = self._env_ids(env_ids)
            for env in envs:
                saved = self._initial.get(env)
                if saved is None:
                    raise ValueError(f"initial state of env {env}: expected one captured by "
                                     "capture_initial_state(), got none")
                compiles = self.store.scenes[env].compile_count
                if saved[0] != compiles:
                    raise ValueError(
                        f"initial state of env {env}: expected the model it was captured "
                        f"with (compile {saved[0]}), got compile {compiles} (something was "
                        "spawned or deleted since); capture it again")
            for env in envs:
                self._group_of[env].set_state(env, self._initial[env][1])
            self._after_reset(envs)

    def _after_reset(self, env_ids: list[int]) -> None:
        for env in env_ids:
            self._stale[env], self._touched[env] = True, False
            self.controller.reset(env)
        for callback in list(self._reset_callbacks):
            callback(self, env_ids)
        self._publish()

    def _env_ids(self, env_ids: list[int] | None) -> list[int]:
        """Every env, or these (each checked to exist)."""
        if env_ids is None:
            return list(range(self.store.num_envs))
        return [self.store.scene(env).env_id for env in env_ids]

    def _keyframe_ids(self, name: str, env_ids: list[int]) -> dict[int, int]:
        """The id of keyframe `name` (full or env-relative) in each env's model."""
        ids = {}
        for env in env_ids:
            scene = self.store.scenes[env]
            model = scene.compiled
            for candidate in (name, scene.full_name(name)):
                key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, candidate)
                if key >= 0:
                    ids[env] = key
                    break
            else:
                raise unknown(f"keyframe in env {env}", name,
                              [model.key(k).name for k in range(model.nkey)])
        return ids

    def set_free_bodies(self, env_id: int, entries: Mapping[str, FreeBodyState]) -> None:
        """Set the pose and velocity of several free bodies of one env at once (between
        ticks). Every entry is checked first (sim/free_bodies.py); one bad entry raises,
        naming it, and nothing is written. Derived quantities follow at the next step."""
        with self._lock:
            writes = check_free_bodies(self.store.scene(env_id), entries)
            qpos, qvel = self.state(env_id, "qpos"), self.state(env_id, "qvel")
            for write in writes:
                qpos[write.qposadr:write.qposadr + 7] = write.qpos
                qvel[write.dofadr:write.dofadr + 6] = write.qvel
            self._publish()
