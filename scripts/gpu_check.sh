#!/usr/bin/env bash
# Build cutlass_ops, run the whole test suite (GPU tests included) and the quick benchmark,
# in one command, on any machine with an NVIDIA GPU, nvcc and a CUDA build of torch.
#
#   scripts/gpu_check.sh [OUT_DIR]      # logs and JSON go to OUT_DIR (default: $OUT, else ./gpu_check_out)
#
# Environment: MAX_JOBS (default: all cores), PYTHON (default: python3), PYTEST_ARGS (extra
# pytest arguments), SKIP_BUILD=1 (reuse the build in place), SKIP_BENCH=1, EXPORT_BUILD=1
# (also write the built modules to OUT_DIR/build.tgz).
set -uo pipefail
DEFAULT_OUT=gpu_check_out
source "$(dirname "$0")/gpu_env.sh"

gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit \
  --format=csv,noheader 2>&1 || echo "nvidia-smi unavailable")

build_in_place || exit 1

{ echo "nvidia-smi: $gpu"; $PYTHON -m cutlass_ops info 2>&1; } | tee "$OUT_DIR/info.txt"

start=$(date +%s)
# shellcheck disable=SC2086
$PYTHON -m pytest tests -q -p no:cacheprovider ${PYTEST_ARGS:-} > "$OUT_DIR/pytest.log" 2>&1
test_rc=$?
test_s=$(( $(date +%s) - start ))
grep -E "^(FAILED|ERROR)" "$OUT_DIR/pytest.log" | head -40

bench_rc=0
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  $PYTHON -m cutlass_ops bench --quick --no-progress --json "$OUT_DIR/bench.json" --plot "$OUT_DIR/quick.png" \
    > "$OUT_DIR/bench.txt" 2>&1
  bench_rc=$?
fi

demo_rc=0
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  $PYTHON -m cutlass_ops demo > "$OUT_DIR/demo.txt" 2>&1
  demo_rc=$?
fi

export_build

echo
echo "=== gpu_check summary ($(date -u +%Y-%m-%dT%H:%MZ)) ==="
echo "$gpu"
echo "build: ${build_s}s with MAX_JOBS=$MAX_JOBS${build_cpu}"
echo "tests (${test_s}s, exit $test_rc): $(tail -1 "$OUT_DIR/pytest.log")"
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  echo "demo (exit $demo_rc):"
  cat "$OUT_DIR/demo.txt"
  echo "bench --quick (exit $bench_rc):"
  sed -n '/^shape/,$p' "$OUT_DIR/bench.txt" | tail -n 40
fi
[ "$test_rc" = 0 ] && [ "$bench_rc" = 0 ] && [ "$demo_rc" = 0 ]
