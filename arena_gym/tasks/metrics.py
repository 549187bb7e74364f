"""Per-episode metrics, with the definitions of Arena-Rosnav's evaluation (arena-evaluation's
`metrics.py`), computed from the episode's trajectory: the robot's (x, y, yaw) at its start
and after each control step, sampled every `dt` seconds.

Where Arena's code and its stated intent differ, the intent is kept and the difference is
named in the function's docstring. Arena reports per-sample lists; an episode's number here
is the mean of that list (the absolute value where a sign would cancel out over the
episode), so each episode has one value per metric.
"""

from __future__ import annotations

import numpy as np

from arena_gym.compiled import kernel, shared

# m: a step shorter than this is the robot standing or turning in place, whose position
# jitter is no path: triplets with such a side count as straight (curvature 0), as Arena
# counts coincident points
MIN_STEP = 1e-3


def path_length(xy: np.ndarray) -> float:
    """Path length (m): the sum of the distances between consecutive positions."""
    return float(np.linalg.norm(np.diff(xy, axis=0), axis=1).sum())


def speeds(xy: np.ndarray, dt: float) -> np.ndarray:
    """Speed (m/s) of each step: the distance between consecutive positions over `dt`
    (Arena: the norm of the odometry's planar velocity, one value per sample)."""
    return np.linalg.norm(np.diff(xy, axis=0), axis=1) / dt


def acceleration(speed: np.ndarray, dt: float) -> float:
    """Mean absolute acceleration (m/s^2): |v[k+1] - v[k]| / dt averaged over the steps.
    Arena lists the differences v[k+1] - v[k] per sample, without dividing by the sample
    period; dividing by dt gives the unit, the absolute value keeps braking from cancelling
    speeding up. 0 for fewer than two speeds."""
    return float(np.abs(np.diff(speed)).mean() / dt) if len(speed) >= 2 else 0.0


def jerk(speed: np.ndarray, dt: float) -> float:
    """Mean absolute jerk (m/s^3): |v[k+2] - 2 v[k+1] + v[k]| / dt^2 averaged over the steps
    (Arena: the second differences of the speed per sample). 0 for fewer than three."""
    return float(np.abs(np.diff(speed, n=2)).mean() / dt**2) if len(speed) >= 3 else 0.0


def _triangles(xy: np.ndarray) -> tuple[np.ndarray, ...]:
    """Sides |p1 - p0|, |p2 - p1|, |p2 - p0| and areas of consecutive position triplets."""
    p0, p1, p2 = xy[:-2], xy[1:-1], xy[2:]
    u, w = p1 - p0, p2 - p0
    area = 0.5 * np.abs(u[:, 0] * w[:, 1] - u[:, 1] * w[:, 0])
    d01 = np.linalg.norm(u, axis=1)
    d12 = np.linalg.norm(p2 - p1, axis=1)
    d02 = np.linalg.norm(w, axis=1)
    return d01, d12, d02, area


def curvatures(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per triplet of consecutive positions: the Menger curvature 4 A / (a b c) (1/m; A the
    triangle's area, a, b, c its sides: the inverse radius of the circle through the three
    points) and the normalised curvature, that curvature times the two steps' length
    (dimensionless: the turn per step whatever the speed). Triplets with a side shorter
    than MIN_STEP count 0."""
    d01, d12, d02, area = _triangles(xy)
    sides = d01 * d12 * d02
    ok = np.minimum(np.minimum(d01, d12), d02) >= MIN_STEP
    curv = np.where(ok, 4.0 * area / np.where(ok, sides, 1.0), 0.0)
    return curv, curv * (d01 + d12)


def roughness(xy: np.ndarray) -> np.ndarray:
    """Per triplet: 2 A / |p2 - p0|^2, the triangle's height over its base relative to the
    base (0 on a straight line, 0.5 for a right-angled corner of equal steps). Arena's code
    takes the base from the points' coordinates instead of from p0 and p2 (an indexing
    slip); this is its stated definition. Triplets with a base shorter than MIN_STEP count 0."""
    _, _, d02, area = _triangles(xy)
    ok = d02 >= MIN_STEP
    return np.where(ok, 2.0 * area / np.where(ok, d02, 1.0) ** 2, 0.0)


def angle_over_length(yaw: np.ndarray, length: float) -> float:
    """Angle over length (rad/m): the sum of |yaw[k+1] - yaw[k]| (each wrapped into
    [0, pi]) over the path length; 0 for a path shorter than MIN_STEP (turning in place
    has no length to spread over)."""
    turn = np.abs((np.diff(yaw) + np.pi) % (2 * np.pi) - np.pi)
    return float(turn.sum() / length) if length >= MIN_STEP else 0.0


def collision_count(collided: np.ndarray) -> int:
    """Collisions: how many times the collision flag (one value per control step) turns
    on, a contact that lasts several steps counting once, as Arena counts them. Arena's
    flag is a scan beam within the robot's radius; ours is the sensors' one collision
    rule (arena_gym.sensors.contact). A flag on at the first step counts (Arena's loop
    starts at the second sample)."""
    flags = np.concatenate([[False], np.asarray(collided, bool)])
    return int(np.count_nonzero(flags[1:] & ~flags[:-1]))


def trajectory_metrics(pose: np.ndarray, collided: np.ndarray, dt: float) -> dict[str, float]:
    """The metrics of one episode from its (steps + 1, 3) trajectory of (x, y, yaw) and its
    (steps,) collision flags; `dt` is the control step (s)."""
    xy = pose[:, :2]
    speed = speeds(xy, dt)
    curv, normalised = curvatures(xy)
    length = path_length(xy)
    return {
        "collisions": collision_count(collided),
        "path_length": length,
        "time": len(speed) * dt,
        "mean_speed": float(speed.mean()) if len(speed) else 0.0,
        "max_speed": float(speed.max()) if len(speed) else 0.0,
        "acceleration": acceleration(speed, dt),
        "jerk": jerk(speed, dt),
        "curvature": float(curv.mean()) if len(curv) else 0.0,
        "normalized_curvature": float(normalised.mean()) if len(curv) else 0.0,
        "roughness": float(roughness(xy).mean()) if len(curv) else 0.0,
        "angle_over_length": angle_over_length(pose[:, 2], length),
    }


METRICS = ("collisions", "path_length", "time", "mean_speed", "max_speed", "acceleration",
           "jerk", "curvature", "normalized_curvature", "roughness", "angle_over_length")


SOCIAL = ("time_in_personal_space", "speed_in_personal_space", "min_pedestrian_distance",
          "pedestrian_collisions")


class EpisodeMetrics:
    """Records, per env, the running episode's trajectory and collision flags in
    preallocated buffers (one row per control step) and turns them into its metrics when
    it ends. With `pedestrians`, also the social metrics (SOCIAL), as Arena's
    PedsimMetrics: `time_in_personal_space` (s with a person closer than `personal_space`,
    centre to centre; Arena's radius: 1 m), `speed_in_personal_space` (the robot's mean
    speed over those steps, m/s; 0 without any), `min_pedestrian_distance` (m, the closest
    any person came; inf without people) and `pedestrian_collisions` (steps whose
    collision was with a person)."""

    def __init__(self, num_envs: int, max_steps: int, pedestrians: bool = False,
                 personal_space: float = 1.0) -> None:
        self.capacity = max_steps + 1
        self.pose = np.zeros((num_envs, self.capacity, 3))  # x, y, yaw
        self.collided = np.zeros((num_envs, self.capacity), bool)  # [0]: the start, unused
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.pedestrians, self.personal_space = pedestrians, personal_space
        self.in_space = np.zeros(num_envs, dtype=np.int64)  # steps with a person that close
        self.speed_in_space = np.zeros(num_envs)  # sum of the robot's speed over those steps
        self.min_distance = np.full(num_envs, np.inf)  # m, centre to centre
        self.pedestrian_collisions = np.zeros(num_envs, dtype=np.int64)

    def reset(self, mask: np.ndarray, pose: np.ndarray) -> None:
        """Start the episodes of the envs in `mask` at `pose` (num_envs, 4: x, y, z, yaw)."""
        self.steps[mask] = 0
        self.pose[mask, 0] = pose[mask][:, [0, 1, 3]]
        self.collided[mask] = False
        for array in (self.in_space, self.speed_in_space, self.pedestrian_collisions):
            array[mask] = 0
        self.min_distance[mask] = np.inf

    def update(self, pose: np.ndarray, collided: np.ndarray, active: np.ndarray,
               counted: np.ndarray) -> None:
        """One control step of the `active` envs: where they are now (num_envs, 4) and
        whether they collided. An active env not `counted` (its physics diverged) keeps its
        last position: that motion is not the policy's (`record`, compiled)."""
        record(pose, collided, active, counted, self.steps, self.pose, self.collided)

    def update_pedestrians(self, distance: np.ndarray, speed: np.ndarray, hit: np.ndarray,
                           active: np.ndarray) -> None:
        """One control step near people: distance to the nearest (centres), the robot's speed
        (m/s) and whether it hit a person, for the `active` envs."""
        inside = (distance < self.personal_space) & active
        self.in_space += inside
        self.speed_in_space += np.where(inside, np.abs(speed), 0.0)
        self.min_distance = np.where(active, np.minimum(self.min_distance, distance),
                                     self.min_distance)
        self.pedestrian_collisions += hit & active

    def social(self, env: int, dt: float) -> dict[str, float | int]:
        """The social metrics of env's episode so far (see the class docstring)."""
        inside = int(self.in_space[env])
        return {
            "time_in_personal_space": inside * dt,
            "speed_in_personal_space": float(self.speed_in_space[env] / inside) if inside
            else 0.0,
            "min_pedestrian_distance": float(self.min_distance[env]),
            "pedestrian_collisions": int(self.pedestrian_collisions[env]),
        }

    def episode(self, env: int, result: str, dt: float) -> dict[str, object]:
        """The ended episode's result, metrics (see trajectory_metrics; SOCIAL ones too in
        worlds with people), step count and trajectory ((steps + 1, 3) x, y, yaw)."""
        steps = int(self.steps[env])
        pose = self.pose[env, : steps + 1].copy()
        metrics = trajectory_metrics(pose, self.collided[env, 1 : steps + 1], dt)
        social = self.social(env, dt) if self.pedestrians else {}
        return {"result": result, **metrics, **social, "steps": steps, "trajectory": pose}


@shared
def record_step(e, x, y, yaw, collided, counted, steps, history, hits):  # pragma: no cover
    """One control step of env e, active, in place: its next trajectory slot (steps + 1,
    the last slot once full) gets x, y and yaw, or, when not `counted`, its previous
    slot's; its collision flag goes to `hits`, and `steps` moves to that slot. history
    (n, capacity, 3), hits (n, capacity)."""
    k = min(steps[e] + 1, history.shape[1] - 1)
    if counted:
        history[e, k, 0], history[e, k, 1], history[e, k, 2] = x, y, yaw
    else:
        for j in range(3):
            history[e, k, j] = history[e, k - 1, j]
    hits[e, k] = collided
    steps[e] = k


@kernel
def record(pose, collided, active, counted, steps, history, hits):  # pragma: no cover
    """record_step of every active env (pose (n, 4): x, y, z, yaw)."""
    for e in range(steps.shape[0]):
        if active[e]:
            record_step(e, pose[e, 0], pose[e, 1], pose[e, 3], collided[e], counted[e], steps,
                        history, hits)
