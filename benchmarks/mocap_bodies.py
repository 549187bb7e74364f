"""What a walking person costs MuJoCo itself: bare `mj_step` of a planar robot in a room with
k mocap capsules (people, as the pedestrian pool makes them) against the same world without,
in one run, and per stage of the step.

    python benchmarks/mocap_bodies.py [--people 16 64] [--steps 400] [--repeats 30]

The capsules take no part in collisions (contype and conaffinity 0, as the pool leaves a
person far from every robot), so what they cost is MuJoCo's per-body passes: kinematics,
centre of mass, the bias forces, the collision's bounding boxes. That is a floor under what
people can add to the env's step while each is a body of the model. Ratios, not absolute
numbers, carry across machines.
"""

from __future__ import annotations

import argparse
import time

import mujoco

ROOM = """<mujoco>
  <option timestep="0.025"><flag sleep="enable"/></option>
  <worldbody>
    <geom type="plane" size="10 10 .1"/>
    <geom type="box" size="10 .1 .5" pos="0 10 .5"/>
    <geom type="box" size="10 .1 .5" pos="0 -10 .5"/>
    <geom type="box" size=".1 10 .5" pos="10 0 .5"/>
    <geom type="box" size=".1 10 .5" pos="-10 0 .5"/>
    <body name="robot" pos="0 0 .1">
      <joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/>
      <joint type="hinge" axis="0 0 1"/>
      <geom type="cylinder" size=".1 .06"/>
    </body>
    {people}
  </worldbody>
</mujoco>"""
PERSON = ('<body mocap="true" pos="{x} {y} 0.9"><geom type="capsule" size=".25 .65" '
          'contype="0" conaffinity="0"/></body>')
STAGES = ("mj_kinematics", "mj_comPos", "mj_collision", "mj_rne", "mj_step")


def world(people: int) -> mujoco.MjModel:
    bodies = "".join(PERSON.format(x=-8 + 2 * (k % 8), y=-8 + (2 * (k // 8)) % 16)
                     for k in range(people))
    return mujoco.MjModel.from_xml_string(ROOM.format(people=bodies))


def per_call(model: mujoco.MjModel, stage: str, steps: int, repeats: int) -> float:
    """The fastest of `repeats` runs of `steps` calls of `stage`, in microseconds per call."""
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    call = getattr(mujoco, stage)
    args = (model, data, 0, data.qfrc_bias) if stage == "mj_rne" else (model, data)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            call(*args)
        best = min(best, (time.perf_counter() - t) / steps * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    models = {0: world(0), **{k: world(k) for k in args.people}}
    print("| people | " + " | ".join(f"{s} (us)" for s in STAGES) + " | mj_step / none |")
    print("|---:|" + "---:|" * (len(STAGES) + 1))
    times = {k: [per_call(m, s, args.steps, args.repeats) for s in STAGES]
             for k, m in models.items()}
    for k, row in times.items():
        print(f"| {k} | " + " | ".join(f"{t:.2f}" for t in row)
              + f" | {row[-1] / times[0][-1]:.2f} |")


if __name__ == "__main__":
    main()
