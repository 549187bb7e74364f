"""A lit room, three ways: its ceiling rig on, dimmed to a quarter, and off (a faint dome
through the windows left), as robot cameras, viewport captures and the viewer draw a light
table (arena_gym.render.lights, the lighting model in lux of render/lux.py).

    python benchmarks/lit_room.py                 # docs/render_lit_room.png
    python benchmarks/lit_room.py --out room.png --width 320 --height 240

The room: 7.2 x 4.8 m, walls 2.6 m high, a grey floor, a desk lamp whose shade is a glow
visual (`glow_Shade`), a table and two boxes; a rig of six 3600 lm panels (4000 K) at
2.58 m and a 60 lux dome; the lamp's 800 lm bulb (2700 K) lights its shade.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

ROOM = (7.2, 4.8)
HEIGHT = 2.6
GRID = [(x, y, 2.58) for y in (1.2, 3.6) for x in (1.2, 3.6, 6.0)]


def _box_obj(path: Path, lo, hi) -> Path:
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    v = [(x, y, z) for z in (z0, z1) for y in (y0, y1) for x in (x0, x1)]
    f = [(0, 2, 1), (1, 2, 3), (4, 5, 6), (5, 7, 6), (0, 1, 4), (1, 5, 4),
         (2, 6, 3), (3, 6, 7), (0, 4, 2), (2, 4, 6), (1, 3, 5), (3, 7, 5)]
    path.write_text("\n".join([*(f"v {x} {y} {z}" for x, y, z in v),
                               *(f"f {a + 1} {b + 1} {c + 1}" for a, b, c in f)]) + "\n")
    return path


def build(folder: Path):
    """The room's store and its light table."""
    from arena_gym.assets.shapes import Shape
    from arena_gym.scene import SceneStore
    from arena_gym.scene.lights import Light, LightTable
    from arena_gym.scene.requests import Prim, Slab, Wall

    store = SceneStore(1, path_roots=[folder])
    w, d = ROOM
    scene = store[0]
    scene.spawn_floors([Slab("floor", (w / 2, d / 2, 0.01), (w, d), rgba=(0.7, 0.7, 0.68, 1))])
    corners = [(0, 0), (w, 0), (w, d), (0, d)]
    scene.spawn_walls([Wall(f"wall_{k}", corners[k], corners[(k + 1) % 4], height=HEIGHT,
                            rgba=(0.85, 0.84, 0.8, 1)) for k in range(4)])
    body = _box_obj(folder / "lamp.obj", (-0.08, -0.08, 0.0), (0.08, 0.08, 0.75))
    shade = _box_obj(folder / "shade.obj", (-0.18, -0.18, -0.12), (0.18, 0.18, 0.12))
    scene.spawn_prims([
        Prim("table", pose=(5.2, 2.6, 0.375, 0.3), scale=(1.4, 0.8, 0.75),
             rgba=(0.55, 0.4, 0.3, 1)),
        Prim("box_a", pose=(2.0, 3.8, 0.3, 0.0), scale=(0.6, 0.6, 0.6), rgba=(0.3, 0.45, 0.7, 1)),
        Prim("box_b", pose=(1.3, 1.2, 0.2, 0.5), scale=(0.4, 0.4, 0.4), rgba=(0.7, 0.3, 0.3, 1)),
        Prim("lamp", pose=(3.4, 2.0, 0.0, 0.0), mesh_path=body, rgba=(0.2, 0.2, 0.22, 1),
             visuals=(Shape(shade, pos=(0.0, 0.0, 0.87), name="glow_Shade",
                            rgba=(0.95, 0.9, 0.8, 1)),)),
    ])
    table = LightTable()
    table.spawn(Light("sky", "dome", intensity=60.0))
    table.spawn(Light("hall", "rect", positions=GRID, intensity=3600.0, cct_k=4000.0,
                      x_length=0.6, y_length=0.6))
    table.spawn(Light("lamp_bulb", "sphere", positions=[(3.4, 2.0, 0.87)], intensity=800.0,
                      cct_k=2700.0, intrinsic=True, glow_prim="lamp"))
    return store, table


def render(width: int, height: int) -> list[np.ndarray]:
    """Frames of the room with the rig on, at 0.25 and off."""
    import mujoco

    from arena_gym.render.canvas import open_canvas
    from arena_gym.render.lights import FIXTURE_QUADS

    with tempfile.TemporaryDirectory() as tmp:
        store, table = build(Path(tmp))
        model, data = store[0].model, store[0].data
        canvas = open_canvas(model, width, height, quads=FIXTURE_QUADS)
        camera = mujoco.MjvCamera()
        camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        camera.lookat[:] = (4.5, 3.0, 0.4)  # from a corner of the room, under the ceiling
        camera.distance, camera.azimuth, camera.elevation = 5.2, 32.0, -20.0
        frames = []
        for level, bulb in ((1.0, 1.0), (0.25, 1.0), (0.0, 0.0)):
            table.dim("hall", level)
            table.dim("lamp_bulb", bulb)
            frames.append(canvas.draw(data, camera, lambda scene: None, lights=table))
        canvas.close()
    return frames


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "docs"
                                              / "render_lit_room.png"))
    parser.add_argument("--width", type=int, default=320)
    parser.add_argument("--height", type=int, default=240)
    args = parser.parse_args(argv)
    from PIL import Image

    frames = render(args.width, args.height)
    Image.fromarray(np.concatenate(frames, axis=1)).save(args.out)
    print(f"wrote {args.out}: rig on, at 0.25, off; mean brightness "
          + ", ".join(f"{f.mean():.1f}" for f in frames))


if __name__ == "__main__":
    main()
