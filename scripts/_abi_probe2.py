"""Device-only probe 2: does any extension op that raises with an integer in its message crash torch 2.11?"""
import os, subprocess, sys, textwrap
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SRC = [os.path.join(ROOT, "csrc", d, f) for d in ("ops", "dispatch") for f in sorted(os.listdir(os.path.join(ROOT, "csrc", d))) if f.endswith(".cpp")]
MINI = r'''
#include <torch/library.h>
#include <ATen/core/Tensor.h>
at::Tensor f_int(const at::Tensor& a) { TORCH_CHECK(a.dim() == 2, "f: got ", a.dim(), "-D tensor"); return a; }
at::Tensor f_lit(const at::Tensor& a) { TORCH_CHECK(a.dim() == 2, "f: got a non-matrix"); return a; }
at::Tensor f_val(const at::Tensor& a) { TORCH_CHECK_VALUE(a.dim() == 2, "f: got ", a.dim()); return a; }
TORCH_LIBRARY(probe_mini, m) { m.def("f_int(Tensor a) -> Tensor"); m.def("f_lit(Tensor a) -> Tensor"); m.def("f_val(Tensor a) -> Tensor"); }
TORCH_LIBRARY_IMPL(probe_mini, CompositeExplicitAutograd, m) { m.impl("f_int", &f_int); m.impl("f_lit", &f_lit); m.impl("f_val", &f_val); }
'''
PRE = f"""
import sys, torch
from torch.utils.cpp_extension import load, load_inline
def ours(cflags):
    return load("probe_ours" + str(abs(hash(cflags)) % 1000), sources={SRC!r}, extra_include_paths=[{os.path.join(ROOT, 'csrc')!r}], extra_cflags=cflags.split(), with_cuda=True, verbose=False)
def mini():
    load_inline("probe_mini_ext", cpp_sources={MINI!r}, is_python_module=False, verbose=False)
def show(f):
    try:
        f(); print("  no error", flush=True)
    except Exception as e:
        print("  ", type(e).__name__, str(e).splitlines()[0][:100], flush=True)
"""
TESTS = {
    "mini f_lit (torch.ops)": "mini(); show(lambda: torch.ops.probe_mini.f_lit(torch.empty(4)))",
    "mini f_int (torch.ops)": "mini(); show(lambda: torch.ops.probe_mini.f_int(torch.empty(4)))",
    "mini f_val (torch.ops)": "mini(); show(lambda: torch.ops.probe_mini.f_val(torch.empty(4)))",
    "ours -O2 torch.ops meta 1-D": "ours('-O2'); show(lambda: torch.ops.cutlass_ops.mm(torch.empty(4, device='meta'), torch.empty(4, 5, device='meta')))",
    "ours -O2 pybind explain 1-D": "m = ours('-O2'); show(lambda: m.explain(torch.empty(4), torch.empty(4, 5), None, '', 90, 132, 232448))",
    "ours -O2 torch.ops dtype": "ours('-O2'); show(lambda: torch.ops.cutlass_ops.mm(torch.empty(3, 4, device='meta'), torch.empty(4, 5, device='meta', dtype=torch.float64)))",
    "ours -O2 direct dispatch (torch._C._dispatch_call_boxed?)": "ours('-O2'); op = torch._C._dispatch_find_schema_or_throw('cutlass_ops::mm', ''); show(lambda: torch._C._dispatch_call_boxed(op, torch.empty(4, device='meta'), torch.empty(4, 5, device='meta')))",
}
for name, body in TESTS.items():
    r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", PRE + body], capture_output=True, text=True, timeout=400)
    print(f"[{name}] rc={r.returncode}\n{r.stdout.rstrip()}", flush=True)
    if r.returncode != 0:
        print(textwrap.indent(r.stderr[-600:], "   ! "), flush=True)
# Native backtrace of the crash, if any.
gdb = subprocess.run(["timeout", "150", "cuda-gdb", "-q", "-batch", "-ex", "set pagination off", "-ex", "run", "-ex", "bt 25",
                      "--args", sys.executable, "-c", PRE + TESTS["ours -O2 torch.ops meta 1-D"]], capture_output=True, text=True)
out = gdb.stdout + gdb.stderr
i = out.find("SIGSEGV")
print("[cuda-gdb]", out[i - 200:i + 4000] if i >= 0 else out[-1500:])
