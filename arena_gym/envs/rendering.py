"""The `render_mode` constructor keyword of ArenaEnv and ArenaVectorEnv.

RENDER_MODES are what arena_gym.render draws: "rgb_array" (offscreen frames) and "human"
(MuJoCo's viewer on env 0). Any other value raises TypeError, as an env without that
keyword would: Gymnasium's `make` passes it on, and SB3's `make_vec_env` (which asks for
"rgb_array" by default) retries without `render_mode` on a TypeError only.
"""

from __future__ import annotations

RENDER_MODES: tuple[str, ...] = ("human", "rgb_array")


def check_render_mode(render_mode: str | None) -> str | None:
    """`render_mode` if supported; a TypeError naming the choices if not. "human" also needs
    a display (a RuntimeError says so when there is none)."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise TypeError(
            f"render_mode: expected None or one of {list(RENDER_MODES)}, got {render_mode!r}"
        )
    if render_mode == "human":
        from arena_gym.render.viewer import require_display

        require_display()
    return render_mode
