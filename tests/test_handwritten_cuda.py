"""The hand-written GEMM ladder (csrc/handwritten): every step forced with kernel= on edge
shapes, in each dtype it declares, against a float64 reference relative to torch.mm's own
error. Each kernel must take every shape whose alignment it declares: shapes are rounded up
to the declared alignment, and the planner may refuse a kernel only for alignment."""

import pytest
import torch

import cutlass_ops
from mm_testing import KERNEL_DTYPES, assert_matches_reference, check_forced, matrix, round_up

pytestmark = pytest.mark.gpu


# The ladder, step by step: the dtypes each step is registered for.
LADDER = {
    "1_naive": ["f32"],
    "2_smem_tiled": ["f32"],
    "3_register_blocked": ["f32"],
    "4_wmma": ["f16", "bf16"],
    "5_mma_sync": ["f16", "bf16"],
}

# (M, N, K): ones, primes, one-off-a-tile, smaller than a tile, several tiles with ragged
# edges, and K long enough to cross many pipeline stages. M is never rounded (no kernel
# constrains it); N and K are rounded up to each kernel's alignment below.
SHAPES = [
    (1, 1, 1),
    (97, 83, 71),
    (1, 4096, 1),
    (4095, 17, 129),
    (255, 257, 33),
    (7, 8, 15),
    (127, 129, 31),
    (128, 256, 32),
    (129, 257, 65),
    (3, 1000, 1023),
    (1000, 3, 200),
    (513, 520, 1000),
]


def kernel_name(dtype: str, step: str) -> str:
    return f"handwritten_sm80_{dtype}_rr_{step}"


LADDER_NAMES = {kernel_name(dtype, step) for step, dtypes in LADDER.items() for dtype in dtypes}


def ladder_kernels():
    """Steps 1-5 as registered and runnable here (later, arch-specific steps have their own tests)."""
    if not torch.cuda.is_available():
        return []
    return [k for k in cutlass_ops.list_kernels(torch.cuda.get_device_capability()) if k.name in LADDER_NAMES]


def test_the_whole_ladder_is_registered():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    names = {k.name for k in ladder_kernels()}
    assert LADDER_NAMES <= names, f"missing: {sorted(LADDER_NAMES - names)}"
    for k in ladder_kernels():
        assert k.family == "handwritten" and k.layouts == "rr", k
        assert k.min_capability == (8, 0) and k.max_capability is None, k


@pytest.mark.parametrize("kernel", ladder_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda s: str(s))
def test_forced_kernel_on_edge_shapes(kernel, m, n, k):
    align_k = kernel.alignment[0]  # K is row-major A's contiguous extent
    align_n = max(kernel.alignment[1], kernel.alignment[2])  # N is B's and the output's
    m, n, k = m, round_up(n, align_n), round_up(k, align_k)
    dtype = KERNEL_DTYPES[kernel.dtype]
    # Declared alignment met: the planner must accept the kernel.
    assert cutlass_ops.explain(matrix(m, k, dtype), matrix(k, n, dtype), kernel=kernel.name).kernel == kernel.name
    check_forced(kernel, m, n, k)


@pytest.mark.parametrize("kernel", ladder_kernels(), ids=lambda k: k.name)
def test_forced_kernel_with_padded_leading_dims(kernel):
    """Leading dims larger than the rows, by a multiple of the alignment: the kernels must
    use lda/ldb/ldd, not the sizes."""
    align = max(kernel.alignment)
    check_forced(kernel, 333, round_up(200, align), round_up(77, align), ld_pad=3 * align)


@pytest.mark.parametrize("kernel", ladder_kernels(), ids=lambda k: k.name)
@pytest.mark.parametrize("m,n,k", [(97, 83, 71), (4095, 17, 129), (1, 1, 1), (255, 257, 33)], ids=str)
def test_unaligned_shapes_are_refused_only_for_alignment(kernel, m, n, k):
    """Shapes off the declared alignment: either the kernel runs them correctly, or the
    planner refuses it naming the alignment -- and only when the kernel declared one."""
    dtype = KERNEL_DTYPES[kernel.dtype]
    a, b = matrix(m, k, dtype), matrix(k, n, dtype)
    try:
        cutlass_ops.explain(a, b, kernel=kernel.name)
    except ValueError as refusal:
        assert "aligned to" in str(refusal), refusal
        assert max(kernel.alignment) > 1, f"{kernel.name} declares alignment 1 yet was refused: {refusal}"
        return
    check_forced(kernel, m, n, k)


@pytest.mark.parametrize("kernel", ladder_kernels(), ids=lambda k: k.name)
def test_forced_kernel_on_a_storage_offset(kernel):
    """An offset of the kernel's alignment keeps every pointer aligned; the kernel must
    read from the view's start, not the storage's."""
    align = max(kernel.alignment)
    check_forced(kernel, 65, round_up(72, align), round_up(40, align), offset=align)


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("m,n,k", [(4096, 4096, 4096), (97, 83, 71), (1, 4096, 1), (255, 264, 40), (8, 8, 8)],
                         ids=str)
def test_auto_dispatch_picks_only_the_product_ladder_steps(dtype, m, n, k):
    """Dispatch may pick a hand-written kernel the cost model prices (step 3, step 6 and the
    two few-row streaming kernels, role "product"); steps 1, 2, 4 and 5 are teaching kernels
    and only run when forced."""
    a, b = matrix(m, k, KERNEL_DTYPES[dtype]), matrix(k, n, KERNEL_DTYPES[dtype])
    plan = cutlass_ops.explain(a, b)
    roles = {k.name: k.role for k in cutlass_ops.list_kernels()}
    if (plan.kernel or "").startswith("handwritten"):
        assert roles[plan.kernel] == "product", plan
    result = cutlass_ops.mm(a, b)
    assert_matches_reference(result, a, b, dtype, context=f"auto via {plan.kernel}")
