"""Waits for one robot description on a latched topic and prints it: runs in the ROS venv,
started by arena_gym.ros.description (never imports arena_gym).

    <ros venv>/bin/python description_node.py --topic /robot_description --timeout 60

It subscribes to the std_msgs/String topic with robot_state_publisher's QoS (reliable,
transient local, depth 1), so a description published before it started arrives; the
first message's text goes to stdout as JSON ({"urdf": ...}) and it exits 0. Exit status 2
when none came within the timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import String


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topic", required=True)
    parser.add_argument("--timeout", type=float, required=True)
    args = parser.parse_args()
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("arena_gym_robot_description")
    got: list[str] = []
    came = threading.Event()

    def keep(msg: String) -> None:
        if not got:
            got.append(msg.data)
            came.set()

    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(String, args.topic, keep, qos)
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    came.wait(args.timeout)
    if got:
        sys.stdout.write(json.dumps({"urdf": got[0]}))
    sys.stdout.flush()
    return 0 if got else 2


if __name__ == "__main__":
    # no shutdown: the executor's thread may sit in a DDS wait (joining it, or shutting
    # down under it, aborts the process)
    os._exit(main())
