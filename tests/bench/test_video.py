"""`--video K`: K episodes per stage as MP4, the same episodes the records hold."""

from __future__ import annotations

import dataclasses
import json

from arena_gym.bench.runner import run_suite
from arena_gym.bench.suite import load_suite
from tests.bench.suites import tiny_suite


def test_videos_replay_the_recorded_episodes(tmp_path):
    import imageio_ffmpeg  # moviepy's writer brings it (the video extra)

    suite = load_suite(tiny_suite(tmp_path))
    suite = dataclasses.replace(suite, stages=suite.stages[:2])  # the rooms: seconds each
    out = run_suite(suite, "reactive", tmp_path / "run", video=1, progress=False)
    videos = sorted(p.relative_to(out / "videos").as_posix()
                    for p in (out / "videos").rglob("*.mp4"))
    assert videos == ["boxes/boxes-episode-0.mp4", "empty/empty-episode-0.mp4"]
    records = {(r["stage"], r["episode"]): r for r in
               json.loads((out / "records.json").read_text())}
    for stage in ("empty", "boxes"):
        frames, _ = imageio_ffmpeg.count_frames_and_secs(str(
            out / "videos" / stage / f"{stage}-episode-0.mp4"))
        assert frames == records[(stage, 0)]["steps"]  # one frame per control step
    link = "[boxes-episode-0.mp4](videos/boxes/boxes-episode-0.mp4)"
    assert link in (out / "report.md").read_text()
