"""The robots the bridge publishes, kept in step with the scenes: every robot of every env,
the bridge's own robot first. One path for the rclpy node (server.py), `arena-gym record`
and `arena-gym view --foxglove` (stream.py).

    roster = Roster(sim, suite, "robot")
    added, gone = roster.sync()     # after anything that may have changed the scenes

Each robot name is a member: its description (frames.describe: namespaces, frames, the
frame layout), its frame writer and its camera readings (camera.add_cameras: rendered only
where watched). A robot spawned later joins; one deleted from some envs is described again
without them; one deleted from every env leaves; one spawned again under the same name
(a new entity record) is described again. The bridge's own robot reads the suite's specs;
any other robot gets the sensors layer's default specs of its declared sensors, and the
contacts of each link its spawn request lists a contact sensor on (sensor_topics.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from arena_gym.ros import camera
from arena_gym.ros.frames import FrameWriter, describe
from arena_gym.ros.messages import frame_id, sensor_frame
from arena_gym.ros.sensor_topics import contact_links
from arena_gym.sensors.readings import CameraReading
from arena_gym.sensors.specs import ContactSpec
from arena_gym.sensors.suite import SensorSuite, default_specs
from arena_gym.sim.simulator import Simulator


@dataclass
class Member:
    """One bridged robot: its topic and frame description, the frame writer, its camera reading and
    the envs that hold it."""

    robot: str
    meta: dict  # frames.describe
    writer: FrameWriter
    cameras: dict[str, CameraReading]  # by camera name
    records: tuple[tuple[int, object], ...]  # (env, entity record) of each env holding it


class Roster:
    """The bridged robots of `sim` (their readings in `suite`), `robot` first (None: the
    bridge has no robot of its own, an Arena session)."""

    def __init__(self, sim: Simulator, suite: SensorSuite, robot: str | None) -> None:
        self.sim, self.suite, self.robot = sim, suite, robot
        self.members: dict[str, Member] = {}
        # per (env, robot): the topics and frames its spawn request named (frames.describe)
        self.naming: dict[tuple[int, str], dict] = {}
        self._version: tuple[int, ...] | None = None

    def sync(self) -> tuple[list[Member], list[str]]:
        """Follow the compiled scenes: (members new or described again, names gone). Only a
        comparison when no scene was recompiled since the last call."""
        version = self.sim.layout_version
        if version == self._version:
            return [], []
        self._version = version
        found = self._robots()
        held = {(e, name) for name, records in found.items() for e, _ in records}
        for key in [k for k in self.naming if k not in held]:  # deleted: named afresh
            del self.naming[key]
        gone = [name for name in self.members if name not in found]
        for name in gone:  # nobody can watch it any more
            for reading in self.members[name].cameras.values():
                camera.watch(self.suite, reading, [])
        changed = []
        for name, records in found.items():
            member = self.members.get(name)
            if member is None or len(member.records) != len(records) or any(
                    a[0] != b[0] or a[1] is not b[1]
                    for a, b in zip(member.records, records, strict=True)):
                member = self._member(name, records)
                changed.append(member)
            found[name] = member  # type: ignore[assignment]
        self.members = found  # type: ignore[assignment]
        return changed, gone

    def forget(self) -> None:
        """Describe every robot anew at the next sync (the env count changed: every layout
        and reading with it)."""
        self.members = {}
        self._version = None

    def frame_body(self, frame: str, env: int = 0) -> str | None:
        """The body of env `env` that TF frame id `frame` (as the bridge publishes it)
        follows: a robot's link (its base among them), or a sensor's frame (its link);
        "" for `map` and a robot's odom (both are the world here); None for a frame no
        robot of that env publishes."""
        frame = frame.lstrip("/")
        if frame == "map":
            return ""
        model = self.sim.store[env].model
        for member in self.members.values():
            info = dict(member.records).get(env)
            for r in (r for r in member.meta["robots"] if r["env"] == env and info):
                prefix = info.prefix  # type: ignore[attr-defined]
                if frame == frame_id(r, "odom"):
                    return ""
                for sensor in member.meta["sensors"]:
                    own = {sensor_frame(r, sensor), frame_id(r, sensor.get("optical", "-"))}
                    if frame in own:
                        frame = frame_id(r, sensor["link"])
                links = {frame_id(r, model.body(b).name.removeprefix(prefix)): model.body(b).name
                         for b in range(model.nbody) if model.body(b).name.startswith(prefix)}
                links[frame_id(r, r["base"])] = info.root_body  # type: ignore[attr-defined]
                if frame in links:
                    return links[frame]
        return None

    def _robots(self) -> dict[str, tuple[tuple[int, object], ...]]:
        """Each robot name in the scenes (the bridge's robot first, then by env and spawn
        order) with the (env, entity record) of each env holding it."""
        found: dict[str, list[tuple[int, object]]] = {self.robot: []}
        for scene in self.sim.store.scenes:
            for name, entity in scene.entities.items():
                if entity.kind == "robot":
                    found.setdefault(name, []).append((scene.env_id, entity.record))
        return {name: tuple(records) for name, records in found.items() if records}

    def _member(self, name: str, records: tuple[tuple[int, object], ...]) -> Member:
        if name != self.robot:  # the sensors layer's defaults, unless the suite reads it
            for spec in default_specs(self.sim.store):
                if spec.robot == name and spec.reading_key not in self.suite.readings:
                    self.suite.add(spec)
        for link in self._contact_links(name, records):
            self.suite.add(ContactSpec(name, link=link))
        cameras = camera.add_cameras(self.suite, name)  # rendered only where watched
        return Member(name, describe(self.sim, self.suite, name, self.naming),
                      FrameWriter(self.sim, self.suite, name), cameras, records)

    def _contact_links(self, name: str, records: tuple[tuple[int, object], ...]) -> list[str]:
        """The links whose contacts the robot's spawn requests list (the root link where
        the robot has no link of that name, as Arena's server mounts it)."""
        out: list[str] = []
        for env, info in records:
            items = self.naming.get((env, name), {}).get("sensors", [])
            mounts = {m.name for m in info.sensor_mounts if m.kind == "contact"}  # type: ignore[attr-defined]
            model = self.sim.store[env].model
            for link in contact_links(items, mounts):
                try:
                    model.body(info.prefix + link)  # type: ignore[attr-defined]
                except KeyError:
                    link = info.root_body.removeprefix(info.prefix)  # type: ignore[attr-defined]
                if link not in out:
                    out.append(link)
        return out
