"""A separate, real rclpy process for the bridge tests (runs in the ROS venv).

Reads one JSON command per line on stdin, answers one JSON line on stdout:
  {"do": "listen", "topic": T, "type": "pkg/msg/Name"}   subscribe; wait for its publishers
  {"do": "unlisten", "topic": T}                         drop the subscription
  {"do": "take", "topic": T}                             messages received since last take
  {"do": "wait", "topic": T, "count": n, "timeout": s}   until n messages are buffered
  {"do": "call", "service": S, "type": "pkg/srv/Name", "request": {...}}
  {"do": "call_many", ..., "count": n, "timeout": s}  n requests at once: the answers
  {"do": "publish", "topic": T, "type": ..., "msg": {...}}
  {"do": "publishers", "topic": T, "count": n, "timeout": s}   until T has n publishers
Messages travel as dicts (nested fields, sequences as lists). Every wait is on a
condition or an event with a timeout (tests/waiting.py, imported from the tests folder).
"""

from __future__ import annotations

import array
import importlib
import json
import os
import sys
import threading
from pathlib import Path

import rclpy
from rclpy.duration import Duration
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: waiting.py
from waiting import within  # noqa: E402 - after the path it is found on


def load(name: str):
    pkg, kind, cls = name.split("/")
    return getattr(importlib.import_module(f"{pkg}.{kind}"), cls)


def to_dict(msg):
    if hasattr(msg, "get_fields_and_field_types"):
        return {k: to_dict(getattr(msg, k)) for k in msg.get_fields_and_field_types()}
    if isinstance(msg, (list, tuple, array.array)) or type(msg).__name__ == "ndarray":
        return [to_dict(v) for v in msg]
    return msg


def fill(msg, values: dict):
    for key, value in values.items():
        current = getattr(msg, key)
        if hasattr(current, "get_fields_and_field_types"):
            fill(current, value)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            # a sequence of messages: its element type
            element = msg.SLOT_TYPES[msg.__slots__.index("_" + key)].value_type
            cls = getattr(importlib.import_module(
                ".".join(element.namespaces)), element.name)
            setattr(msg, key, [fill(cls(), v) for v in value])
        else:
            setattr(msg, key, value)
    return msg


def spin(executor) -> None:
    try:
        executor.spin()
    except ExternalShutdownException:
        pass


def on_executor(executor, destroy, entity) -> bool:
    """`destroy(entity)` on the executor's thread, once it ran: destroyed from another
    thread while the executor gathers the node's entities, it ends that thread (rclpy's
    InvalidHandle)."""
    task = executor.create_task(destroy, entity)
    within(task.done, 20)
    return task.result()


def main() -> None:
    rclpy.init()
    node = rclpy.create_node("arena_gym_probe")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    threading.Thread(target=spin, args=(executor,), daemon=True).start()
    buffers: dict[str, list] = {}
    lock = threading.Condition()  # notified with every message kept
    publishers = {}
    subscriptions = {}
    clients: dict = {}
    for line in sys.stdin:
        cmd = json.loads(line)
        do = cmd["do"]
        out: object = None
        if do == "listen":
            topic = cmd["topic"]
            buffers[topic] = []
            qos = QoSProfile(depth=1000)
            if topic == "/tf_static":
                qos = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)

            def keep(msg, topic=topic):
                with lock:
                    buffers[topic].append(to_dict(msg))
                    lock.notify_all()

            if topic in subscriptions:  # listening again replaces the subscription
                on_executor(executor, node.destroy_subscription, subscriptions.pop(topic))
            sub = subscriptions[topic] = node.create_subscription(load(cmd["type"]), topic,
                                                                  keep, qos)
            # every publisher discovery knows of is matched to this subscription
            out = within(lambda sub=sub, topic=topic: (
                0 < node.count_publishers(topic) <= sub.get_publisher_count()), 20) and \
                node.count_publishers(topic)
        elif do == "unlisten":
            out = on_executor(executor, node.destroy_subscription,
                              subscriptions.pop(cmd["topic"]))
        elif do == "publishers":  # discovery takes a moment to see one come or go
            within(lambda cmd=cmd: node.count_publishers(cmd["topic"]) == cmd["count"],
                   cmd.get("timeout", 10))
            out = node.count_publishers(cmd["topic"])
        elif do == "take":
            with lock:
                out, buffers[cmd["topic"]] = buffers[cmd["topic"]], []
        elif do == "wait":
            with lock:
                lock.wait_for(lambda cmd=cmd: len(buffers[cmd["topic"]]) >= cmd["count"],
                              cmd.get("timeout", 10))
                out = len(buffers[cmd["topic"]])
        elif do == "call":
            kind = load(cmd["type"])
            key = (cmd["service"], cmd["type"])  # kept: destroying a client while the
            # executor's thread builds its wait set ends that thread (rclpy's InvalidHandle)
            if key not in clients:
                clients[key] = node.create_client(kind, cmd["service"])
            client = clients[key]
            if not client.wait_for_service(timeout_sec=20):
                out = {"error": f"no service {cmd['service']}"}
            else:
                future = client.call_async(fill(kind.Request(), cmd["request"]))
                answered = threading.Event()
                future.add_done_callback(lambda _, answered=answered: answered.set())
                answered.wait(60)
                out = to_dict(future.result()) if future.done() else {
                    "error": "timeout", "servers": node.count_services(cmd["service"]),
                    "domain": os.environ.get("ROS_DOMAIN_ID")}
        elif do == "call_many":  # `count` requests at once; the answers that came
            kind = load(cmd["type"])
            # deep, as the bridge's: a burst is not cut on this side either
            client = node.create_client(kind, cmd["service"], qos_profile=QoSProfile(depth=1000))
            if not client.wait_for_service(timeout_sec=20):
                out = {"error": f"no service {cmd['service']}"}
            else:
                futures = [client.call_async(fill(kind.Request(), cmd["request"]))
                           for _ in range(cmd["count"])]
                within(lambda futures=futures: all(f.done() for f in futures),
                       cmd.get("timeout", 60))
                out = [to_dict(f.result()) for f in futures if f.done()]
            clients[(cmd["service"], cmd["type"], "many")] = client  # kept (see "call")
        elif do == "publish":
            key = cmd["topic"]
            latched = cmd.get("latched", False)  # transient local, as robot_state_publisher:
            # late subscribers get the last message, so nobody need listen yet
            if key not in publishers:
                qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL) \
                    if latched else 10
                publishers[key] = node.create_publisher(load(cmd["type"]), key, qos)
                if not latched:
                    within(lambda key=key: publishers[key].get_subscription_count() > 0, 20)
            publishers[key].publish(fill(load(cmd["type"])(), cmd["msg"]))
            if not latched:
                publishers[key].wait_for_all_acked(Duration(seconds=20))  # delivered
            out = publishers[key].get_subscription_count()
        print(json.dumps({"out": out}), flush=True)
    rclpy.try_shutdown()
    sys.stdout.flush()
    os._exit(0)  # the executor thread may sit in a DDS wait: do not join it


if __name__ == "__main__":
    main()
