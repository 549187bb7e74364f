"""Which topics and frames each sensor of a bridged robot publishes on: every declared
sensor gets topics of its own, not only the first of each kind.

Roles: a robot's published readings in the suite's order, numbered per kind from the second
on: lidars "scan", "scan1", ...; IMUs "imu", "imu1", ...; contact readings "contact", ...;
the bridge's cameras "camera", "camera1", ... (one reading per sensor: a second reading of
the same sensor, made for another consumer, is not published again). Topics, in the
robot's namespace: the first sensor of a kind under the kind's names (messages.KIND_TOPICS:
`scan` and `points`, `imu`, `image_raw` ..., `contact`), a further one under its sensor's
name (`rear_laser/scan`, `rear_laser/points`).

A robot spawned by Arena's SpawnUrdf publishes only the sensors its request lists, each on
the topic and in the frame it names, as Arena's server makes one publisher per listed
sensor. A listed sensor is the robot's sensor of its type whose name is the item's `sensor`
(the URDF <sensor> that backs it), else the one on the item's `frame` link, else the first
of that type that no item took yet, else the first of that type. Types: `laserscan` and
`pointcloud` (a lidar; a `pointcloud` whose `sensor` is a camera is that camera's depth
cloud), `imu`, `image`, `depth`, `camera_info` (a camera), `contact` (the contacts of the
`frame` link, or of a declared contact sensor; contact_links() says which the roster reads).
"""

from __future__ import annotations

from collections.abc import Iterable

from arena_gym.ros.messages import KIND_TOPICS

# Arena's sensor types (arena_mujoco_msgs/Sensor.type): the kind of our sensor each names,
# and the topic of that sensor it publishes
ARENA_TYPES = {"laserscan": ("lidar", "scan"), "pointcloud": ("lidar", "points"),
               "imu": ("imu", "imu"), "image": ("camera", "image_raw"),
               "depth": ("camera", "depth/image_raw"), "camera_info": ("camera", "camera_info"),
               "contact": ("contact", "contact")}
CAMERA_POINTS = ("camera", "depth/points")


def role_names(kinds: Iterable[str]) -> list[str]:
    """The role of each sensor of these kinds, in order: "scan", "scan1", "imu", ..."""
    stems = {"lidar": "scan", "imu": "imu", "camera": "camera", "contact": "contact"}
    counts: dict[str, int] = {}
    out = []
    for kind in kinds:
        k = counts.get(kind, 0)
        counts[kind] = k + 1
        out.append(stems[kind] + (str(k) if k else ""))
    return out


def topic_keys(sensor: dict) -> dict[str, str]:
    """{topic key: message type} of one sensor (its `prefix` before the kind's names)."""
    return {sensor["prefix"] + name: kind for name, kind in KIND_TOPICS[sensor["kind"]].items()}


def default_topics(sensors: list[dict], ns: str) -> dict[str, str]:
    """Every topic of a robot in namespace `ns` by key: odom, joint_states and each
    sensor's."""
    keys = ["odom", "joint_states", *(k for s in sensors for k in topic_keys(s))]
    return {key: f"/{ns}/{key}" for key in keys}


def listed(sensors: list[dict], items: list[dict]) -> tuple[dict[str, str], dict[str, str]]:
    """(topic per topic key, frame per role) of a SpawnUrdf request's sensor list `items`
    (dicts of Arena's Sensor fields, topics already checked): every key of `sensors` that
    no item names maps to "" (not published); an item our robot has no sensor for names
    nothing."""
    topics = {k: "" for s in sensors for k in topic_keys(s)}
    frames: dict[str, str] = {}
    cameras = {s["sensor"] for s in sensors if s["kind"] == "camera"} | {
        i["sensor"] for i in items if i["type"] in ("image", "depth", "camera_info")}
    taken: set[tuple[str, str]] = set()  # (role, topic name) an item took
    for item in items:
        kind, name = ARENA_TYPES.get(item["type"], (None, ""))
        if item["type"] == "pointcloud" and item["sensor"] and item["sensor"] in cameras:
            kind, name = CAMERA_POINTS
        sensor = _match([s for s in sensors if s["kind"] == kind], item, name, taken)
        if sensor is None or topics[sensor["prefix"] + name]:
            continue  # nothing of that type, or a second item for one topic: the first's
        taken.add((sensor["role"], name))
        topics[sensor["prefix"] + name] = item["topic"]
        if item["frame"]:
            frames[sensor["role"]] = item["frame"]
    return topics, frames


def _match(candidates: list[dict], item: dict, name: str,
           taken: set[tuple[str, str]]) -> dict | None:
    for ok in (lambda s: item["sensor"] and s["sensor"] == item["sensor"],
               lambda s: item["frame"] and s["link"] == item["frame"],
               lambda s: (s["role"], name) not in taken,
               lambda s: True):
        found = next((s for s in candidates if ok(s)), None)
        if found is not None:
            return found
    return None


def contact_links(items: list[dict], mounts: set[str]) -> list[str]:
    """The links whose contacts a sensor list asks for: each `contact` item's `frame`,
    unless its `sensor` is a declared contact sensor (`mounts`: their names), which the
    robot's own contact reading serves."""
    return [i["frame"] for i in items
            if i["type"] == "contact" and i["sensor"] not in mounts and i["frame"]]
