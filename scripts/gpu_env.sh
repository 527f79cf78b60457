# Sourced by the GPU scripts (gpu_check.sh, sweep_refresh.sh) after `set -uo pipefail`, with the
# script's default output folder in DEFAULT_OUT and its arguments: moves to the repository root
# and sets OUT_DIR (the first argument, else $OUT, else DEFAULT_OUT; created), PYTHON (default
# python3), MAX_JOBS (default: all cores) and PYTHONPATH; defines build_in_place and
# export_build. The tree goes on the path so that with SKIP_BUILD=1, over modules built elsewhere
# and never installed, Python subprocesses (the tests start some) import cutlass_ops from here too.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT_DIR=${1:-${OUT:-$DEFAULT_OUT}}
mkdir -p "$OUT_DIR"
PYTHON=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-$(nproc)}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

# The README's install command, unless SKIP_BUILD=1, logged to OUT_DIR/build.log; sets build_s
# (wall seconds) and build_cpu (", U + S CPU-s"); returns 1, with the errors shown, if it fails.
build_in_place() {
  build_s=0
  build_cpu=""
  [ "${SKIP_BUILD:-0}" = 1 ] && return 0
  local start rc
  start=$(date +%s)
  # Each log line starts with its Unix time: how long each module and kernel took to build.
  # `time` adds the compilers' CPU seconds (user + system) to the log's last line.
  TIMEFORMAT='build: %R s wall, %U + %S CPU-s'
  { time {
    $PYTHON -m pip install --no-build-isolation --no-deps -v -e . 2>&1 |
      while IFS= read -r line; do printf '%(%s)T %s\n' -1 "$line"; done > "$OUT_DIR/build.log"
    rc=${PIPESTATUS[0]}
  }; } 2>> "$OUT_DIR/build.log"
  build_cpu=$(tail -1 "$OUT_DIR/build.log" | sed -n 's/.*wall, \(.*\)/, \1/p')
  if [ "$rc" != 0 ]; then
    grep -E "error|FAILED" "$OUT_DIR/build.log" | head -40
    tail -20 "$OUT_DIR/build.log"
    echo "BUILD FAILED (log: $OUT_DIR/build.log)"
    return 1
  fi
  build_s=$(( $(date +%s) - start ))
}

# With EXPORT_BUILD=1, the built modules into OUT_DIR/build.tgz, to reuse on another machine with
# the same torch (tar xzf in the repository root, then SKIP_BUILD=1).
export_build() {
  [ "${EXPORT_BUILD:-0}" = 1 ] || return 0
  tar czf "$OUT_DIR/build.tgz" cutlass_ops/_C*.so cutlass_ops/_build_info.py
}
