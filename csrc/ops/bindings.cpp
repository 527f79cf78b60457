// cutlass_ops._C's Python functions: kernel registration, the kernel list, and the
// planner's explanation of a call. The ops themselves are reached through torch.ops.
#include <torch/csrc/Exceptions.h>
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <pybind11/gil_safe_call_once.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <thread>
#include <utility>

#include "dispatch/cost_model.h"
#include "dispatch/plan_cache.h"
#include "dispatch/planner.h"
#include "dispatch/registry.h"
#include "dispatch/tuning.h"
#include "ops/aten_override.h"
#include "ops/device_info.h"
#include "ops/epilogue.h"
#include "ops/mm.h"
#include "ops/op_handles.h"
#include "ops/pad_copy.h"
#include "ops/settings.h"
#include "ops/stats.h"
#include "ops/sweep.h"

namespace py = pybind11;

namespace cutlass_ops {
namespace {

const char* layout_word(Layout l) { return l == Layout::kRowMajor ? "row" : "col"; }

py::dict kernel_dict(const KernelInfo& k) {
  py::dict d;
  d["name"] = k.name;
  d["family"] = origin_name(k.origin);
  d["role"] = k.role == Role::kTeaching ? "teaching" : "product";
  d["config"] = k.config();
  d["precision"] = precision_name(k.precision);
  d["layout_a"] = layout_word(k.layout_a);
  d["layout_b"] = layout_word(k.layout_b);
  d["align"] = py::make_tuple(k.align_a, k.align_b, k.align_d);
  d["min_cc"] = k.min_cc;
  d["max_cc"] = k.max_cc == kAnyNewerCC ? py::object(py::none()) : py::object(py::int_(k.max_cc));
  d["tile"] = py::make_tuple(k.tile_m, k.tile_n, k.tile_k);
  d["smem_bytes"] = k.smem_bytes;
  py::list decompositions;
  for (Decomposition x : {Decomposition::kDataParallel, Decomposition::kSplitK, Decomposition::kStreamK}) {
    if (k.decompositions & decomposition_bit(x)) decompositions.append(decomposition_name(x));
  }
  d["decompositions"] = decompositions;
  d["orders_tiles"] = k.orders_tiles;
  d["max_m"] = k.max_m == INT64_MAX ? py::object(py::none()) : py::object(py::int_(k.max_m));
  d["max_n"] = k.max_n == INT64_MAX ? py::object(py::none()) : py::object(py::int_(k.max_n));
  d["n_multiple"] = k.n_multiple;
  d["math"] = math_class_name(k.math);
  d["mainloop"] = mainloop_name(k.mainloop);
  d["cluster"] = py::make_tuple(k.cluster_m, k.cluster_n);
  d["stages"] = k.stages;
  d["threads"] = k.threads;
  d["persistent"] = k.persistent;
  d["pingpong"] = k.pingpong;
  d["swap_ab"] = k.swap_ab;
  d["fuses_epilogue"] = k.fuses_epilogue;
  d["batched"] = k.batched;
  d["max_batch"] = k.max_batch == INT64_MAX ? py::object(py::none()) : py::object(py::int_(k.max_batch));
  d["presplit"] = k.pass == OperandPass::kPresplit;
  d["slice_sum"] = slice_sum_name(k.slice_sum);
  d["split_k_in_workspace"] = slices_meet_in_float32(k.slice_sum);
  d["reduction_ctas_per_tile"] = k.reduction_ctas_per_tile;
  return d;
}

Decomposition parse_decomposition(const std::string& name) {
  for (Decomposition x : {Decomposition::kDataParallel, Decomposition::kSplitK, Decomposition::kStreamK}) {
    if (name == decomposition_name(x)) return x;
  }
  throw py::value_error("unknown decomposition '" + name + "'; expected data-parallel, split-k or stream-k");
}

Raster parse_raster(const std::string& name) {
  for (Raster x : {Raster::kHeuristic, Raster::kAlongM, Raster::kAlongN}) {
    if (name == raster_name(x)) return x;
  }
  throw py::value_error("unknown raster order '" + name + "'; expected heuristic, along-m or along-n");
}

Precision parse_precision(const std::string& name) {
  for (int i = 0; i < kNumPrecisions; ++i) {
    if (name == precision_name(static_cast<Precision>(i))) return static_cast<Precision>(i);
  }
  throw py::value_error("unknown precision '" + name + "'");
}

Layout parse_layout(const std::string& name) {
  if (name == "row") return Layout::kRowMajor;
  if (name == "col") return Layout::kColMajor;
  throw py::value_error("unknown layout '" + name + "'; expected row or col");
}

// ---- the cost model, for cutlass_ops.calibration (fitting and judging it on sweep rows) ----

DeviceDesc parse_device(const py::tuple& t) {
  if (t.size() != 5) throw py::value_error("device must be (cc, sm_count, smem_optin_bytes, clock_mhz, dram_gbps)");
  return DeviceDesc{t[0].cast<int>(), t[1].cast<int>(), t[2].cast<int>(), t[3].cast<int>(), t[4].cast<int>()};
}

Variant parse_variant(const std::string& name) {
  for (int i = 0; i < kNumVariants; ++i) {
    if (name == variant_name(static_cast<Variant>(i))) return static_cast<Variant>(i);
  }
  throw py::value_error("unknown variant '" + name + "'");
}

const KernelInfo& registered_kernel(const std::string& name) {
  const KernelInfo* k = Registry::instance().find(name);
  if (k == nullptr) throw py::value_error("kernel '" + name + "' is not in this build");
  return *k;
}

Candidate parse_candidate(const py::sequence& t) {
  if (py::len(t) < 4) throw py::value_error("a candidate is (variant, kernel, decomposition, splits)");
  return Candidate{parse_variant(t[0].cast<std::string>()), &registered_kernel(t[1].cast<std::string>()),
                   parse_decomposition(t[2].cast<std::string>()), t[3].cast<int>()};
}

// A normalised plan as a sweep row records it: the kernel's view of the problem (M, N, K after
// any transposition), A's and B's layouts ("rc"), and the three alignments.
// A sweep row's problem: `batch` > 1 is a batch of contiguous matrices (bmm), none shared.
Plan plan_from_row(const std::string& precision, const std::string& layouts, const py::sequence& problem,
                   const py::sequence& align, int64_t batch = 1) {
  if (layouts.size() != 2 || py::len(problem) != 3 || py::len(align) != 3) {
    throw py::value_error("a row's problem is (m, n, k), its layouts two letters, its alignments three numbers");
  }
  Plan p;
  p.precision = parse_precision(precision);
  p.m = problem[0].cast<int64_t>();
  p.n = problem[1].cast<int64_t>();
  p.k = problem[2].cast<int64_t>();
  const Layout la = layouts[0] == 'r' ? Layout::kRowMajor : Layout::kColMajor;
  const Layout lb = layouts[1] == 'r' ? Layout::kRowMajor : Layout::kColMajor;
  p.a = {la, la == Layout::kRowMajor ? std::max<int64_t>(1, p.k) : std::max<int64_t>(1, p.m), align[0].cast<int>()};
  p.b = {lb, lb == Layout::kRowMajor ? std::max<int64_t>(1, p.n) : std::max<int64_t>(1, p.k), align[1].cast<int>()};
  p.d = {Layout::kRowMajor, std::max<int64_t>(1, p.n), align[2].cast<int>()};
  if (batch > 1) {
    p.batch = batch;
    p.a.batch_stride = std::max<int64_t>(1, p.m * p.k);
    p.b.batch_stride = std::max<int64_t>(1, p.k * p.n);
    p.d.batch_stride = std::max<int64_t>(1, p.m * p.n);
  }
  return p;
}

py::tuple candidate_tuple(const Candidate& c) {
  return py::make_tuple(variant_name(c.variant), c.kernel->name, decomposition_name(c.decomposition), c.splits);
}

// For each candidate of a sweep row: (features, (padded_mb, transpose_mb, launches),
// predicted us, calibrated).
py::list cost_rows(const std::string& precision, const std::string& layouts, const py::sequence& problem,
                   const py::sequence& align, const py::list& candidates, const py::tuple& device, int64_t batch) {
  const Plan p = plan_from_row(precision, layouts, problem, align, batch);
  const DeviceDesc dev = parse_device(device);
  const Calibration* cal = calibration_for(dev);
  py::list out;
  for (const auto& item : candidates) {
    const Candidate c = parse_candidate(item.cast<py::sequence>());
    const PlainCost cost = plain_cost(p, c, dev, cal);
    py::tuple ft(static_cast<size_t>(kNumFeatures));
    for (int i = 0; i < kNumFeatures; ++i) ft[i] = cost.features[i];
    // The eleven-term model's time (kernel and copies), before the residual factor: what fit.predict computes.
    const CopyWork& w = cost.copies;
    out.append(py::make_tuple(ft, py::make_tuple(w.padded_mb, w.transpose_mb, w.launches),
                              cost.prediction.kernel_us + cost.prediction.copy_us, cost.prediction.calibrated));
  }
  return out;
}

// The model's ranking of every candidate for a problem, cheapest first:
// (candidate, predicted us, kernel us, copy us, calibrated).
py::list rank_problem(const std::string& precision, const std::string& layouts, const py::sequence& problem,
                      const py::sequence& align, const py::tuple& device, int64_t batch) {
  const Plan p = plan_from_row(precision, layouts, problem, align, batch);
  py::list out;
  for (const Ranked& r : rank_candidates(p, parse_device(device))) {
    out.append(py::make_tuple(candidate_tuple(r.candidate), r.prediction.us, r.prediction.kernel_us,
                              r.prediction.copy_us, r.prediction.calibrated, r.prediction.residual));
  }
  return out;
}

py::list property_coefficients_list(const std::string& kernel, const py::tuple& device) {
  const DeviceDesc dev = parse_device(device);
  const Coefficients c = property_coefficients(registered_kernel(kernel), dev, calibration_for(dev));
  return py::cast(std::vector<double>(c.begin(), c.end()));
}

// Plans every problem on each of `threads` threads at once (each thread the whole list, in its
// own order), through choose_kernel and its plan cache, and returns the first thread's choices,
// after checking that every thread chose the same.
py::list plan_many(const py::list& problems, const py::tuple& device, int threads) {
  std::vector<Plan> plans;
  for (const auto& item : problems) {
    const auto t = item.cast<py::tuple>();
    plans.push_back(plan_from_row(t[0].cast<std::string>(), t[1].cast<std::string>(), t[2].cast<py::sequence>(),
                                  t[3].cast<py::sequence>()));
  }
  const DeviceDesc dev = parse_device(device);
  std::vector<std::vector<Candidate>> chosen(std::max(1, threads), std::vector<Candidate>(plans.size()));
  {
    py::gil_scoped_release no_gil;
    std::vector<std::thread> pool;
    for (int t = 0; t < std::max(1, threads); ++t) {
      pool.emplace_back([&, t] {
        for (size_t j = 0; j < plans.size(); ++j) {
          const size_t i = (j + t * 7) % plans.size();
          Plan p = plans[i];
          choose_kernel(p, dev);
          chosen[t][i] = p.kernel == nullptr ? Candidate{} : candidate_of(p);
        }
      });
    }
    for (std::thread& th : pool) th.join();
  }
  py::list out;
  for (size_t i = 0; i < plans.size(); ++i) {
    for (const auto& per_thread : chosen) {
      if (!(per_thread[i] == chosen[0][i])) throw std::runtime_error("threads planned the same problem differently");
    }
    out.append(chosen[0][i].kernel == nullptr ? py::object(py::none()) : py::object(candidate_tuple(chosen[0][i])));
  }
  return out;
}

// residual: {"bandwidth": log2 units, "shrink": weight, "layout_distance": squared log2 units,
// "fields": {kernel name: {"variant/decomposition": [m, n, k, slices, layouts (0-3), log residual,
// ...]}}}. One list handed for several kernels (a config's layouts and float16/bfloat16 twins
// share their residuals) becomes one field.
void add_residuals(Calibration& cal, const py::dict& residual) {
  cal.residual_bandwidth = residual["bandwidth"].cast<double>();
  cal.residual_shrink = residual["shrink"].cast<double>();
  cal.residual_layout_distance = residual["layout_distance"].cast<double>();
  cal.batched_bandwidth =
      residual.contains("batched_bandwidth") ? residual["batched_bandwidth"].cast<double>() : cal.residual_bandwidth;
  cal.batched_shrink = residual.contains("batched_shrink") ? residual["batched_shrink"].cast<double>() : cal.residual_shrink;
  if (!(cal.residual_bandwidth > 0) || !(cal.batched_bandwidth > 0) || !(cal.residual_shrink >= 0) ||
      !(cal.batched_shrink >= 0) || !(cal.residual_layout_distance >= 0)) {
    throw py::value_error("residual bandwidths must be > 0, shrinks and layout_distance >= 0");
  }
  // One field per list of points (the 16-bit twins and the layouts of a config share theirs), per
  // bandwidth.
  std::map<std::pair<PyObject*, bool>, std::shared_ptr<const ResidualField>> made;
  for (const auto& [name, slots] : residual["fields"].cast<py::dict>()) {
    KernelResiduals& fields = cal.residuals[name.cast<std::string>()];
    for (const auto& [slot, values] : slots.cast<py::dict>()) {
      const std::string key = slot.cast<std::string>();
      const size_t bar = key.find('/');
      if (bar == std::string::npos) throw py::value_error("residual slot '" + key + "': expected variant/decomposition");
      // "batched/data-parallel": the field batched calls read (cost_model.h kBatchedResidualSlot).
      const int index = key == "batched/data-parallel"
                            ? kBatchedResidualSlot
                            : residual_slot(parse_variant(key.substr(0, bar)), parse_decomposition(key.substr(bar + 1)));
      const bool batched = index == kBatchedResidualSlot;
      auto found = made.find({values.ptr(), batched});
      if (found == made.end()) {
        const auto flat = values.cast<std::vector<double>>();
        constexpr size_t kPerPoint = 6;
        if (flat.size() % kPerPoint != 0) {
          throw py::value_error("residual slot '" + key + "': expected 6 numbers per point");
        }
        std::vector<ResidualField::Point> points;
        for (size_t i = 0; i < flat.size(); i += kPerPoint) {
          if (!(flat[i] >= 1 && flat[i + 1] >= 1 && flat[i + 2] >= 1 && flat[i + 3] >= 1) ||
              !(flat[i + 4] >= 0 && flat[i + 4] <= 3) || !std::isfinite(flat[i + 5])) {
            throw py::value_error("residual slot '" + key + "': extents must be >= 1, layouts 0-3, residuals finite");
          }
          points.push_back({{static_cast<float>(std::log2(flat[i])), static_cast<float>(std::log2(flat[i + 1])),
                             static_cast<float>(std::log2(flat[i + 2])), static_cast<float>(std::log2(flat[i + 3]))},
                            static_cast<float>(flat[i + 5]),
                            static_cast<int>(flat[i + 4])});
        }
        found = made.emplace(std::make_pair(values.ptr(), batched),
                             std::make_shared<const ResidualField>(
                                 std::move(points), batched ? cal.batched_bandwidth : cal.residual_bandwidth))
                    .first;
      }
      fields[index] = found->second;
    }
  }
}

void add_calibration_dict(int cc, int sm_count, const std::string& source, const py::dict& copies,
                          const py::dict& kernels, const py::object& residual, const py::object& ctas_per_sm,
                          int dram_gbps, const py::object& split_counts) {
  Calibration cal;
  cal.cc = cc;
  cal.sm_count = sm_count;
  cal.dram_gbps = dram_gbps;
  cal.source = source;
  cal.copies.us_per_mb = copies["us_per_mb"].cast<double>();
  cal.copies.transpose_us_per_mb = copies["transpose_us_per_mb"].cast<double>();
  cal.copies.launch_us = copies["launch_us"].cast<double>();
  // kernels: {name: {decomposition: [constants]}}
  for (const auto& [name, by_decomposition] : kernels) {
    const std::string kernel = name.cast<std::string>();
    KernelConstants constants;
    for (const auto& [decomposition, values] : by_decomposition.cast<py::dict>()) {
      const int d = static_cast<int>(parse_decomposition(decomposition.cast<std::string>()));
      const auto list = values.cast<std::vector<double>>();
      if (list.size() != kNumFeatures) {
        throw py::value_error("kernel '" + kernel + "': expected " + std::to_string(kNumFeatures) + " constants, got " +
                              std::to_string(list.size()));
      }
      for (int i = 0; i < kNumFeatures; ++i) {
        if (!(list[i] >= 0)) throw py::value_error("kernel '" + kernel + "': constants must be >= 0");
        constants.by_decomposition[d][i] = list[i];
      }
      constants.fitted[d] = true;
    }
    cal.kernels.emplace(kernel, constants);
  }
  // split_counts: {name: [slice counts its split-K runs were timed at]}, for the kernels with
  // split-K constants (those of a kernel without constants mean nothing: skipped); the others
  // keep every count (KernelConstants::measured).
  if (!split_counts.is_none()) {
    for (const auto& [name, counts] : split_counts.cast<py::dict>()) {
      const std::string kernel = name.cast<std::string>();
      const auto it = cal.kernels.find(kernel);
      if (it == cal.kernels.end()) continue;
      it->second.split_counts_recorded = true;
      for (const int s : counts.cast<std::vector<int>>()) {
        if (s < 2 || s > kMaxRecordedSplits) {
          throw py::value_error("split_counts of '" + kernel + "': " + std::to_string(s) + " is not in 2.." +
                                std::to_string(kMaxRecordedSplits));
        }
        it->second.split_counts.set(s);
      }
    }
  }
  if (!residual.is_none()) add_residuals(cal, residual.cast<py::dict>());
  if (!ctas_per_sm.is_none()) {
    for (const auto& [name, value] : ctas_per_sm.cast<py::dict>()) {
      const int n = value.cast<int>();
      if (n < 1) throw py::value_error("ctas_per_sm of '" + name.cast<std::string>() + "' must be >= 1");
      cal.ctas_per_sm.emplace(name.cast<std::string>(), n);
    }
  }
  add_calibration(std::move(cal));
}

// The tuning table as plain dicts, for cutlass_ops/tuning.py to save.
py::list tuning_entries() {
  py::list out;
  for (const auto& [key, entry] : TuningTable::instance().entries()) {
    py::dict d;
    d["precision"] = precision_name(key.precision);
    d["layout_a"] = layout_word(key.layout_a);
    d["layout_b"] = layout_word(key.layout_b);
    d["align"] = py::make_tuple(key.align_a, key.align_b, key.align_d);
    d["cc"] = key.cc;
    d["sm_count"] = key.sm_count;
    d["mnk"] = py::make_tuple(key.m, key.n, key.k);
    d["variant"] = variant_name(entry.variant);
    d["kernel"] = entry.kernel->name;
    d["decomposition"] = decomposition_name(entry.decomposition);
    d["splits"] = entry.splits;
    d["raster"] = raster_name(entry.tile_order.raster);
    d["swizzle"] = entry.tile_order.swizzle;
    d["us"] = entry.microseconds;
    out.append(d);
  }
  return out;
}

// Adds one saved entry. Raises ValueError (the loader warns and skips it) for a kernel this
// build lacks or a decomposition the kernel does not support.
TuningKey parse_tuning_key(const py::dict& d) {
  TuningKey key;
  key.precision = parse_precision(d["precision"].cast<std::string>());
  key.layout_a = parse_layout(d["layout_a"].cast<std::string>());
  key.layout_b = parse_layout(d["layout_b"].cast<std::string>());
  const auto align = d["align"].cast<std::tuple<int, int, int>>();
  key.align_a = static_cast<int8_t>(std::get<0>(align));
  key.align_b = static_cast<int8_t>(std::get<1>(align));
  key.align_d = static_cast<int8_t>(std::get<2>(align));
  key.cc = d["cc"].cast<int>();
  key.sm_count = d["sm_count"].cast<int>();
  const auto mnk = d["mnk"].cast<std::tuple<int64_t, int64_t, int64_t>>();
  key.m = std::get<0>(mnk);
  key.n = std::get<1>(mnk);
  key.k = std::get<2>(mnk);
  return key;
}

void tuning_remove(const py::dict& d) { TuningTable::instance().erase(parse_tuning_key(d)); }

void tuning_insert(const py::dict& d) {
  const TuningKey key = parse_tuning_key(d);
  TuningEntry entry;
  const std::string name = d["kernel"].cast<std::string>();
  entry.kernel = Registry::instance().find(name);
  if (entry.kernel == nullptr) throw py::value_error("kernel '" + name + "' is not in this build");
  entry.decomposition = parse_decomposition(d["decomposition"].cast<std::string>());
  if ((entry.kernel->decompositions & decomposition_bit(entry.decomposition)) == 0) {
    throw py::value_error("kernel '" + name + "' does not support " + decomposition_name(entry.decomposition));
  }
  entry.splits = d["splits"].cast<int>();
  if (entry.splits < 1) throw py::value_error("splits must be >= 1, got " + std::to_string(entry.splits));
  // Tile order: absent in tables written before it existed (the default order).
  if (d.contains("raster")) entry.tile_order.raster = parse_raster(d["raster"].cast<std::string>());
  if (d.contains("swizzle")) entry.tile_order.swizzle = d["swizzle"].cast<int>();
  const int swizzle = entry.tile_order.swizzle;
  if (swizzle != 1 && swizzle != 2 && swizzle != 4 && swizzle != 8) {
    throw py::value_error("swizzle must be 1, 2, 4 or 8, got " + std::to_string(swizzle));
  }
  if (!entry.tile_order.is_default() && !entry.kernel->orders_tiles) {
    throw py::value_error("kernel '" + name + "' does not take a tile order");
  }
  entry.microseconds = d.contains("us") ? d["us"].cast<double>() : 0.0;
  // The operands the kernel reads: the variant's (staging makes both row-major but for a
  // column-major B; the K-major copy makes B column-major).
  entry.variant = d.contains("variant") ? parse_variant(d["variant"].cast<std::string>()) : Variant::kInPlace;
  Layout la = key.layout_a, lb = key.layout_b;
  if (entry.variant == Variant::kStagedRowB || entry.variant == Variant::kStagedColB) la = Layout::kRowMajor;
  if (entry.variant == Variant::kStagedRowB) lb = Layout::kRowMajor;
  if (entry.variant == Variant::kStagedColB || entry.variant == Variant::kKmajorB) lb = Layout::kColMajor;
  const bool precision_ok = key.precision == entry.kernel->precision ||
                            (key.precision == Precision::kTF32x3 && entry.kernel->precision == Precision::kF32);
  if (!precision_ok || la != entry.kernel->layout_a || lb != entry.kernel->layout_b) {
    throw py::value_error("kernel '" + name + "' does not compute this entry's precision and layouts");
  }
  TuningTable::instance().insert(key, entry);
}

py::dict operand_dict(const OperandPlan& o) {
  py::dict d;
  d["layout"] = layout_word(o.layout);
  d["ld"] = o.ld;
  d["align"] = o.align;
  d["batch_stride"] = o.batch_stride;
  return d;
}

// cutlass_ops.mm's path into C++: one pybind call and one typed dispatcher call, instead of
// torch.ops' boxed argument matching. HANDLE_TH_ERRORS turns TORCH_WARN into Python warnings
// and c10 errors into the Python exception types torch itself raises (torch 2.11's torch.ops
// path prints C++ warnings to stderr instead).
at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2, std::optional<at::Tensor> out,
              const std::optional<std::string>& kernel) {
  HANDLE_TH_ERRORS
  py::gil_scoped_release no_gil;
  if (out) {
    if (kernel) {
      op::mm_with_kernel_out().call(self, mat2, *kernel, *out);
    } else {
      op::mm_out().call(self, mat2, *out);
    }
    return *out;
  }
  return kernel ? op::mm_with_kernel().call(self, mat2, *kernel) : op::mm().call(self, mat2);
  END_HANDLE_TH_ERRORS_PYBIND
}

// A Python number as torch reads a Scalar argument (pybind11 has no caster for c10::Scalar).
at::Scalar to_scalar(const py::handle& value) {
  PyObject* v = value.ptr();
  if (PyBool_Check(v)) return at::Scalar(v == Py_True);
  if (PyLong_Check(v)) return at::Scalar(static_cast<int64_t>(PyLong_AsLongLong(v)));
  if (PyComplex_Check(v)) return at::Scalar(c10::complex<double>(PyComplex_RealAsDouble(v), PyComplex_ImagAsDouble(v)));
  if (PyFloat_Check(v)) return at::Scalar(PyFloat_AsDouble(v));
  if (THPVariable_Check(v)) return THPVariable_Unpack(v).item();
  if (PyIndex_Check(v)) return at::Scalar(static_cast<int64_t>(py::cast<py::int_>(value)));  // numpy integers
  if (PyNumber_Check(v)) return at::Scalar(py::cast<double>(py::float_(py::reinterpret_borrow<py::object>(value))));
  throw py::type_error(std::string("expected a number for beta and alpha, got ") + Py_TYPE(v)->tp_name);
}

// The out= calls of addmm, bmm and baddbmm from Python, for the same reason: torch's resize
// warning for a wrong-shaped out reaches Python as a UserWarning, as it does from torch.bmm.
at::Tensor addmm_out(const at::Tensor& input, const at::Tensor& mat1, const at::Tensor& mat2, const py::object& beta_in,
                     const py::object& alpha_in, at::Tensor out) {
  HANDLE_TH_ERRORS
  const at::Scalar beta = to_scalar(beta_in), alpha = to_scalar(alpha_in);
  py::gil_scoped_release no_gil;
  op::addmm_out().call(input, mat1, mat2, beta, alpha, out);
  return out;
  END_HANDLE_TH_ERRORS_PYBIND
}

at::Tensor bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor out) {
  HANDLE_TH_ERRORS
  py::gil_scoped_release no_gil;
  op::bmm_out().call(self, mat2, out);
  return out;
  END_HANDLE_TH_ERRORS_PYBIND
}

at::Tensor baddbmm_out(const at::Tensor& input, const at::Tensor& batch1, const at::Tensor& batch2,
                       const py::object& beta_in, const py::object& alpha_in, at::Tensor out) {
  HANDLE_TH_ERRORS
  const at::Scalar beta = to_scalar(beta_in), alpha = to_scalar(alpha_in);
  py::gil_scoped_release no_gil;
  op::baddbmm_out().call(input, batch1, batch2, beta, alpha, out);
  return out;
  END_HANDLE_TH_ERRORS_PYBIND
}

void register_kernel_table(py::capsule capsule) {
  auto* table = static_cast<const KernelTable*>(PyCapsule_GetPointer(capsule.ptr(), kKernelTableCapsuleName));
  if (table == nullptr) throw py::error_already_set();
  try {
    Registry::instance().add_table(*table);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

py::list kernels() {
  py::list out;
  for (const KernelInfo* k : Registry::instance().all()) out.append(kernel_dict(*k));
  return out;
}

// {name: CTAs per SM} of the kernels that report it and run on `device` (check_device; made
// current while CUTLASS's host code asks CUDA's occupancy calculator).
py::dict kernel_occupancy(int device) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
  const DeviceDesc& d = cuda_device_desc(device);
  py::dict out;
  for (const KernelInfo* k : Registry::instance().all()) {
    if (k->max_active_ctas == nullptr || check_device(*k, d) != Rejection::kNone) continue;
    const int n = k->max_active_ctas();
    if (n < 1) {
      const cudaError_t error = cudaGetLastError();  // clear it: a later launch check must not report it
      // No error and no CTA: the kernel cannot run on this device at all (a defect to report,
      // not a figure to record).
      throw std::runtime_error(std::string("kernel_occupancy: CUDA's occupancy calculator failed for ") + k->name +
                               " (" + (error == cudaSuccess ? std::string("no CTA of it fits an SM")
                                                            : std::string(cudaGetErrorString(error))) +
                               ")");
    }
    out[py::str(k->name)] = n;
  }
  return out;
}

py::tuple device_desc(int device) {
  const DeviceDesc& d = cuda_device_desc(device);
  return py::make_tuple(d.cc, d.sm_count, d.smem_optin_bytes, d.clock_mhz, d.dram_gbps);
}

py::dict explain(const at::Tensor& self, const at::Tensor& mat2, const std::optional<at::Tensor>& out,
                 const std::string& kernel, const py::tuple& device_tuple) {
  const DeviceDesc device = parse_device(device_tuple);
  const Explanation e = explain_call(self, mat2, out ? &*out : nullptr, kernel, device);
  py::dict d;
  d["supported_dtype"] = e.supported_dtype;
  d["empty_integer_product"] = e.empty_integer_product;
  if (!e.supported_dtype) return d;
  const Plan& p = e.plan;
  d["precision"] = precision_name(p.precision);
  d["kernel"] = p.kernel ? py::object(py::str(p.kernel->name)) : py::object(py::none());
  d["reason"] = p.reason;
  d["forced_rejection"] = e.forced_rejection;
  d["copy_a"] = p.copy_a;
  d["copy_b"] = p.copy_b;
  d["out_via_temp"] = p.d_via_temp;
  d["transposed"] = p.transposed;
  d["staged"] = p.staged;
  d["copy_b_kmajor"] = p.copy_b_kmajor;
  d["decomposition"] = decomposition_name(p.decomposition);
  d["splits"] = p.splits;
  d["raster"] = raster_name(p.tile_order.raster);
  d["swizzle"] = p.tile_order.swizzle;
  d["tuned"] = p.tuned;
  d["problem"] = py::make_tuple(p.m, p.n, p.k);
  d["batch"] = p.batch;
  d["a"] = operand_dict(p.a);
  d["b"] = operand_dict(p.b);
  d["d"] = operand_dict(p.d);
  py::list ranked;
  for (const Ranked& r : e.ranked) {
    ranked.append(py::make_tuple(candidate_tuple(r.candidate), r.prediction.us, r.prediction.kernel_us,
                                 r.prediction.copy_us, r.prediction.calibrated, r.prediction.residual));
  }
  d["ranked"] = ranked;
  py::list refused;
  for (const auto& [k, why] : e.refused) refused.append(py::make_tuple(k->name, why));
  d["refused"] = refused;
  d["calibration"] = e.calibration;
  py::dict key;  // the tuning table's key for this call (tuning_insert takes it with a candidate)
  const Plan& n = e.normalized;
  key["precision"] = precision_name(n.precision);
  key["layout_a"] = layout_word(n.a.layout);
  key["layout_b"] = layout_word(n.b.layout);
  key["align"] = py::make_tuple(n.a.align, n.b.align, n.d.align);
  key["cc"] = device.cc;
  key["sm_count"] = device.sm_count;
  key["mnk"] = py::make_tuple(n.m, n.n, n.k);
  d["tuning_key"] = key;
  return d;
}


py::dict sweep_problem_dict(const at::Tensor& self, const at::Tensor& mat2, const at::Tensor& out, int reps,
                            float give_up, int passes, const std::vector<std::string>& only) {
  SweepRow row;
  {
    HANDLE_TH_ERRORS
    py::gil_scoped_release no_gil;
    row = sweep_problem(self, mat2, out, reps, give_up, passes, only);
    END_HANDLE_TH_ERRORS_PYBIND
  }
  const Plan& p = row.normalized;
  py::dict d;
  d["precision"] = precision_name(p.precision);
  d["problem"] = py::make_tuple(p.m, p.n, p.k);
  d["batch"] = p.batch;
  d["layouts"] = std::string{layout_letter(p.a.layout), layout_letter(p.b.layout)};
  d["align"] = py::make_tuple(p.a.align, p.b.align, p.d.align);
  d["transposed"] = p.transposed;
  d["torch_us"] = row.torch_us;
  d["planner"] = row.planner_index;
  py::list timed;
  for (const TimedCandidate& t : row.timed) {
    timed.append(py::make_tuple(candidate_tuple(t.candidate), t.median_us < 0 ? py::object(py::none())
                                                                              : py::object(py::float_(t.median_us)),
                                t.reps));
  }
  d["candidates"] = timed;
  return d;
}

// The staging copies (pad_copy.h) run directly, for the tests: one or two (src, dst) pairs, each
// dst filled with its src in the top-left corner and zeros elsewhere, in the launches the
// planner's staged calls make.
void padded_copies_pairs(const std::vector<std::pair<at::Tensor, at::Tensor>>& pairs) {
  TORCH_CHECK_VALUE(pairs.size() == 1 || pairs.size() == 2, "padded_copies: one or two (src, dst) pairs, not ",
                    pairs.size());
  std::vector<PaddedCopy> copies;
  for (const auto& [src, dst] : pairs) {
    TORCH_CHECK_VALUE(src.dim() == 2 && dst.dim() == 2, "padded_copies: matrices, not ", src.dim(), "-D and ",
                      dst.dim(), "-D");
    TORCH_CHECK_VALUE(src.is_cuda() && dst.device() == src.device() && dst.scalar_type() == src.scalar_type(),
                      "padded_copies: src and dst on one CUDA device with one dtype, not ", src.device(), " ",
                      src.scalar_type(), " and ", dst.device(), " ", dst.scalar_type());
    TORCH_CHECK_VALUE(src.size(0) <= dst.size(0) && src.size(1) <= dst.size(1), "padded_copies: a ", src.size(0),
                      "x", src.size(1), " src does not fit a ", dst.size(0), "x", dst.size(1), " dst");
    copies.push_back({src, dst});
  }
  padded_copies(copies.data(), static_cast<int>(copies.size()));
}

py::dict stats_dict() {
  const stats::Snapshot s = stats::snapshot();
  py::dict kernels;
  for (const auto& [name, calls] : s.kernels) kernels[py::str(name)] = calls;
  py::dict ops;
  for (const auto& [name, calls] : s.ops) ops[py::str(name)] = calls;
  py::dict d;
  d["kernels"] = kernels;
  d["ops"] = ops;
  d["torch_complex"] = s.torch_complex;
  d["torch_no_kernel"] = s.torch_no_kernel;
  d["no_work"] = s.no_work;
  return d;
}

void set_aten_override_handled(bool enabled) {
  HANDLE_TH_ERRORS
  set_aten_override(enabled);  // torch warns about overriding a kernel: a Python warning here
  END_HANDLE_TH_ERRORS_PYBIND
}

}  // namespace
// The log sink (ops/stats.h): each line to the "cutlass_ops" logger of Python's logging at INFO,
// from whichever thread ran the call. Past the interpreter's end, or if logging raises, stderr.
void log_to_python(const char* line) {
  if (Py_IsInitialized() == 0) {
    std::fprintf(stderr, "[cutlass_ops] %s\n", line);
    return;
  }
  py::gil_scoped_acquire gil;
  try {
    // The logger's bound `info`, looked up once (logging.getLogger returns one object per name
    // for the process's life), under pybind11's GIL-safe once: a plain function-local static
    // could deadlock against a thread holding the GIL, and be released after the interpreter.
    PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> storage;
    storage
        .call_once_and_store_result(
            [] { return py::module_::import("logging").attr("getLogger")("cutlass_ops").attr("info"); })
        .get_stored()(line);
  } catch (py::error_already_set& error) {
    error.discard_as_unraisable(__func__);
    std::fprintf(stderr, "[cutlass_ops] %s\n", line);
  }
}

}  // namespace cutlass_ops

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "cutlass_ops entry module: the op registrations, the kernel registry and the planner.";
  m.attr("KERNEL_ABI_VERSION") = cutlass_ops::kKernelAbiVersion;
  // The cost model's smooth-maximum exponent (cost_model.h), which the fit's vectorised copy of
  // kernel_time_us reads from here.
  m.attr("SMOOTH_MAX_POWER") = cutlass_ops::kSmoothMaxPower;
  m.def("mm", &cutlass_ops::mm, "The cutlass_ops::mm family through the dispatcher (cutlass_ops.mm's fast path).",
        py::arg("self"), py::arg("mat2"), py::arg("out"), py::arg("kernel"));
  m.def(
      "mm_epilogue",
      [](const at::Tensor& self, const at::Tensor& mat2, std::optional<at::Tensor> bias, double alpha,
         const std::string& activation, const std::string& kernel) {
        // activation(alpha * self @ mat2 + bias) on one named kernel (or the planner's, kernel
        // ""): how the tests run each fused-epilogue kernel. No autograd.
        cutlass_ops::check_mm_call(self, mat2, nullptr);
        cutlass_ops::EpilogueRequest epilogue;
        epilogue.alpha = alpha;
        epilogue.activation = cutlass_ops::parse_activation(activation);
        if (bias) {
          TORCH_CHECK_VALUE(bias->dim() == 1 && bias->size(0) == mat2.size(1) && bias->dtype() == self.dtype(),
                            "mm_epilogue: bias must have mat2's ", mat2.size(1), " columns and the operands' dtype");
          epilogue.bias = bias->contiguous();
        }
        return cutlass_ops::mm_epilogue_cuda(self, mat2, nullptr, epilogue, kernel);
      },
      "The product with an epilogue on a named kernel (tests).", py::arg("self"), py::arg("mat2"), py::arg("bias"),
      py::arg("alpha"), py::arg("activation"), py::arg("kernel"));
  m.def(
      "bmm_with_kernel",
      [](const at::Tensor& self, const at::Tensor& mat2, const std::string& kernel) {
        // self @ mat2 for a batch on one named kernel: how the tests run each batched kernel on a
        // batch. No autograd; ValueError if the kernel cannot run the batch.
        return cutlass_ops::bmm_with_kernel_cuda(self, mat2, kernel);
      },
      py::arg("self"), py::arg("mat2"), py::arg("kernel"));
  m.def("addmm_out", &cutlass_ops::addmm_out, "cutlass_ops::addmm.out through the dispatcher (warnings as Python's).",
        py::arg("input"), py::arg("mat1"), py::arg("mat2"), py::arg("beta"), py::arg("alpha"), py::arg("out"));
  m.def("bmm_out", &cutlass_ops::bmm_out, "cutlass_ops::bmm.out through the dispatcher (warnings as Python's).",
        py::arg("self"), py::arg("mat2"), py::arg("out"));
  m.def("baddbmm_out", &cutlass_ops::baddbmm_out, "cutlass_ops::baddbmm.out through the dispatcher (warnings as Python's).",
        py::arg("input"), py::arg("batch1"), py::arg("batch2"), py::arg("beta"), py::arg("alpha"), py::arg("out"));
  m.def("padded_copies", &cutlass_ops::padded_copies_pairs,
        "For the tests: the staging copies (csrc/ops/pad_copy.h) on one or two (src, dst) pairs.", py::arg("pairs"));
  m.def("stats", &cutlass_ops::stats_dict, "Call counters since import or the last reset.");
  m.def("reset_stats", &cutlass_ops::stats::reset, "Zero the call counters.");
  m.def("set_logging", &cutlass_ops::stats::set_logging,
        "Log every call's decision (to the \"cutlass_ops\" logger of Python's logging, at INFO).");
  cutlass_ops::stats::set_log_sink(&cutlass_ops::log_to_python);
  m.def("logging", &cutlass_ops::stats::logging, "Whether calls are logged.");
  m.def("set_aten_override", &cutlass_ops::set_aten_override_handled,
        "Register (or remove) cutlass_ops as the CUDA kernel of aten::mm and aten::mm.out.");
  m.def("aten_override_enabled", &cutlass_ops::aten_override_enabled);
  m.def("register_kernel_table", &cutlass_ops::register_kernel_table,
        "Add a kernel module's `kernel_table` capsule to the registry.");
  m.def("kernels", &cutlass_ops::kernels, "Every registered kernel, as dicts.");
  m.def("registered_modules", [] { return cutlass_ops::Registry::instance().modules(); },
        "Kernel modules whose tables are registered.");
  m.def("device_desc", &cutlass_ops::device_desc, "(compute capability * 10, SM count, opt-in smem bytes, peak SM clock MHz, DRAM GB/s).");
  m.def("set_fp32_mode", [](const std::string& mode) {
        try {
          cutlass_ops::settings::set_fp32_mode(cutlass_ops::settings::parse_fp32_mode(mode));
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
      }, "float32 without TF32: 'ieee' (default) or '3xtf32'.");
  m.def("fp32_mode", [] { return cutlass_ops::settings::fp32_mode_name(cutlass_ops::settings::fp32_mode()); });
  m.def("set_autotune", &cutlass_ops::settings::set_autotune, "Time new problems on every eligible kernel.");
  m.def("autotune_enabled", &cutlass_ops::settings::autotune);
  m.def("tuning_entries", &cutlass_ops::tuning_entries, "The tuning table, as dicts.");
  m.def("tuning_insert", &cutlass_ops::tuning_insert, "Add one tuning-table entry (a dict as tuning_entries gives).");
  m.def("tuning_remove", &cutlass_ops::tuning_remove, "Remove the entry for a key (a dict as tuning_entries gives).");
  m.def("tuning_clear", [] { cutlass_ops::TuningTable::instance().clear(); }, "Empty the tuning table.");
  m.def("tuning_size", [] { return cutlass_ops::TuningTable::instance().size(); });
  m.def("sweep_problem", &cutlass_ops::sweep_problem_dict,
        "Time torch.mm (torch.bmm for 3-D operands) and every candidate the planner could run for self @ mat2 "
        "(the profiling sweep).",
        py::arg("self"), py::arg("mat2"), py::arg("out"), py::arg("reps") = 5, py::arg("give_up") = 3.0f, py::arg("passes") = 2,
        py::arg("only") = std::vector<std::string>{});
  m.def("cost_rows", &cutlass_ops::cost_rows, "The cost model's features and prediction for each candidate of a sweep row.",
        py::arg("precision"), py::arg("layouts"), py::arg("problem"), py::arg("align"), py::arg("candidates"),
        py::arg("device"), py::arg("batch") = 1);
  m.def("rank_problem", &cutlass_ops::rank_problem, "Every candidate for a problem with its predicted time, cheapest first.",
        py::arg("precision"), py::arg("layouts"), py::arg("problem"), py::arg("align"), py::arg("device"),
        py::arg("batch") = 1);
  m.def("property_coefficients", &cutlass_ops::property_coefficients_list,
        "A kernel's cost-model constants from the device's peak rates alone (no calibration).");
  m.def("add_calibration", &cutlass_ops::add_calibration_dict,
        "Load one device's fitted cost-model constants (and the training residuals that correct them).",
        py::arg("cc"), py::arg("sm_count"), py::arg("source"), py::arg("copies"), py::arg("kernels"),
        py::arg("residual") = py::none(), py::arg("ctas_per_sm") = py::none(), py::arg("dram_gbps") = 0,
        py::arg("split_counts") = py::none());
  m.def("kernel_occupancy", &cutlass_ops::kernel_occupancy,
        "{kernel name: CTAs per SM} on a CUDA device, by CUDA's occupancy calculator, for the kernels that "
        "report it (KernelInfo::max_active_ctas) and run there.",
        py::arg("device"));
  m.def("clear_calibrations", &cutlass_ops::clear_calibrations, "Forget every loaded calibration.");
  m.def("plan_cache_size", [] { return cutlass_ops::PlanCache::instance().size(); },
        "Problems whose cost-model choice is cached.");
  m.def("plan_cache_clear", [] { cutlass_ops::PlanCache::instance().clear(); }, "Forget every cached choice.");
  m.def("plan_many", &cutlass_ops::plan_many,
        "Plan a list of (precision, layouts, (m, n, k), (align a, b, d)) problems on `threads` threads at once; "
        "returns each plan's candidate (the plan cache under concurrency, for the tests).",
        py::arg("problems"), py::arg("device"), py::arg("threads"));
  m.def("explain", &cutlass_ops::explain, "The planner's decision for a call, without running it.",
        py::arg("self"), py::arg("mat2"), py::arg("out"), py::arg("kernel"), py::arg("device"));
}
