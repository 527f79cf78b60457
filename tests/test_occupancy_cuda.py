"""CTAs per SM from CUDA's occupancy calculator (`_C.kernel_occupancy`, `sweep --occupancy`):
what the cost model reads in place of its register estimate once the sweep has recorded it."""

import pytest
import torch

import cutlass_ops
from cutlass_ops.calibration import fit, store
from cutlass_ops.calibration import sweep as sweep_files

pytestmark = pytest.mark.gpu
_C = cutlass_ops._extension._C


def test_every_cutlass2x_kernel_here_reports_an_occupancy_its_threads_and_smem_allow():
    index = torch.cuda.current_device()
    cc, sm_count, smem_optin = _C.device_desc(index)[:3]
    occupancy = _C.kernel_occupancy(index)
    here = [k for k in _C.kernels()
            if k["family"] == "cutlass2x" and k["min_cc"] <= cc and (k["max_cc"] is None or cc <= k["max_cc"])
            and k["smem_bytes"] <= smem_optin]
    assert here and {k["name"] for k in here} <= set(occupancy)
    for k in here:
        n = occupancy[k["name"]]
        assert 1 <= n <= 2048 // k["threads"], (k["name"], n)
        if k["smem_bytes"] > 0:
            assert n <= (smem_optin + 1024) // (k["smem_bytes"] + 1024), (k["name"], n, k["smem_bytes"])
    # The 64x64x32 two-stage tiles: 128 threads, 16 KiB of shared memory; ptxas (nvcc 13.0) gives
    # them 124-128 registers, so at most 4 CTAs fit an SM's 64 Ki registers.
    two_stage = [n for name, n in occupancy.items() if "_64x64x32_2s_" in name]
    assert two_stage and max(two_stage) <= 4, two_stage


def test_sweep_records_it_and_the_planner_reads_it(tmp_path):
    occupancy = sweep_files.record_occupancy(tmp_path)
    assert occupancy == _C.kernel_occupancy(torch.cuda.current_device())
    assert sweep_files.read_occupancy(tmp_path) == occupancy
    name = next(n for n in occupancy if "_64x64x32_" in n and "bf16" in n)
    kernel = next(k for k in _C.kernels() if k["name"] == name)
    layouts = kernel["layout_a"][0] + kernel["layout_b"][0]
    desc = _C.device_desc(torch.cuda.current_device())
    cc = desc[0]
    row = ("bf16", layouts, [46, 429, 26136], [8, 8, 8])
    cands = [["in-place", name, "split-k", 64]]
    try:
        for ctas in (1, 4):
            store.install({"capability": [cc // 10, cc % 10], "sm_count": desc[1], "copies": fit.COPY_DEFAULTS,
                           "kernels": {}, "ctas_per_sm": {name: ctas}}, "test")
            rounds = _C.cost_rows(*row, cands, tuple(desc))[0][0][1]
            assert rounds == -(-7 * 64 // (desc[1] * ctas))
    finally:
        _C.clear_calibrations()
        store.install_shipped()
