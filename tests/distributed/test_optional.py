"""Ray is optional: importing arena_gym (and arena_gym.distributed) never imports it, and
without it the distributed env names the extra to install."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


def test_importing_the_package_and_the_distributed_modules_imports_no_ray():
    code = ("import sys, arena_gym, arena_gym.distributed, arena_gym.distributed.rllib, "
            "arena_gym.train.training; print(sorted(m for m in sys.modules "
            "if m == 'ray' or m.startswith('ray.')))")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, cwd=root).stdout
    assert out.strip() == "[]"


def test_without_ray_the_error_names_the_extra(monkeypatch):
    from arena_gym.distributed import DistributedVectorEnv, rllib

    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed
    with pytest.raises(ImportError, match=re.escape(
            "the distributed env needs Ray: pip install 'arena_gym[distributed]'")):
        DistributedVectorEnv(2)
    monkeypatch.setitem(sys.modules, "ray.tune.registry", None)
    with pytest.raises(ImportError, match=re.escape(
            "RLlib's registry needs ray[tune]: pip install 'arena_gym[rllib]'")):
        rllib.register()
