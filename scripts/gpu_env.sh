# Sourced by the GPU scripts (gpu_check.sh, sweep_refresh.sh) after `set -uo pipefail`, with the
# script's default output folder in DEFAULT_OUT and its arguments: moves to the repository root
# and sets OUT_DIR (the first argument, else $OUT, else DEFAULT_OUT; created), PYTHON (default
# python3), MAX_JOBS (default: all cores) and PYTHONPATH. The tree goes on the path so that with
# SKIP_BUILD=1, over modules built elsewhere and never installed, Python subprocesses (the tests
# start some) import cutlass_ops from here too.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT_DIR=${1:-${OUT:-$DEFAULT_OUT}}
mkdir -p "$OUT_DIR"
PYTHON=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-$(nproc)}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
