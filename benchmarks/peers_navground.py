"""The navground side of benchmarks/peers.py: a child process run with navground's own python.

    ../navground-venv/bin/python benchmarks/peers_navground.py     # (peers.py starts it)

It imports nothing of arena_gym (navground brings its own numpy and gymnasium, in a venv of
its own). It reads one JSON command per line on stdin and answers one JSON line on stdout:

    {"cmd": "make", "num_envs": 16, "beams": 90, "people": 4, "seed": 0}
        -> {"ok": true, "observation": "...", "action": "..."}
    {"cmd": "run", "seconds": 3.0}  -> {"ok": true, "steps": ..., "seconds": ..., "episodes": ...}
    {"cmd": "close"}  -> {"ok": true}
    {"cmd": "quit"}   (no answer)

`steps` counts env steps (vector steps x num_envs); `episodes` the episodes that ended
(terminated or truncated). The task, matched to ArenaMujoco-v0's default one:
  - a 6 x 6 m square room (walls as line segments on the inner faces of arena_gym's 0.1 m thick
    walls) holding 6-10 boxes, each side U(0.2, 0.6) m, yaw U(0, pi), as four walls each (navground
    obstacles are discs or segments);
  - one diff-drive agent (2WDiff, 0.16 m wheel axis, max speed 0.22 m/s, radius 0.11 m) whose
    start keeps its radius + 0.1 m from every box and wall, and a goal >= 2 m away likewise free;
  - a 360-degree lidar of `beams` beams and 3.5 m range (navground's C++ `Lidar` sensor), the
    goal's distance and direction and the agent's own speeds as the observation;
  - 0.1 s per env step; an episode ends when the agent is within 0.5 m of the goal, when it
    touches anything (navground records a collision), or after 300 steps (truncated);
  - `people` extra agents (radius 0.25 m, omni, max speed U(0.3, 0.5) m/s) walking a loop of two
    random free waypoints under navground's C++ ORCA behaviour, starting >= 1.11 m from the agent.
Random actions: a fixed block of uniform samples of the action space, replayed in turn.
"""

from __future__ import annotations

import json
import math
import sys
import time

import gymnasium as gym
import navground.learning.env  # noqa: F401  (registers "navground")
import numpy as np
from navground import core, sim
from navground.learning import ControlActionConfig, DefaultObservationConfig

ROOM = 6.0  # m, between wall centre lines (arena_gym's room_size)
WALL = 0.1  # m, arena_gym's wall thickness: the free floor is ROOM - WALL wide
BOX = (0.2, 0.6)  # m, each box side (arena_gym's obstacle_size)
BOXES = (6, 10)  # boxes per episode (arena_gym's curriculum stage)
ROBOT_RADIUS = 0.11
MAX_SPEED = 0.22  # m/s
WHEEL_AXIS = 0.16  # m: max angular speed 2 x 0.22 / 0.16 = 2.75 rad/s (arena_diffbot: 2.84)
PERSON_RADIUS = 0.25
PERSON_SPEED = (0.3, 0.5)  # m/s
START_CLEARANCE = 0.1  # m beyond the radius
MIN_GOAL_DISTANCE = 2.0
GOAL_RADIUS = 0.5
RANGE = 3.5  # m, lidar
DT = 0.1  # s per env step
MAX_STEPS = 300
ACTION_BLOCK = 256


def box_corners(x: float, y: float, yaw: float, sx: float, sy: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    local = np.array([[sx, sy], [-sx, sy], [-sx, -sy], [sx, -sy]]) / 2
    return local @ np.array([[c, s], [-s, c]]) + (x, y)


def distance_to_segments(p: np.ndarray, segments: list[tuple[np.ndarray, np.ndarray]]) -> float:
    best = math.inf
    for a, b in segments:
        ab = b - a
        t = min(1.0, max(0.0, float(np.dot(p - a, ab) / np.dot(ab, ab))))
        best = min(best, float(np.hypot(*(a + t * ab - p))))
    return best


def inside_box(p: np.ndarray, box: tuple[float, float, float, float, float]) -> bool:
    x, y, yaw, sx, sy = box
    c, s = math.cos(yaw), math.sin(yaw)
    dx, dy = p[0] - x, p[1] - y
    return abs(c * dx + s * dy) <= sx / 2 and abs(-s * dx + c * dy) <= sy / 2


class ArenaRoom(sim.Scenario, name="ArenaRoom"):
    """arena_gym's default room in navground: agent 0 is the controlled robot, the others
    (if any) ORCA people. The scenario's groups (YAML) make the agents; this places them."""

    def init_world(self, world: sim.World, seed: int | None = None) -> None:
        super().init_world(world, seed=seed)
        rng = world.random_generator
        h = (ROOM - WALL) / 2  # the inner faces of the walls
        room = [np.array(p, dtype=float) for p in ((h, h), (-h, h), (-h, -h), (h, -h))]
        segments = [(room[i], room[(i + 1) % 4]) for i in range(4)]
        boxes = []
        for _ in range(int(rng.integers(BOXES[0], BOXES[1] + 1))):
            sx, sy = rng.uniform(*BOX, size=2)
            reach = h - math.hypot(sx, sy) / 2
            x, y = rng.uniform(-reach, reach, size=2)
            boxes.append((float(x), float(y), float(rng.uniform(0, math.pi)), sx, sy))
        for box in boxes:
            corners = box_corners(*box)
            for i in range(4):
                a, b = corners[i], corners[(i + 1) % 4]
                segments.append((a, b))
        for a, b in segments:
            world.add_wall(core.LineSegment(a, b))

        def free_point(keep: float, away: list[tuple[np.ndarray, float]]) -> np.ndarray:
            for _ in range(1000):
                p = rng.uniform(-h + keep, h - keep, size=2)
                if (distance_to_segments(p, segments) >= keep
                        and not any(inside_box(p, box) for box in boxes)
                        and all(np.hypot(*(p - q)) >= d for q, d in away)):
                    return p
            raise RuntimeError("no free point in the room")

        robot, *people = world.agents
        start = free_point(ROBOT_RADIUS + START_CLEARANCE, [])
        goal = free_point(ROBOT_RADIUS + START_CLEARANCE, [(start, MIN_GOAL_DISTANCE)])
        robot.pose = core.Pose2(start, float(rng.uniform(-math.pi, math.pi)))
        robot.behavior.target = core.Target.Point(goal, GOAL_RADIUS)
        taken = [(start, 1.0 + ROBOT_RADIUS)]
        for person in people:
            p = free_point(PERSON_RADIUS + 0.05, taken)
            taken.append((p, 2 * PERSON_RADIUS + 0.1))
            person.pose = core.Pose2(p, float(rng.uniform(-math.pi, math.pi)))
            loop = [free_point(PERSON_RADIUS + 0.05, []) for _ in range(2)]
            person.task = sim.tasks.WaypointsTask(loop, loop=True, tolerance=0.2)
            speed = float(rng.uniform(*PERSON_SPEED))
            person.kinematics.max_speed = speed
            person.behavior.optimal_speed = speed


def lidar_yaml(beams: int) -> str:
    """The observed sensor (the env updates it for agent 0 at every step)."""
    return (f"{{type: Lidar, range: {RANGE}, start_angle: {-math.pi}, "
            f"field_of_view: {2 * math.pi}, resolution: {beams}}}")


def scenario_yaml(people: int) -> str:
    robot = f"""
  - number: 1
    radius: {ROBOT_RADIUS}
    control_period: {DT}
    kinematics: {{type: 2WDiff, wheel_axis: {WHEEL_AXIS}, max_speed: {MAX_SPEED}}}
    behavior: {{type: Dummy, optimal_speed: {MAX_SPEED}}}
"""
    crowd = f"""
  - number: {people}
    radius: {PERSON_RADIUS}
    control_period: {DT}
    kinematics: {{type: Omni, max_speed: {PERSON_SPEED[1]}}}
    behavior: {{type: ORCA, optimal_speed: {PERSON_SPEED[1]}, safety_margin: 0.05}}
    state_estimation: {{type: Bounded, range: {RANGE}, update_static_obstacles: true}}
""" if people else ""
    return f"type: ArenaRoom\ngroups:{robot}{crowd}"


def reached(agent: sim.Agent, world: sim.World) -> bool:
    return bool(agent.behavior.target.satisfied(agent.position))


def collided(agent: sim.Agent, world: sim.World) -> bool:
    # collisions are stamped with the step's start time, world.time is its end; any earlier one
    # has ended the episode already
    return bool(agent.has_been_in_collision_since(world.time - 1.5 * DT))


def make_one(beams: int, people: int) -> gym.Env:
    scenario = sim.load_scenario(scenario_yaml(people))
    observation = DefaultObservationConfig(
        flat=False, include_target_distance=True, include_target_direction=True,
        include_velocity=True, include_angular_speed=True, max_target_distance=ROOM * 1.5)
    return gym.make("navground", scenario=scenario, sensor=lidar_yaml(beams),
                    action=ControlActionConfig(),
                    observation=observation, time_step=DT, max_duration=MAX_STEPS * DT,
                    terminate_if_idle=False, success_condition=reached,
                    failure_condition=collided)


class Bench:
    """One configuration: N envs (one env, or a SyncVectorEnv of N) and its action block."""

    def __init__(self, num_envs: int, beams: int, people: int, seed: int) -> None:
        self.n = num_envs
        if num_envs == 1:
            self.env = make_one(beams, people)
            space = self.env.action_space
        else:
            self.env = gym.vector.SyncVectorEnv(
                [lambda: make_one(beams, people) for _ in range(num_envs)])
            space = self.env.single_action_space
        rng = np.random.default_rng(seed)
        shape = (ACTION_BLOCK, *space.shape) if num_envs == 1 else \
            (ACTION_BLOCK, num_envs, *space.shape)
        self.actions = rng.uniform(space.low, space.high, shape).astype(space.dtype)
        self.env.reset(seed=seed)
        self.k = 0

    def run(self, seconds: float) -> dict:
        env, actions, steps, episodes = self.env, self.actions, 0, 0
        t0 = time.perf_counter()
        while True:
            for _ in range(10):
                _, _, term, trunc, _ = env.step(actions[self.k % ACTION_BLOCK])
                self.k += 1
                if self.n == 1:
                    if term or trunc:
                        episodes += 1
                        env.reset()
                else:
                    episodes += int(np.count_nonzero(term | trunc))
            steps += 10
            elapsed = time.perf_counter() - t0
            if elapsed >= seconds:
                return {"ok": True, "steps": steps * self.n, "seconds": elapsed,
                        "episodes": episodes}

    def describe(self) -> dict:
        env = self.env
        obs = env.observation_space if self.n == 1 else env.single_observation_space
        act = env.action_space if self.n == 1 else env.single_action_space
        return {"ok": True, "observation": str(obs), "action": str(act)}


def main() -> None:
    bench: Bench | None = None
    for line in sys.stdin:
        msg = json.loads(line)
        try:
            if msg["cmd"] == "quit":
                return
            if msg["cmd"] == "make":
                bench = Bench(msg["num_envs"], msg["beams"], msg["people"], msg.get("seed", 0))
                out = bench.describe()
            elif msg["cmd"] == "run":
                out = bench.run(msg["seconds"])
            elif msg["cmd"] == "close":
                if bench is not None:
                    bench.env.close()
                bench, out = None, {"ok": True}
            else:
                out = {"ok": False, "error": f"unknown command {msg['cmd']!r}"}
        except Exception as e:  # reported to the parent, which stops
            out = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
