"""A channel turns one spec's unit samples into its reading: when to sample (Schedule),
averaging (Window), noise (the env's generator), latency (DelayLine), and publishing
into the reading's preallocated arrays."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from arena_gym.compiled import kernel
from arena_gym.sensors.rates import DelayLine, Schedule, Window, delay_steps
from arena_gym.sensors.readings import Reading
from arena_gym.sensors.specs import SensorSpec
from arena_gym.sensors.state_access import Frames
from arena_gym.sensors.units import Unit

Subscriber = Callable[[Reading, np.ndarray], None]


class Channel:
    """One sensor spec's path from its unit's samples to its reading: schedule, averaging window,
    noise, delay line, then publishing to subscribers."""

    def __init__(self, spec: SensorSpec, unit: Unit, reading: Reading, period: float) -> None:
        self.spec, self.unit, self.reading = spec, unit, reading
        self.schedule = Schedule(period)
        self._every_tick = self.schedule.period <= 0
        self.line = DelayLine()
        self.window = Window(spec.nsample) if spec.nsample > 1 else None
        self.averaged = tuple(getattr(reading, "AVERAGED", ()))
        self.fields = tuple(reading.data)
        self.subscribers: list[Subscriber] = []
        self.due = False  # whether the current tick samples (set by needs())
        # the envs that sample (SensorSuite.enable): a camera nobody watches renders nothing
        self.enabled = np.ones(reading.num_envs, dtype=bool)
        self._all_enabled = self._any_enabled = True  # enabled.all(), .any(): asked each tick
        self._delay: tuple[float, float] = (-1.0, 0.0)  # (dt, the delay in whole steps of it)
        # shown at once as taken, when due (no averaging, noise or delay, never failing):
        # run's express path then, wherever every env samples
        self.plain = (self.window is None and spec.delay <= 0 and not unit.can_fail
                      and not unit.noisy(spec))
        # fields the unit writes into the reading itself as it computes them (Unit.show_into,
        # set by the suite while this is its unit's one channel, plain and unmasked): their
        # samples are in place already when shown whole; the others are copied
        self.direct: tuple[str, ...] = ()
        self._copied = self.fields

    @property
    def every_tick(self) -> bool:
        """Due at every tick (a period of 0)."""
        return self._every_tick

    @property
    def shows_in_place(self) -> bool:
        """Whether its unit computes every field straight into the reading (`direct`)."""
        return not self._copied

    def enable(self, mask: np.ndarray) -> None:
        """Sample only the envs of the bool mask from now on (the others keep their last)."""
        self.enabled[:] = mask
        self._all_enabled, self._any_enabled = bool(mask.all()), bool(mask.any())

    def show_into(self, direct: bool) -> None:
        """Whether the unit computes straight into this reading (Unit.show_into): only
        while this channel is the unit's one, plain and unmasked (the suite decides)."""
        self.direct = self.unit.show_into(self.reading.data if direct else None)
        self._copied = tuple(name for name in self.fields if name not in self.direct)

    def needs(self, clock: float) -> bool:
        """Whether this tick samples (due, or averaging every tick); advances the schedule."""
        if not self._any_enabled:
            self.due = False
            return False
        if self._every_tick:  # (period 0: due at every tick, nothing to advance)
            self.due = True
            return True
        due = self.schedule.due(clock)
        self.due = due
        return due or self.window is not None

    def run(self, frames: Frames, clock: float, dt: float, rngs: list[np.random.Generator]) -> None:
        """One tick: sample if needed, then publish what is due (delayed or not)."""
        envs = self.unit.present_ids
        if self.plain and self.due and self._all_enabled and len(envs) == self.reading.num_envs:
            self.show(frames, clock)  # the usual (what the lines below do then)
            return
        if not self._all_enabled:  # the usual case: every env samples, no mask to apply
            envs = envs[self.enabled[envs]]
        if self._delay[0] != dt:
            self._delay = (dt, delay_steps(self.spec.delay, dt) * dt)
        delay = self._delay[1]
        if (self.due or self.window is not None) and envs.size:
            raw = self.unit.sample(frames, envs)
            if self.unit.can_fail and not self.unit.ok.all():
                envs = envs[self.unit.ok[envs]]
            if self.window is not None:
                self.window.add(raw, envs, self.reading.num_envs)
            if self.due and envs.size:
                # published at once: _publish copies, so the unit's buffers serve as they are
                values = self._values(raw, envs, rngs, copy=delay != 0)
                if delay == 0:
                    self._publish(clock, envs, values)
                else:
                    self.line.push(clock, envs, values)
        if len(self.line):
            for stamp, ready, values in self.line.pop_ready(clock, delay):
                self._publish(stamp, ready, values)

    def show(self, frames: Frames, clock: float) -> None:
        """The usual tick's step, for a plain channel due with every env holding its unit
        and none masked: every env's sample shown as taken."""
        envs = self.unit.present_ids
        self._publish(clock, envs, self.unit.sample(frames, envs))

    def sample_now(self, frames: Frames, envs: np.ndarray, clock: float,
                   rngs: list[np.random.Generator]) -> None:
        """A forced sample of `envs` (after a reset): shown at once, their queued samples
        and averaging window dropped."""
        self.forget(envs)
        envs = envs[self.unit.present[envs] & self.enabled[envs]]
        if not envs.size:
            return
        raw = self.unit.sample(frames, envs)
        envs = envs[self.unit.ok[envs]]
        if self.window is not None:
            self.window.add(raw, envs, self.reading.num_envs)
        if envs.size:
            self._publish(clock, envs, self._values(raw, envs, rngs))

    def capture(self, frames: Frames, envs: np.ndarray, clock: float,
                rngs: list[np.random.Generator]) -> np.ndarray:
        """A sample of `envs` now, whatever the schedule or mask, shown at once (noise as
        the spec says; no delay); what is queued stays queued. Returns the envs shown."""
        envs = envs[self.unit.present[envs]]
        if not envs.size:
            return envs
        raw = self.unit.sample(frames, envs)
        envs = envs[self.unit.ok[envs]]
        if envs.size:
            self._publish(clock, envs, self._values(raw, envs, rngs))
        return envs

    def forget(self, envs: np.ndarray) -> None:
        """Drop what is queued or averaged for these envs (their state jumped)."""
        self.line.drop(envs)
        if self.window is not None:
            self.window.drop(envs)

    def invalidate(self, envs: np.ndarray) -> None:
        """These envs no longer hold the sensor (or were recompiled): nothing shown."""
        self.forget(envs)
        self.reading.valid[envs] = False
        self.reading.stamp[envs] = np.nan

    def _values(self, raw: dict[str, np.ndarray], envs: np.ndarray,
                rngs: list[np.random.Generator], copy: bool = True) -> dict[str, np.ndarray]:
        """The rows of `envs`, averaged and noisy as the spec says. A copy (the unit's
        buffers are overwritten by its next sample) unless `copy` is False and nothing
        changes them: then every env's rows are the unit's own arrays."""
        values = {}
        every = len(envs) == self.reading.num_envs  # sorted and unique: all, in order
        noisy = self.unit.noisy(self.spec)
        for name in self.fields:
            if self.window is not None and name in self.averaged:
                values[name] = self.window.mean(name, envs).astype(raw[name].dtype)
            elif every:
                values[name] = raw[name].copy() if copy or noisy else raw[name]
            else:
                values[name] = raw[name][envs]
        if not noisy:
            return values
        for i, env in enumerate(envs):
            self.unit.noise({k: v[i] for k, v in values.items()}, self.spec, rngs[int(env)])
        return values

    def _publish(self, stamp: float, envs: np.ndarray, values: dict[str, np.ndarray]) -> None:
        reading = self.reading
        if not envs.size:
            return
        if len(envs) == reading.num_envs:  # all of them (sorted, unique): whole-array writes
            for name in self._copied:  # (the others are in place: `direct`)
                np.copyto(reading.data[name], values[name], casting="unsafe")  # as `[:] =`
        else:
            for name in self.fields:
                reading.data[name][envs] = values[name]
        shown(reading.valid, reading.stamp, reading.count, reading.fresh, stamp, envs)
        for subscriber in self.subscribers:
            subscriber(reading, envs)


@kernel
def shown(valid, stamp, count, fresh, taken, envs):  # pragma: no cover - compiled
    """Envs `envs` show a sample taken at sim time `taken`: valid True, stamp `taken`,
    count + 1, fresh True (a reading's bookkeeping, (num_envs,) each)."""
    for i in range(envs.shape[0]):
        e = envs[i]
        valid[e] = True
        stamp[e] = taken
        count[e] += 1
        fresh[e] = True
