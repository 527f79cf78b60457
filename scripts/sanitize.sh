#!/usr/bin/env bash
# compute-sanitizer (memcheck) over the curated edge-case set of `python -m cutlass_ops fuzz`:
# 200 matmuls over every dtype, layout pair, out= form and alignment-breaking offset. Exits
# non-zero on any report.
#
#   scripts/sanitize.sh [OUT_DIR]     # logs go to OUT_DIR (default: $OUT, else ./sanitize_out)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=${1:-${OUT:-sanitize_out}}
mkdir -p "$OUT_DIR"
PYTHON=${PYTHON:-python3}
# Every allocation a real cudaMalloc, so memcheck sees an access past the end of a tensor
# (inside the caching allocator's pools it would land in memory that is still allocated).
export PYTORCH_NO_CUDA_MEMORY_CACHING=1

status=0
for tool in ${SANITIZER_TOOLS:-memcheck}; do
  compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 50 \
    $PYTHON -m cutlass_ops fuzz --curated > "$OUT_DIR/sanitize_$tool.log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT_DIR/sanitize_$tool.log" | tail -1)
  result=$(grep -E "^fuzz \(" "$OUT_DIR/sanitize_$tool.log" | tail -1)
  echo "$tool: exit $rc; $result; ${summary:-no summary}"
  if [ "$rc" != 0 ] || ! echo "$summary" | grep -qE " 0 (errors|hazards)"; then
    status=1
    grep -E "^=========" "$OUT_DIR/sanitize_$tool.log" | head -40
  fi
done
exit $status
