"""Recording episodes to MP4 with Gymnasium's RecordVideo (MoviePy writes the files)."""

from __future__ import annotations

from pathlib import Path

from gymnasium.vector import VectorEnv

INSTALL_HINT = "recording videos needs MoviePy: pip install 'arena_gym[video]'"


def record_video(env: VectorEnv, folder: str | Path, prefix: str = "eval") -> VectorEnv:
    """`env` (made with render_mode="rgb_array") wrapped to write every episode of env 0 to
    `folder` as `{prefix}-episode-{k}.mp4` at the control rate. The other envs still render
    each step (Gymnasium's vector RecordVideo asks all of them), so few envs record faster."""
    try:
        import moviepy  # noqa: F401
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    from gymnasium.wrappers.vector import RecordVideo

    return RecordVideo(env, str(folder), record_first_only=True, name_prefix=prefix,
                       episode_trigger=lambda _: True)
