"""The rules ROS 2 holds a topic name to (rmw_validate_full_topic_name), checked before the
bridge makes anything of a name a peer or a file gave: rclpy refuses a name that breaks one
with an exception inside `create_publisher`, which would end the bridge's node.

    topic("front/scan", "sensor 'front' topic")     # '/front/scan', or ValueError
    robot_name("9x", num_envs=2, what="robot")       # ValueError: a token starts with a digit

A robot's topics live in its namespace (`/NAME/...` in env 0, `/env_E/NAME/...` in env E),
so a robot's name is held to the same rules, with room left for its longest topic.
"""

from __future__ import annotations

import re

from arena_gym.ros.messages import KIND_TOPICS

MAX_TOPIC = 255 - 8  # characters of a full topic name (rmw's RMW_TOPIC_MAX_NAME_LENGTH)
# what the bridge puts after a robot's namespace: its command topics, odometry, joint
# states and the first sensor of each kind's topics (messages.KIND_TOPICS)
ROBOT_TOPICS = ("cmd_vel", "odom", "joint_states", "mujoco/joint_commands_velocity",
                "mujoco/joint_commands_position",
                *(name for topics in KIND_TOPICS.values() for name in topics))
LONGEST = max(ROBOT_TOPICS, key=len)
_SHOWN = 60  # characters of a name an error quotes


def problem(name: str) -> str:
    """Which of ROS's rules the absolute topic name `name` breaks; "" when none."""
    if len(name) > MAX_TOPIC:
        return f"it has {len(name)} characters with its leading '/', more than {MAX_TOPIC}"
    return _form(name)


def _form(name: str) -> str:
    """Which of ROS's rules but the length `name` breaks; "" when none."""
    if name.endswith("/"):
        return "it ends with '/'"
    if "//" in name:
        return "it repeats '/'"
    bad = re.search(r"[^A-Za-z0-9_/]", name)
    if bad:
        return f"it holds {bad.group()!r}"
    token = next((t for t in name.split("/") if t[:1].isdigit()), None)
    if token is not None:
        return f"its part {shown(token)} starts with a digit"
    return ""


def topic(name: str, what: str) -> str:
    """A topic a request names, made absolute; ValueError naming the rule it breaks."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"{what}: expected a ROS topic name, got {name!r}")
    absolute = name if name.startswith("/") else "/" + name
    why = problem(absolute)
    if why:
        raise ValueError(f"{what}: expected a ROS topic name (letters, digits, '_' and '/', "
                         f"no part starting with a digit, at most {MAX_TOPIC} characters), "
                         f"got {shown(name)}: {why}")
    return absolute


def robot_name(name: str, num_envs: int, what: str = "robot name") -> str:
    """`name` when a robot may be named so on the bridge: its namespace is a ROS name and
    its longest topic in the last env (`/env_E/NAME/...`) fits ROS's length; else
    ValueError naming the rule."""
    if not isinstance(name, str) or not name.strip("/"):
        raise ValueError(f"{what}: expected a name, got {name!r}")
    space = f"/env_{num_envs - 1}/" if num_envs > 1 else "/"
    room = MAX_TOPIC - len(f"{space}/{LONGEST}")
    why = _form("/" + name) or (f"it has {len(name)} characters" if len(name) > room else "")
    if why:
        raise ValueError(f"{what} {shown(name)}: expected a ROS name (letters, digits and '_', "
                         f"no part starting with a digit, at most {room} characters: its "
                         f"topics {space}NAME/... fit ROS's {MAX_TOPIC}), got one where {why}")
    return name


def shown(text: str) -> str:
    """`text` quoted, cut to its first characters when long."""
    return repr(text) if len(text) <= _SHOWN else f"{text[:_SHOWN]!r}... ({len(text)} characters)"
