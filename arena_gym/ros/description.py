"""A robot description from a latched ROS topic, as robot_state_publisher publishes it:
`arena-gym bridge --robot-description-topic /robot_description` builds its robot from it.

    urdf = fetch_robot_description("/robot_description")   # the URDF text, once it came

The wait runs in a short-lived process of the ROS venv (description_node.py: the ROS
wheels re-exec Python, so rclpy stays out of this process), subscribed with transient-local
QoS: a description published before it started arrives at once.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from arena_gym.assets.sources import is_xml_text
from arena_gym.ros.setup_venv import RosSetupError, default_venv, venv_python

NODE = Path(__file__).resolve().parent / "description_node.py"
DEFAULT_TIMEOUT = 60.0  # s: the first import of rclpy in a fresh venv takes a while
STARTUP = 120.0  # s the process may take beyond the wait itself (the wheels' re-exec)
_TOPIC = re.compile(r"^/?[A-Za-z_~][A-Za-z0-9_/{}~]*$")


def fetch_robot_description(topic: str, venv: Path | None = None,
                            timeout: float = DEFAULT_TIMEOUT) -> str:
    """The URDF text of the first message on `topic` (std_msgs/String, latched), waiting
    `timeout` s at most for it. ValueError naming the topic when none came; RosSetupError
    when there is no ROS venv."""
    where = f"--robot-description-topic {topic!r}"
    if not isinstance(topic, str) or not _TOPIC.match(topic) or "//" in topic or (
            topic.endswith("/")):
        raise ValueError(f"{where}: expected a ROS topic name such as /robot_description")
    venv = Path(venv) if venv is not None else default_venv()
    if not venv_python(venv).exists():
        raise RosSetupError(f"no ROS venv at {venv}; expected one made by "
                            "'arena-gym ros setup' (or set ARENA_GYM_ROS_VENV)")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    try:
        done = subprocess.run(
            [str(venv_python(venv)), "-O", str(NODE), "--topic", topic, "--timeout",
             str(float(timeout))], capture_output=True, text=True, env=env,
            timeout=timeout + STARTUP)
    except subprocess.TimeoutExpired:
        done = None
    if done is None or done.returncode == 2:
        raise ValueError(f"{where}: no message within {timeout:g} s; expected a latched "
                         "std_msgs/String (transient-local QoS, as robot_state_publisher "
                         "publishes it)")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RosSetupError(f"{where}: the ROS process waiting for it failed (exit status "
                            f"{done.returncode}): {last}")
    text = json.loads(done.stdout)["urdf"]
    if not is_xml_text(text):
        raise ValueError(f"{where}: expected URDF text (<robot ...>), got {text[:40]!r}")
    return text
