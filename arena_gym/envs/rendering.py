"""The `render_mode` constructor keyword of ArenaEnv and ArenaVectorEnv.

No render mode is implemented yet (RENDER_MODES is empty): `render_mode=None` is accepted,
and any other value raises TypeError, as an env without that keyword would. Gymnasium's
`make` passes the TypeError on, and SB3's `make_vec_env` (which asks for "rgb_array") then
retries without `render_mode`, so both reach the env.
"""

from __future__ import annotations

RENDER_MODES: list[str] = []


def check_render_mode(render_mode: str | None) -> str | None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise TypeError(
            f"render_mode: expected None or one of {RENDER_MODES} (rendering is not "
            f"implemented yet), got {render_mode!r}"
        )
    return render_mode
