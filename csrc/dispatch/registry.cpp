#include "dispatch/registry.h"

#include <cstring>
#include <stdexcept>
#include <unordered_set>

namespace cutlass_ops {

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add_table(const KernelTable& table) {
  const std::string module = table.module ? table.module : "?";
  if (table.abi_version != kKernelAbiVersion) {
    throw std::invalid_argument("kernel module " + module + " was built for kernel ABI " +
                                std::to_string(table.abi_version) + ", but cutlass_ops._C expects " +
                                std::to_string(kKernelAbiVersion) + "; rebuild the extension");
  }
  if (table.config_table_hash != configs::kConfigTableHash) {
    throw std::invalid_argument("kernel module " + module +
                                " was built from another kernel table (csrc/kernel_table.py) than cutlass_ops._C, so "
                                "its config ids would name other configs; rebuild the extension");
  }
  std::unordered_set<std::string_view> names;
  for (const KernelInfo* k : all_) names.insert(k->name);
  for (int i = 0; i < table.count; ++i) {
    const KernelInfo& k = table.kernels[i];
    if (k.config_id == configs::ConfigId::kNone || k.config_id >= configs::ConfigId::kCount) {
      throw std::invalid_argument("kernel module " + module + " registers '" + k.name +
                                  "' without a config id from the kernel table (csrc/kernel_table.py)");
    }
    if (!names.insert(k.name).second) {
      throw std::invalid_argument("kernel module " + module + " registers '" + k.name +
                                  "', a name already registered; kernel names must be unique");
    }
  }
  if (all_.size() + table.count > static_cast<size_t>(kMaxRegisteredKernels)) {
    throw std::invalid_argument("kernel module " + module + " would take the registry past " +
                                std::to_string(kMaxRegisteredKernels) + " kernels");
  }
  for (int i = 0; i < table.count; ++i) {
    const KernelInfo* k = &table.kernels[i];
    index_.emplace(k, static_cast<int>(all_.size()));
    all_.push_back(k);
    by_class_[class_index(k->precision, k->layout_a, k->layout_b)].push_back(k);
  }
  modules_.push_back(module);
}

const KernelInfo* Registry::find(std::string_view name) const {
  for (const KernelInfo* k : all_) {
    if (name == k->name) return k;
  }
  return nullptr;
}

}  // namespace cutlass_ops
