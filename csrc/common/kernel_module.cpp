// The Python face of a kernel module (cutlass_ops._C_sm90, _C_sm80, ...): a module with
// one attribute, `kernel_table`, a PyCapsule holding this module's KernelTable.
// cutlass_ops/__init__.py hands the capsule to cutlass_ops._C, which merges it into the
// Registry. Compiled into every kernel module; TORCH_EXTENSION_NAME (set by
// torch.utils.cpp_extension from the extension's name) names the module.
#include <Python.h>

#include <vector>

#include "dispatch/kernel.h"

#ifndef TORCH_EXTENSION_NAME
#error "TORCH_EXTENSION_NAME must name the kernel module (setup.py sets it)"
#endif
#define CUTLASS_OPS_CONCAT_(a, b) a##b
#define CUTLASS_OPS_CONCAT(a, b) CUTLASS_OPS_CONCAT_(a, b)
#define CUTLASS_OPS_STR_(a) #a
#define CUTLASS_OPS_STR(a) CUTLASS_OPS_STR_(a)

namespace cutlass_ops {

std::vector<KernelInfo>& module_kernel_list() {
  static std::vector<KernelInfo> kernels;  // filled by KernelRegistrars during static init
  return kernels;
}

}  // namespace cutlass_ops

namespace {

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    CUTLASS_OPS_STR(TORCH_EXTENSION_NAME),
    "cutlass_ops kernel module: exposes `kernel_table` for cutlass_ops._C to register.",
    -1,
    nullptr,
};

cutlass_ops::KernelTable table;

}  // namespace

PyMODINIT_FUNC CUTLASS_OPS_CONCAT(PyInit_, TORCH_EXTENSION_NAME)(void) {
  PyObject* module = PyModule_Create(&module_def);
  if (module == nullptr) return nullptr;
  const auto& kernels = cutlass_ops::module_kernel_list();
  table = {cutlass_ops::kKernelAbiVersion, static_cast<int>(kernels.size()), kernels.data(),
           CUTLASS_OPS_STR(TORCH_EXTENSION_NAME), cutlass_ops::configs::kConfigTableHash};
  PyObject* capsule = PyCapsule_New(&table, cutlass_ops::kKernelTableCapsuleName, nullptr);
  if (capsule == nullptr || PyModule_AddObject(module, "kernel_table", capsule) < 0) {
    Py_XDECREF(capsule);
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
