"""The ROS 2 sidecar bridge (issue 12): a separate process in its own virtual environment.

    arena-gym ros setup                       # the ROS venv (rclpy, messages, our services)
    arena-gym bridge --envs 2 --lockstep      # the simulator here, the rclpy node there

Importing arena_gym (or this package) never imports rclpy: the node runs in the ROS venv's
Python (`node.py`), and talks to the simulator through `wire.py` (shared memory for the
per-tick arrays, a socket for commands).
"""
