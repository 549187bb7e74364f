"""A CI-sized suite: three stages (one with walking people), a few short episodes each."""

from __future__ import annotations

from pathlib import Path

TINY = """\
name: tiny
seed: 7
envs: 2
stages:
  - name: empty
    obstacles: [0, 0]
    episodes: 3
    time_limit: 8
  - name: boxes
    obstacles: 4
    episodes: 3
    time_limit: 8
    set: {room_size: 5.0}
  - name: people
    obstacles: 0
    pedestrians: [2, 3]
    episodes: 3
    time_limit: 8
"""


def tiny_suite(folder: Path, text: str = TINY) -> Path:
    path = folder / "tiny.yaml"
    path.write_text(text, encoding="utf-8")
    return path
