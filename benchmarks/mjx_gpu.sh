#!/usr/bin/env bash
# The MJX backend's speed on a lent GPU, both MJX implementations (JAX and MuJoCo Warp), one
# run of a few minutes: benchmarks/mjx.py at N = 1024, 4096, 16384 with the 360-beam lidar,
# the CPU env's figure at N <= 64 for the ratio. Writes under $OUT (default ./mjx_gpu_out):
# mjx_gpu.txt (the table), env.txt (devices, versions). Installs nothing but jax[cuda12]
# where JAX sees no GPU yet, into the Python it runs ($PYTHON, default python3).
#   OUT=/tmp/out bash benchmarks/mjx_gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/mjx_gpu_out}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
export MUJOCO_GL="${MUJOCO_GL:-egl}" PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if [ "$("$PYTHON" -c 'import jax; print(jax.default_backend())' 2>/dev/null)" != gpu ]; then
    "$PYTHON" -m pip install --quiet "jax[cuda12]==$("$PYTHON" -c 'import jax; print(jax.__version__)')"
fi
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
    "$PYTHON" -c 'import jax, mujoco, warp; print("jax", jax.__version__, jax.devices());
print("mujoco", mujoco.__version__, "warp", warp.__version__)'
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
timeout 540 "$PYTHON" benchmarks/mjx.py --envs 1024 4096 16384 --steps 20 --repeats 3 \
    --impls jax warp 2>&1 | grep -v '^Module ' | tee "$OUT/mjx_gpu.txt"
