"""The GPU tests parametrize over kernel lists drawn for the GPU they run on; an empty list
skips its test without a word ("got empty parameter set"). Drawn here for an SM90 and an SM80
without a GPU, each list the build should fill is filled, so a registry or capability-filter
bug cannot turn a GPU test into a silent skip."""

import pytest
import torch

import cutlass_ops
import test_bmm_kernels_cuda as bmm_kernels
import test_dispatch_cuda as dispatch
import test_handwritten_wgmma_cuda as step6
import test_kernels_cuda as kernels
import test_splitk_sum_cuda as splitk_sum

built_sm90 = any(k.family == "cutlass3x" for k in cutlass_ops.list_kernels())
built_sm80 = any(k.family == "cutlass2x" for k in cutlass_ops.list_kernels())


@pytest.mark.skipif(not built_sm80, reason="built without the CUTLASS 2.x kernels")
@pytest.mark.parametrize("cap", [(8, 0), pytest.param((9, 0), marks=pytest.mark.skipif(
    not built_sm90, reason="built without the sm90a kernels"))])
def test_the_gpu_tests_kernel_lists_are_filled(cap):
    every = kernels.kernels_here(cap)
    assert len(every) > 50
    assert bmm_kernels.kernels_here(True, cap) and bmm_kernels.kernels_here(False, cap)
    cases = dispatch.decomposition_cases(cap)
    assert {d for _, d, _ in cases} == {"data-parallel", "split-k", "stream-k"}
    assert dispatch.sixteen_bit_cutlass2x_kernels(cap)
    if cap == (9, 0):
        assert dispatch.stream_k_only_kernels(cap)  # float32 and float64 on DMMA: built for SM90 only
        assert splitk_sum.sum_kernels(cap)
        assert dispatch.tile_order_kernels(cap)
        assert {k.family for k in every} == {"cutlass2x", "cutlass3x", "handwritten"}


@pytest.mark.skipif(torch.cuda.is_available(), reason="drawn for the GPU there")
def test_without_a_gpu_the_lists_are_empty_not_an_error():
    assert kernels.kernels_here() == [] and dispatch.decomposition_cases() == []


@pytest.mark.skipif(not built_sm90, reason="built without the sm90a kernels")
def test_every_step6_build_has_its_edge_shape_tests():
    """The TMA + WGMMA step's builds (bar the fused ones, which the linear tests run) are exactly
    those its edge-shape tests name: a build registered without them, or a name there that no
    build has (a silent skip), fails here."""
    builds = {k.name for k in cutlass_ops.list_kernels()
              if "_6_wgmma_tma" in k.name and not k.name.endswith("_bias_act")}
    assert builds == set(step6.NAMES + step6.COL_A)
