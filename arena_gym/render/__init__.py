"""Seeing the envs: `render_mode="rgb_array"` frames and `render_mode="human"` viewing.

    env = gymnasium.make("ArenaMujoco-v0", render_mode="rgb_array",
                         render={"view": "top_down", "width": 320, "height": 240})
    env.reset(seed=0)
    frame = env.render()            # (240, 320, 3) uint8

Views (config `render.view`): `follow`, a camera behind and above the robot, and `top_down`,
the whole world seen straight down with the robot's goal and its current lidar beams drawn
in. Rendering is offscreen (`MUJOCO_GL=egl` by default; `MUJOCO_GL=osmesa` is the fallback
where EGL is missing) and happens only when `render()` is called: an env made without a
render mode never creates a GL context.
"""

from arena_gym.render.env_view import EnvView

__all__ = ["EnvView"]
