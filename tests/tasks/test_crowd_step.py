"""The crowd's compiled step: its point-to-box geometry compiled for one pair is what numpy
gives running the same definitions on arrays (BoxFrames) to a few ulp, its steps follow a
plain numpy transcription of the model (all pairs and boxes) to rounding, and the same
inputs give the same crowd bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from arena_gym.compiled import kernel
from arena_gym.geometry.footprints import BoxFrames, box_frame, box_gap, box_normal
from arena_gym.people.crowd import (
    ANISOTROPY,
    ARRIVAL,
    CONSTRAINT_ITERATIONS,
    FADE,
    LOOP,
    OBSTACLE,
    PING_PONG,
    ROBOT,
    SKIN,
    SLIDE,
    SOCIAL,
    TAU,
    AgentRanges,
    Crowd,
    nearest_on_boxes,
)

DT = 0.1


@kernel
def _pairs(points, boxes, gap, normal):  # pragma: no cover - compiled
    """The geometry of every point and box, one pair at a time (as the crowd's step)."""
    for n in range(points.shape[0]):
        for b in range(boxes.shape[0]):
            c, s = np.cos(boxes[b, 2]), np.sin(boxes[b, 2])
            lx, ly, ax, ay = box_frame(points[n, 0], points[n, 1], boxes[b, 0], boxes[b, 1],
                                       c, s, boxes[b, 3], boxes[b, 4])
            gap[n, b] = box_gap(ax, ay)
            normal[n, b, 0], normal[n, b, 1] = box_normal(lx, ly, ax, ay, gap[n, b], c, s)


def test_the_compiled_box_geometry_is_numpys_on_arrays():
    rng = np.random.default_rng(0)
    boxes = np.column_stack([rng.uniform(-2, 2, (40, 2)), rng.uniform(-np.pi, np.pi, 40),
                             rng.uniform(0.1, 3.0, (40, 2))])
    boxes[:4, 2] = 0.0  # axis-aligned ones too
    boxes[0] = (0.5, -1.0, 0.0, 2.0, 1.0)  # points exactly on its faces and corners:
    on = [(1.5, -1.0), (0.5, -1.5), (1.5, -0.5), (-0.5, -0.75)]
    points = rng.uniform(-4, 4, (300, 2))  # mostly outside
    inside = boxes[:, None, :2] + rng.uniform(-0.2, 0.2, (40, 5, 2)) * boxes[:, None, 3:]
    points = np.concatenate([points, inside.reshape(-1, 2), on, boxes[:, :2]])  # and centres
    frames = BoxFrames(points[:, 0:1], points[:, 1:2], boxes[None], None)  # (N, B)
    normals = frames.normals(lambda a: a)
    assert (frames.gap < 0).sum() > 200 and (frames.gap == 0).sum() >= 4
    gap, normal = np.empty(frames.gap.shape), np.empty(normals.shape)
    _pairs(points, boxes, gap, normal)
    # a few ulp of the scale of the coordinates (a gap is a difference of them)
    np.testing.assert_allclose(gap, frames.gap, rtol=0, atol=8 * np.spacing(8.0))
    np.testing.assert_allclose(normal, normals, rtol=0, atol=8 * np.spacing(1.0))
    np.testing.assert_array_equal(gap == 0, frames.gap == 0)  # on a face: exactly


def _reference_step(crowd: Crowd, boxes: np.ndarray, mask: np.ndarray, robots: np.ndarray,
                    robot_radius: float) -> None:
    """The crowd model of arena_gym.people.crowd's docstring, transcribed to numpy over all
    pairs and boxes, in place (a test oracle: slow, plain)."""
    c, r = crowd, crowd.radius
    act, eye = c.active, np.eye(c.capacity, dtype=bool)

    def unit(v: np.ndarray, least: float) -> np.ndarray:
        return v / np.maximum(np.linalg.norm(v, axis=-1), least)[..., None]

    def push_out(pos: np.ndarray) -> np.ndarray:
        for _ in range(2):
            normal, gap = nearest_on_boxes(pos, boxes, mask)  # (E, P, B, 2), (E, P, B)
            depth = np.where(act[..., None] & (gap < r), r - gap, 0.0)
            pos = pos + (depth[..., None] * normal).sum(axis=2)
        return pos

    goal = c.goals()
    if c.model == "waypoints":
        delta = goal - c.pos
        stride = np.minimum(c.vmax * DT, np.linalg.norm(delta, axis=-1)) * act
        vel = unit(delta, 1e-12) * stride[..., None] / DT
        pos = c.pos + vel * DT
    else:
        heading = unit(goal - c.pos, 1e-9)
        normal, gap = nearest_on_boxes(c.pos, boxes, mask)
        k = gap.argmin(axis=-1)[..., None]
        gap = np.take_along_axis(gap, k, -1)[..., 0]
        normal = np.take_along_axis(normal, k[..., None], 2)[:, :, 0]
        a, b = OBSTACLE
        force = (c.factors[2] * np.where(np.isfinite(gap), a * np.exp((r - gap) / b), 0.0)
                 )[..., None] * normal
        into = (heading * normal).sum(-1)
        tangent = heading - into[..., None] * normal
        left = np.stack([-normal[..., 1], normal[..., 0]], -1)
        tangent = np.where((np.linalg.norm(tangent, axis=-1) > 1e-6)[..., None],
                           unit(tangent, 1e-12), left)
        heading = np.where(((gap < r + SLIDE) & (into < 0))[..., None], tangent, heading)
        speed0 = np.where((c.count == 1) & (c.reached > 0), 0.0, c.vmax)
        force += c.factors[0][..., None] * (speed0[..., None] * heading - c.vel) / TAU
        d = c.pos[:, :, None] - c.pos[:, None]  # (E, P, P, 2): i - j
        dist = np.linalg.norm(d, axis=-1)
        pair = act[:, :, None] & act[:, None] & ~eye & (dist < 2 * r + FADE * SOCIAL[1])
        cos_phi = -(heading[:, :, None] * d).sum(-1) / np.maximum(dist, 1e-9)
        weight = ANISOTROPY + (1 - ANISOTROPY) * 0.5 * (1 + cos_phi)
        a, b = SOCIAL
        size = np.where(pair, a * np.exp((2 * r - dist) / b) * weight / np.maximum(dist, 1e-9), 0)
        force += c.factors[1][..., None] * (size[..., None] * d).sum(axis=2)
        away = c.pos - robots[:, None]
        d = np.linalg.norm(away, axis=-1)
        a, b = ROBOT
        force += (c.factors[3] * a * np.exp((r + robot_radius - d) / b))[..., None] * unit(
            away, 1e-9)
        vel = c.vel + force * DT
        speed = np.linalg.norm(vel, axis=-1)
        vel = np.where(act[..., None], vel * (np.minimum(speed, c.vmax) / np.maximum(
            speed, 1e-12))[..., None], 0.0)
        pos = c.pos + vel * DT
        for _ in range(CONSTRAINT_ITERATIONS):
            d = pos[:, :, None] - pos[:, None]
            dist = np.linalg.norm(d, axis=-1)
            over = act[:, :, None] & act[:, None] & ~eye & (dist < 2 * r + SKIN)
            if not over.any():
                break
            c.separations += 1
            push = np.where(over, (2 * r + SKIN - dist) * 0.5 / np.maximum(dist, 1e-9), 0.0)
            pos = push_out(pos + (push[..., None] * d).sum(axis=2))
    pos = push_out(pos)
    moving = np.linalg.norm(vel, axis=-1) > 1e-3
    c.yaw[:] = np.where(moving, np.arctan2(vel[..., 1], vel[..., 0]), c.yaw)
    c.pos[:], c.vel[:] = pos, vel
    tolerance = ARRIVAL if c.model == "social_force" else 1e-9
    there = act & (np.linalg.norm(goal - pos, axis=-1) <= tolerance)
    there &= ~((c.count == 1) & (c.reached > 0))
    nxt = c.target + c.direction
    bounce = (c.mode == PING_PONG) & ((nxt >= c.count) | (nxt < 0))
    c.direction[:] = np.where(there & bounce, -c.direction, c.direction)
    nxt = np.where(c.mode == LOOP, nxt % c.count, np.where(bounce, c.target + c.direction, nxt))
    c.target[:] = np.where(there, np.clip(nxt, 0, c.count - 1), c.target)
    c.reached += there


def _crowd(model: str, ranges: AgentRanges, seed: int = 7) -> tuple[Crowd, np.ndarray,
                                                                    np.ndarray]:
    """2 envs x 24 people on a grid in a 6 m room with boxes (one masked out), with two
    waypoints each, half looping, half back and forth; env 1 has 20 people."""
    rng = np.random.default_rng(seed)
    room = [[0.0, 3.0, 0.0, 6.1, 0.1], [0.0, -3.0, 0.0, 6.1, 0.1],
            [3.0, 0.0, np.pi / 2, 6.0, 0.1], [-3.0, 0.0, np.pi / 2, 6.0, 0.1]]
    boxes = np.zeros((2, 9, 5))
    boxes[:, :4] = room
    boxes[:, 4:, :2] = rng.uniform(-2.5, 2.5, (2, 5, 2))
    boxes[:, 4:, 2] = rng.uniform(-np.pi, np.pi, (2, 5))
    boxes[:, 4:, 3:] = rng.uniform(0.2, 0.6, (2, 5, 2))
    mask = np.ones((2, 9), dtype=bool)
    mask[1, -1] = False
    crowd = Crowd(2, 24, model=model, ranges=ranges)
    xy = np.stack(np.meshgrid(np.linspace(-2.4, 2.4, 6), np.linspace(-2.4, 2.4, 4)), -1)
    for env, people in ((0, 24), (1, 20)):
        starts = np.column_stack([xy.reshape(-1, 2)[:people]
                                  + rng.uniform(-0.1, 0.1, (people, 2)), np.zeros(people)])
        goals = [rng.uniform(-2.7, 2.7, (2, 2)) for _ in range(people)]
        crowd.place(env, starts, goals, [LOOP, PING_PONG] * (people // 2), rng)
    return crowd, boxes, mask


# the second pushes agents onto one another and into boxes: the constraints do the work
@pytest.mark.parametrize(("model", "ranges"), [
    ("social_force", AgentRanges()), ("waypoints", AgentRanges(vmax=(0.5, 1.5))),
    ("social_force", AgentRanges(vmax=(0.5, 1.5), social=(0.0, 0.0), obstacle=(0.0, 0.0)))])
def test_the_compiled_step_follows_a_numpy_transcription_of_the_model(model, ranges):
    crowd, boxes, mask = _crowd(model, ranges)
    reference, _, _ = _crowd(model, ranges)
    robots = np.array([[0.5, 0.2], [-1.0, 0.0]])
    for step in range(20):
        crowd.step(DT, boxes, mask, robots=robots, robot_radius=0.2)
        _reference_step(reference, boxes, mask, robots, 0.2)
        for name in ("pos", "vel", "yaw"):
            np.testing.assert_allclose(getattr(crowd, name), getattr(reference, name),
                                       rtol=0, atol=1e-12, err_msg=f"step {step}: {name}")
        for name in ("target", "direction", "reached", "separations"):
            np.testing.assert_array_equal(getattr(crowd, name), getattr(reference, name),
                                          err_msg=f"step {step}: {name}")
    assert np.abs(crowd.pos - _crowd(model, ranges)[0].pos).max() > 0.5  # they did walk
    assert crowd.reached.sum() > 0
    if ranges.social == (0.0, 0.0):
        assert crowd.separations > 0


def test_the_same_inputs_give_the_same_crowd_bit_for_bit():
    runs = []
    for _ in range(2):
        crowd, boxes, mask = _crowd("social_force", AgentRanges())
        for step in range(200):
            robots = np.tile([np.cos(step / 30) * 2, np.sin(step / 30) * 2], (2, 1))
            crowd.step(DT, boxes, mask, robots=robots, robot_radius=0.2)
        runs.append(crowd)
    for name in ("pos", "vel", "yaw", "target", "direction", "reached"):
        assert np.array_equal(getattr(runs[0], name), getattr(runs[1], name)), name
    assert runs[0].separations == runs[1].separations
