"""A local Ray cluster (`--shards` without an address) listens on 127.0.0.1 only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import require

# a fresh process: this one's session cluster (tests/distributed/conftest.py) may be running
DRIVER = """
import json, os
from arena_gym.distributed import DistributedVectorEnv
from tests.distributed.test_local_cluster import listening_hosts

env = DistributedVectorEnv(2, distributed={"shards": 1})
env.reset(seed=0)  # the shard's actor (a worker process) is up
print(json.dumps(sorted(listening_hosts(os.getpid()))))
env.close()
"""


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = {root}, [root]
    while todo:
        pid = todo.pop()
        children = [p for p, parent in parents.items() if parent == pid and p not in out]
        out.update(children)
        todo += children
    return out


def _host(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return ".".join(str(b) for b in raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    if words[:12] == b"\0" * 10 + b"\xff\xff":  # IPv4-mapped
        return ".".join(str(b) for b in words[12:])
    return ":".join(words[i:i + 2].hex() for i in range(0, 16, 2))


def listening_hosts(root: int) -> set[str]:
    """The addresses the TCP sockets of `root` and its descendants listen on."""
    inodes = set()
    for pid in _descendants(root):
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    hosts = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and cols[9] in inodes:  # LISTEN
                hosts.add(_host(cols[1].split(":")[0]))
    return hosts


def test_a_local_cluster_listens_on_loopback_only():
    require("ray", "pip install 'arena_gym[distributed]'")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("RAY_ADDRESS", None)
    out = subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, text=True,
                         env=env, cwd=root, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    hosts = json.loads(out.stdout.strip().splitlines()[-1])
    assert hosts == ["127.0.0.1"]  # GCS, raylet, workers and agents alike
