"""The crowd's step (arena_gym.people.crowd) as one compiled loop over envs and agents.

`step` moves every active agent of every env by one step of the crowd model, in place: the
forces (social force model) or the straight walk (waypoints model), the constraints, the
headings and the waypoint advance; the module docstring of arena_gym.people.crowd is its spec.
Pairs and boxes are screened by brute force, every step (16 envs of 64 agents and 16 boxes
take a few hundred microseconds), in a fixed order, so a step is deterministic. The
point-to-box geometry is the one of arena_gym.geometry.footprints (box_frame, box_gap,
box_normal), which BoxFrames runs on arrays.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from arena_gym.compiled import kernel, shared
from arena_gym.geometry.footprints import box_frame, box_gap, box_normal


@shared
def _nearest_box(px: float, py: float, boxes: np.ndarray, frames: np.ndarray,
                 mask: np.ndarray) -> tuple[float, float, float]:
    """Gap and normal of the nearest box (B, 5) of those `mask` keeps (the first of ties);
    an infinite gap without any. `frames` (B, 2): the cos and sin of each box's yaw. Boxes
    are compared by the gap's square, signed (no square root but the nearest one's)."""
    best, k, lx, ly, ax, ay = np.inf, -1, 0.0, 0.0, 0.0, 0.0
    for b in range(boxes.shape[0]):
        if not mask[b]:
            continue
        mx, my, bx, by = box_frame(px, py, boxes[b, 0], boxes[b, 1], frames[b, 0],
                                   frames[b, 1], boxes[b, 3], boxes[b, 4])
        if bx > 0 or by > 0:  # outside
            ox, oy = max(bx, 0.0), max(by, 0.0)
            key = ox * ox + oy * oy
        else:  # inside: the gap is max(bx, by) <= 0
            key = -max(bx, by) ** 2
        if key < best:
            best, k, lx, ly, ax, ay = key, b, mx, my, bx, by
    if k < 0:
        return np.inf, 0.0, 0.0
    gap = box_gap(ax, ay)
    nx, ny = box_normal(lx, ly, ax, ay, gap, frames[k, 0], frames[k, 1])
    return gap, nx, ny


@shared
def _push_out(pos: np.ndarray, boxes: np.ndarray, frames: np.ndarray, mask: np.ndarray,
              radius: float) -> None:
    """An agent at `pos` (2,) closer than `radius` to boxes steps back out along each one's
    normal by the depth (all of them at once, from where it stood); twice, for a corner
    between two boxes. `frames` as for _nearest_box."""
    for _ in range(2):
        mx, my, hit = 0.0, 0.0, False
        for b in range(boxes.shape[0]):
            if not mask[b]:
                continue
            lx, ly, ax, ay = box_frame(pos[0], pos[1], boxes[b, 0], boxes[b, 1], frames[b, 0],
                                       frames[b, 1], boxes[b, 3], boxes[b, 4])
            if max(ax, ay) >= radius:  # a lower bound of its gap
                continue
            gap = box_gap(ax, ay)
            if gap < radius:
                nx, ny = box_normal(lx, ly, ax, ay, gap, frames[b, 0], frames[b, 1])
                mx += (radius - gap) * nx
                my += (radius - gap) * ny
                hit = True
        if not hit:
            return
        pos[0] += mx
        pos[1] += my


@shared
def _separate(pos: np.ndarray, active: np.ndarray, within: float, shift: np.ndarray) -> bool:
    """One round for an env's agents (P, 2): every overlapping pair (closer than `within`)
    is pushed apart by half the overlap each, all from where they stood; whether any
    overlapped. `shift` (P, 2) is scratch."""
    over = False
    screen = (within + 1e-6) ** 2
    for i in range(pos.shape[0]):
        shift[i, 0] = shift[i, 1] = 0.0
    for i in range(pos.shape[0]):
        if not active[i]:
            continue
        for j in range(i + 1, pos.shape[0]):
            if not active[j]:
                continue
            dx, dy = pos[i, 0] - pos[j, 0], pos[i, 1] - pos[j, 1]
            squared = dx * dx + dy * dy
            if squared >= screen:
                continue
            dist = math.sqrt(squared)  # pairs pushed apart end near `within`: exact test
            if dist < within:
                over = True
                push = (within - dist) * 0.5 / max(dist, 1e-9)
                shift[i, 0] += push * dx
                shift[i, 1] += push * dy
                shift[j, 0] -= push * dx
                shift[j, 1] -= push * dy
    if over:
        for i in range(pos.shape[0]):
            pos[i, 0] += shift[i, 0]
            pos[i, 1] += shift[i, 1]
    return over


@shared
def _walk(pos, vel, active, goals, vmax, dt):
    """The waypoints model for an env's agents: straight at vmax to the goal (P, 2),
    landing on it rather than past it."""
    for p in range(pos.shape[0]):
        vel[p, 0] = vel[p, 1] = 0.0
        if not active[p]:
            continue
        dx, dy = goals[p, 0] - pos[p, 0], goals[p, 1] - pos[p, 1]
        dist = math.sqrt(dx * dx + dy * dy)
        stride = min(vmax[p] * dt, dist) / max(dist, 1e-12)
        vel[p, 0], vel[p, 1] = dx * stride / dt, dy * stride / dt
        pos[p, 0] += dx * stride
        pos[p, 1] += dy * stride


@shared
def _social_forces(pos, vel, active, goals, vmax, factors, count, reached, boxes, frames, mask,
                   robot_xy, has_robot, robot_radius, dt, radius, wall_gap, heading, force,
                   push, params):
    """The social force model for an env's agents (P, 2), in place: forces, speed cap and
    move. Writes each agent's gap to its nearest obstacle before the move into `wall_gap`
    and returns the smallest distance between two agents before it (inf if none are
    within the social force's reach). `count`, `reached`: each agent's waypoints and
    arrivals (who stands at its only waypoint); `heading`, `force`, `push` (P, 2) are
    scratch; `params` the model's constants (step)."""
    tau, social_a, social_b, anisotropy, obstacle_a, obstacle_b, robot_a, robot_b, slide, \
        fade = params
    capacity = pos.shape[0]
    for p in range(capacity):
        force[p, 0] = force[p, 1] = push[p, 0] = push[p, 1] = 0.0
        if not active[p]:
            continue
        gx, gy = goals[p, 0] - pos[p, 0], goals[p, 1] - pos[p, 1]
        inv = 1.0 / max(math.sqrt(gx * gx + gy * gy), 1e-9)
        hx, hy = gx * inv, gy * inv
        # the nearest obstacle only (as pedsim): a wall cut into many boxes pushes once
        gap, nx, ny = _nearest_box(pos[p, 0], pos[p, 1], boxes, frames, mask)
        wall_gap[p] = gap
        if gap < np.inf:
            a = factors[2, p] * obstacle_a * math.exp((radius - gap) / obstacle_b)
            force[p, 0], force[p, 1] = a * nx, a * ny
            into = hx * nx + hy * ny
            if gap < radius + slide and into < 0:
                # walking into a near obstacle turns along it (the tangent nearer to the
                # goal's side), so an agent whose waypoint lies behind a wall follows the
                # wall instead of pressing against it where the forces cancel
                tx, ty = hx - into * nx, hy - into * ny
                length = math.sqrt(tx * tx + ty * ty)
                if length > 1e-6:
                    hx, hy = tx / length, ty / length
                else:  # straight into it: no side is nearer; the left-hand tangent
                    hx, hy = -ny, nx
        heading[p, 0], heading[p, 1] = hx, hy
        # an agent at its only waypoint stays there (it stands: desired speed 0)
        speed0 = 0.0 if count[p] == 1 and reached[p] > 0 else vmax[p]
        f = factors[0, p] / tau
        force[p, 0] += f * (speed0 * hx - vel[p, 0])
        force[p, 1] += f * (speed0 * hy - vel[p, 1])
    # A exp((2r - d_ij) / B) n_ij w(phi) from each other agent j, phi between i's walking
    # direction and the direction toward j: what lies behind weighs less. Pairs beyond
    # 2r + fade B push by ~nothing
    reach = (2 * radius + fade * social_b) ** 2  # squared, as the distances screened
    closest = np.inf
    for i in range(capacity):
        if not active[i]:
            continue
        xi, yi, fx, fy = pos[i, 0], pos[i, 1], 0.0, 0.0
        for j in range(i + 1, capacity):
            dx, dy = xi - pos[j, 0], yi - pos[j, 1]
            squared = dx * dx + dy * dy
            if squared >= reach or not active[j]:
                continue
            closest = min(closest, squared)
            dist = math.sqrt(squared)
            inv = 1.0 / max(dist, 1e-9)
            size = social_a * math.exp((2 * radius - dist) / social_b) * inv
            wi = size * (anisotropy + (1 - anisotropy) * 0.5 * (
                1 - (heading[i, 0] * dx + heading[i, 1] * dy) * inv))
            wj = size * (anisotropy + (1 - anisotropy) * 0.5 * (
                1 + (heading[j, 0] * dx + heading[j, 1] * dy) * inv))
            fx += wi * dx
            fy += wi * dy
            push[j, 0] -= wj * dx
            push[j, 1] -= wj * dy
        push[i, 0] += fx
        push[i, 1] += fy
    for p in range(capacity):
        if not active[p]:
            vel[p, 0] = vel[p, 1] = 0.0
            continue
        fx = force[p, 0] + factors[1, p] * push[p, 0]
        fy = force[p, 1] + factors[1, p] * push[p, 1]
        if has_robot:
            ax, ay = pos[p, 0] - robot_xy[0], pos[p, 1] - robot_xy[1]
            d = math.sqrt(ax * ax + ay * ay)
            a = factors[3, p] * robot_a * math.exp((radius + robot_radius - d) / robot_b)
            fx += a * ax / max(d, 1e-9)
            fy += a * ay / max(d, 1e-9)
        vx, vy = vel[p, 0] + fx * dt, vel[p, 1] + fy * dt
        speed = math.sqrt(vx * vx + vy * vy)
        scale = min(speed, vmax[p]) / max(speed, 1e-12)
        vel[p, 0], vel[p, 1] = vx * scale, vy * scale
        pos[p, 0] += vel[p, 0] * dt
        pos[p, 1] += vel[p, 1] * dt
    return math.sqrt(closest)


@shared
def _push_out_all(pos, start, active, wall_gap, boxes, frames, mask, radius):
    """Every active agent within `radius` of an obstacle steps back out (_push_out). The
    gap changes no faster than the agent moves: one whose gap at `start` less the way it
    has gone since is at least the radius is clear."""
    for e in range(pos.shape[0]):
        for p in range(pos.shape[1]):
            if active[e, p]:
                dx, dy = pos[e, p, 0] - start[e, p, 0], pos[e, p, 1] - start[e, p, 1]
                moved = math.sqrt(dx * dx + dy * dy)
                if wall_gap[e, p] - moved < radius:
                    _push_out(pos[e, p], boxes[e], frames[e], mask[e], radius)


@shared
def _advance(pos, vel, yaw, active, goals, count, target, direction, mode, reached,
             tolerance, ping_pong):
    """Headings from the velocities; agents within `tolerance` of their waypoint turn to the
    next (loop, or back along the list at either end for mode `ping_pong`)."""
    for e in range(pos.shape[0]):
        for p in range(pos.shape[1]):
            if not active[e, p]:
                continue
            vx, vy = vel[e, p, 0], vel[e, p, 1]
            if math.sqrt(vx * vx + vy * vy) > 1e-3:
                yaw[e, p] = math.atan2(vy, vx)
            if count[e, p] == 1 and reached[e, p] > 0:
                continue  # at its only waypoint: nothing left to walk to
            dx, dy = goals[e, p, 0] - pos[e, p, 0], goals[e, p, 1] - pos[e, p, 1]
            if math.sqrt(dx * dx + dy * dy) > tolerance:
                continue
            reached[e, p] += 1
            nxt = target[e, p] + direction[e, p]
            if mode[e, p] != ping_pong:
                nxt %= count[e, p]
            elif nxt > count[e, p] - 1 or nxt < 0:
                direction[e, p] = -direction[e, p]
                nxt = target[e, p] + direction[e, p]
            target[e, p] = min(max(nxt, 0), count[e, p] - 1)


@kernel
def step(pos, vel, yaw, active, waypoints, count, target, direction, mode, vmax, factors,
         reached, boxes, box_mask, robots, has_robots, robot_radius, dt, radius,
         social_model, params, arrival, iterations, skin, ping_pong, scratch):
    """One step of every env's agents, in place (see the module docstring); returns how
    many constraint rounds found agents overlapping, or -1, moving no one, where a walking
    agent's vmax * dt is not below the radius. Arrays: pos, vel (E, P, 2), yaw, vmax
    (E, P), active (E, P) bool, waypoints (E, P, W, 2), count, target, direction, mode,
    reached (E, P) int64, factors (4, E, P) (desired, social, obstacle, robot), boxes
    (E, B, 5) with box_mask (E, B), robots (E, 2) (used where has_robots). `params`:
    (TAU, SOCIAL, ANISOTROPY, OBSTACLE, ROBOT, SLIDE, FADE) of arena_gym.people.crowd, the
    (A, B) pairs flat. `scratch` (Scratch) is written over."""
    num_envs, capacity = active.shape
    frames, start, goals = scratch.frames, scratch.start, scratch.goals
    wall_gap, apart = scratch.wall_gap, scratch.apart
    heading, force, push = scratch.heading, scratch.force, scratch.push
    for e in range(num_envs):
        for b in range(boxes.shape[1]):
            frames[e, b, 0], frames[e, b, 1] = math.cos(boxes[e, b, 2]), math.sin(boxes[e, b, 2])
    reach = 0.0  # the longest move of anyone in this step
    for e in range(num_envs):
        apart[e] = np.inf
        for p in range(capacity):
            start[e, p, 0], start[e, p, 1] = pos[e, p, 0], pos[e, p, 1]
            goals[e, p, 0] = waypoints[e, p, target[e, p], 0]
            goals[e, p, 1] = waypoints[e, p, target[e, p], 1]
            wall_gap[e, p] = -np.inf
            if active[e, p]:
                reach = max(reach, vmax[e, p] * dt)
    if reach >= radius:  # someone could skip through a wall: nobody moves
        return -1
    for e in range(num_envs):
        if social_model:
            apart[e] = _social_forces(pos[e], vel[e], active[e], goals[e], vmax[e],
                                      factors[:, e], count[e], reached[e], boxes[e], frames[e],
                                      box_mask[e], robots[e], has_robots, robot_radius, dt,
                                      radius, wall_gap[e], heading, force, push, params)
        else:
            _walk(pos[e], vel[e], active[e], goals[e], vmax[e], dt)
    # constraints: overlapping agents apart (social force model), then out of the obstacles
    # (walls win). No one moved more than `reach`: an env whose agents were all
    # 2 (r + reach) + skin apart before cannot overlap now
    rounds = 0
    within = 2 * radius + skin
    if social_model:
        for k in range(iterations):  # alternate: a push apart may meet a wall
            over = False
            for e in range(num_envs):
                if k > 0 or apart[e] < within + 2 * reach + 1e-9:
                    over |= _separate(pos[e], active[e], within, push)
            if not over:
                break
            rounds += 1
            _push_out_all(pos, start, active, wall_gap, boxes, frames, box_mask, radius)
    _push_out_all(pos, start, active, wall_gap, boxes, frames, box_mask, radius)
    _advance(pos, vel, yaw, active, goals, count, target, direction, mode, reached,
             arrival if social_model else 1e-9, ping_pong)
    return rounds


class Scratch(NamedTuple):
    """`step`'s working arrays for E envs of P agents among B boxes."""

    frames: np.ndarray  # (E, B, 2) cos and sin of each box's yaw
    start: np.ndarray  # (E, P, 2) where each agent started the step
    goals: np.ndarray  # (E, P, 2) its waypoint
    wall_gap: np.ndarray  # (E, P) its gap to the nearest obstacle before the move
    apart: np.ndarray  # (E,) each env's closest two agents before the move
    heading: np.ndarray  # (P, 2) one env's at a time
    force: np.ndarray  # (P, 2)
    push: np.ndarray  # (P, 2)

    @classmethod
    def make(cls, envs: int, agents: int, boxes: int) -> Scratch:
        return cls(np.empty((envs, boxes, 2)), np.empty((envs, agents, 2)),
                   np.empty((envs, agents, 2)), np.empty((envs, agents)), np.empty(envs),
                   np.empty((agents, 2)), np.empty((agents, 2)), np.empty((agents, 2)))
