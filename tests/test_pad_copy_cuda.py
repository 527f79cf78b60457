"""The staging copies (csrc/ops/pad_copy.cpp, its kernels in pad_copy_kernels.cu), run directly through cutlass_ops._C.padded_copies:
every destination element is its source's or zero, bit for bit, at 2-, 4- and 8-byte elements,
any strides, offsets and margins; and each copy lands on the kernel, and each pair on the number
of launches, that pad_copy.cpp's rules give (the cost model counts those launches)."""

from __future__ import annotations

import math

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import cutlass_ops

_C = cutlass_ops._extension._C

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

DTYPES = [torch.bfloat16, torch.float32, torch.float64]  # elements of 2, 4 and 8 bytes
BITS = {torch.bfloat16: torch.int16, torch.float32: torch.int32, torch.float64: torch.int64}
REALIGNED, ELEMENTS, TILE = "rows_kernel realigned", "rows_kernel elements", "tile_kernel"


def source(rows: int, cols: int, dtype, form: str, offset: int = 0) -> torch.Tensor:
    """rows x cols of random values: "rows" (contiguous rows, `offset` elements into a storage that
    ends where the matrix does), "strided" (every other column of a wider matrix) or "columns"
    (column-major)."""
    if form == "rows":
        base = torch.randn(offset + rows * cols, device="cuda").to(dtype)
        return base[offset:].view(rows, cols)
    if form == "strided":
        return torch.randn(rows, 2 * cols, device="cuda").to(dtype)[:, ::2]
    assert form == "columns"
    return torch.randn(cols, rows, device="cuda").to(dtype).t()


def destination(rows: int, cols: int, dtype, form: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(dst, its storage), all NaN: "aligned" (row-major from a 16-byte boundary), "columns"
    (column-major) or "offset" (row-major, one element into its storage)."""
    if form == "columns":
        storage = torch.full((rows * cols,), math.nan, dtype=dtype, device="cuda")
        return storage.view(cols, rows).t(), storage
    start = 1 if form == "offset" else 0
    storage = torch.full((start + rows * cols,), math.nan, dtype=dtype, device="cuda")
    return storage[start:].view(rows, cols), storage


def padded(src: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    expected = torch.zeros(rows, cols, dtype=src.dtype, device=src.device)
    expected[: src.size(0), : src.size(1)] = src
    return expected


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.view(BITS[t.dtype])


def kernels_launched(pairs) -> list[str]:
    """The copy kernels the call launches, as REALIGNED, ELEMENTS or TILE."""
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        _C.padded_copies(pairs)
        torch.cuda.synchronize()
    names = []
    for event in prof.events():
        if event.device_type.name != "CUDA":
            continue
        if "tile_kernel" in event.name:
            names.append(TILE)
        elif "rows_kernel" in event.name:
            names.append(REALIGNED if ", true>" in event.name else ELEMENTS)
    return names


def assert_padded_copy(src, dst, storage, context):
    assert torch.equal(bits(dst), bits(padded(src, *dst.shape))), context
    outside = torch.ones_like(storage, dtype=torch.bool)
    outside.as_strided(dst.shape, dst.stride(), dst.storage_offset()).fill_(False)
    assert storage[outside].isnan().all(), f"{context}: wrote outside dst"


# (source form, offset, destination form, the kernel pad_copy.cpp picks)
ONE_COPY = [
    ("rows", 0, "aligned", REALIGNED),
    ("rows", 1, "aligned", REALIGNED),     # rows start off 16 bytes: two words shifted into place
    ("strided", 0, "aligned", ELEMENTS),  # no contiguous rows: element loads
    ("columns", 0, "aligned", TILE),      # a transposing copy
    ("rows", 1, "columns", TILE),         # a column-major destination (D copied out)
    ("rows", 1, "offset", TILE),          # a destination off 16 bytes (D copied out)
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("src_form,offset,dst_form,kernel", ONE_COPY, ids=lambda v: str(v))
@pytest.mark.parametrize("rows,cols,dst_rows,dst_cols", [(37, 45, 40, 48), (5, 3, 5, 16), (64, 64, 64, 64)])
def test_one_copy(dtype, src_form, offset, dst_form, kernel, rows, cols, dst_rows, dst_cols):
    src = source(rows, cols, dtype, src_form, offset)
    dst, storage = destination(dst_rows, dst_cols, dtype, dst_form)
    launched = kernels_launched([(src, dst)])
    assert_padded_copy(src, dst, storage, f"{dtype} {rows}x{cols} {src_form}+{offset} -> {dst_rows}x{dst_cols} {dst_form}")
    assert launched == [kernel], launched


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("offset", [1, 3, 5, 7])
def test_a_source_that_ends_where_its_storage_does(dtype, offset):
    """The last runs of an unaligned source would need a word past the storage: they load element
    by element, and the copy is still exact."""
    rows, cols = 9, 13
    src = source(rows, cols, dtype, "rows", offset)
    assert src.untyped_storage().nbytes() == (offset + rows * cols) * src.element_size()
    dst, storage = destination(rows, 16, dtype, "aligned")
    assert kernels_launched([(src, dst)]) == [REALIGNED]
    assert_padded_copy(src, dst, storage, f"{dtype} offset {offset}")


# Two copies: (first source, second source, the launches): one launch where both run on one
# kernel (two straight copies always do: element loads serve both), two where one transposes.
TWO_COPIES = [
    ("rows", "rows", [REALIGNED]),
    ("rows", "strided", [ELEMENTS]),
    ("columns", "columns", [TILE]),
    ("rows", "columns", [REALIGNED, TILE]),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("first,second,launches", TWO_COPIES, ids=lambda v: str(v))
def test_two_copies_and_their_launches(dtype, first, second, launches):
    a = source(33, 70, dtype, first, offset=1)
    b = source(70, 19, dtype, second, offset=3)
    a_dst, a_storage = destination(40, 80, dtype, "aligned")
    b_dst, b_storage = destination(80, 32, dtype, "aligned")
    launched = kernels_launched([(a, a_dst), (b, b_dst)])
    assert_padded_copy(a, a_dst, a_storage, f"{dtype} A ({first})")
    assert_padded_copy(b, b_dst, b_storage, f"{dtype} B ({second})")
    assert sorted(launched) == sorted(launches), launched


def test_copies_of_two_element_sizes_launch_apart():
    a = source(20, 30, torch.bfloat16, "rows", offset=1)
    b = source(30, 10, torch.float32, "rows", offset=1)
    a_dst, a_storage = destination(24, 32, torch.bfloat16, "aligned")
    b_dst, b_storage = destination(32, 12, torch.float32, "aligned")
    assert kernels_launched([(a, a_dst), (b, b_dst)]) == [REALIGNED, REALIGNED]
    assert_padded_copy(a, a_dst, a_storage, "bf16 A")
    assert_padded_copy(b, b_dst, b_storage, "f32 B")
    # Apart, each keeps its own kernel: the straight copy with contiguous rows its realigned
    # loads, beside a strided one on element loads.
    c = source(30, 10, torch.float32, "strided")
    c_dst, c_storage = destination(32, 12, torch.float32, "aligned")
    assert kernels_launched([(a, a_dst), (c, c_dst)]) == [REALIGNED, ELEMENTS]
    assert_padded_copy(a, a_dst, a_storage, "bf16 A beside a strided f32 B")
    assert_padded_copy(c, c_dst, c_storage, "strided f32 B")


def test_an_empty_destination_launches_nothing():
    src = source(0, 5, torch.float32, "rows")
    dst, _ = destination(0, 8, torch.float32, "aligned")
    assert kernels_launched([(src, dst)]) == []


@pytest.mark.parametrize("pairs,message", [
    (lambda: [], "one or two"),
    (lambda: [(source(2, 2, torch.float32, "rows"), destination(2, 4, torch.float32, "aligned")[0])] * 3, "one or two"),
    (lambda: [(source(4, 4, torch.float32, "rows"), destination(3, 4, torch.float32, "aligned")[0])],
     "a 4x4 src does not fit a 3x4 dst"),
    (lambda: [(source(2, 2, torch.float32, "rows"), destination(2, 4, torch.float64, "aligned")[0])], "one dtype"),
])
def test_bad_pairs_are_refused(pairs, message):
    with pytest.raises(ValueError, match=message):
        _C.padded_copies(pairs())
