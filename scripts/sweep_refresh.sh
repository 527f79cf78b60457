#!/usr/bin/env bash
# Time again the sweep candidates whose launch changed, on this GPU, then refit and judge the
# model: the steps that bring one device's stored sweep and calibration up to date, in one
# command that can be cut off and run again (every sweep step resumes where it stopped).
#
#   scripts/sweep_refresh.sh [OUT_DIR]   # OUT_DIR (default: $OUT, else ./sweep_refresh_out) gets
#                                        # sweep.tgz (this device's sweep folder), calib.tgz and the logs
#
# Environment:
#   JOBS         what to time again, space-separated DTYPES:DECOMPOSITION:KERNELS items
#                (default: CUTLASS 2.x's stream-K in every precision, then its 16-bit split-K:
#                "all:stream-k:cutlass2x_* bf16,f16:split-k:cutlass2x_*"; empty: none)
#   REPRICED     a file `python -m cutlass_ops prices` wrote for this device's sweep before a
#                launch changed: first time again the candidates this build prices otherwise
#                (`sweep --retime-repriced`); empty to skip
#   CONTRADICTED another device's sweep folder: also time again the candidates it contradicts by
#                over 2x (`sweep --retime-contradicted`); empty to skip
#   DEADLINE     seconds from the start after which no sweep step starts a new problem
#                (default 420, for a call limited to 600 s with the fit after it)
#   SKIP_BUILD=1 reuse the build in place; EXPORT_BUILD=1 also write the built modules to
#                OUT_DIR/build.tgz; SKIP_FIT=1 time only
# The sweep files are written in the tree (benchmarks/sweep/<device>/); unpack sweep.tgz there
# before the next call so that it resumes from them.
set -uo pipefail
DEFAULT_OUT=sweep_refresh_out
source "$(dirname "$0")/gpu_env.sh"
JOBS=${JOBS-"all:stream-k:cutlass2x_* bf16,f16:split-k:cutlass2x_*"}
REPRICED=${REPRICED:-}
CONTRADICTED=${CONTRADICTED:-}
DEADLINE=${DEADLINE:-420}
start=$(date +%s)
left() { echo $(( DEADLINE - ($(date +%s) - start) )); }

build_in_place || exit 1
echo "build: ${build_s} s${build_cpu}"
export_build
folder=$($PYTHON -c "from cutlass_ops.calibration import sweep; print(sweep.device_folder('.').name)") || exit 1
echo "device folder: $folder"

if [ -n "$REPRICED" ]; then
  $PYTHON -m cutlass_ops sweep --retime-repriced "$REPRICED" --time-limit "$(left)" --no-progress 2>&1 |
    tee -a "$OUT_DIR/sweep.log" | tail -n 20
fi
set -f  # the kernel patterns in JOBS are for the sweep, not the shell
for job in $JOBS; do
  IFS=: read -r dtypes decomposition kernels <<< "$job"
  [ "$(left)" -gt 0 ] || { echo "deadline: $job not started"; break; }
  dtype_arg=(); [ "$dtypes" != all ] && dtype_arg=(--dtype "$dtypes")
  $PYTHON -m cutlass_ops sweep "${dtype_arg[@]}" --retime "$kernels" --decomposition "$decomposition" \
    --time-limit "$(left)" --no-progress 2>&1 | tee -a "$OUT_DIR/sweep.log" | tail -n 20
done
set +f
if [ -n "$CONTRADICTED" ] && [ "$(left)" -gt 0 ]; then
  $PYTHON -m cutlass_ops sweep --retime-contradicted "$CONTRADICTED" --time-limit "$(left)" --no-progress 2>&1 |
    tee -a "$OUT_DIR/sweep.log" | tail -n 20
fi
tar czf "$OUT_DIR/sweep.tgz" "benchmarks/sweep/$folder"

if [ "${SKIP_FIT:-0}" != 1 ]; then
  $PYTHON -m cutlass_ops fit "benchmarks/sweep/$folder" 2>&1 | tail -n 8
  $PYTHON -m cutlass_ops evaluate "benchmarks/sweep/$folder" \
    --json "benchmarks/sweep/$folder/evaluation.json" 2>&1 | head -n 3
  tar czf "$OUT_DIR/calib.tgz" cutlass_ops/calibration/data "benchmarks/sweep/$folder/evaluation.json"
fi
echo "sweep_refresh: $(( $(date +%s) - start )) s"
