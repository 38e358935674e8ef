#include "runner/result_wire.h"

#include <cstring>
#include <type_traits>

namespace opcheck {
namespace {

template <class T>
void put(std::vector<std::uint8_t>& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

void put_string(std::vector<std::uint8_t>& out, const std::string& s) {
  put(out, static_cast<std::uint32_t>(s.size()));
  out.insert(out.end(), s.begin(), s.end());
}

void put_optional(std::vector<std::uint8_t>& out, const std::optional<double>& v) {
  put(out, static_cast<std::uint8_t>(v.has_value()));
  if (v) put(out, *v);
}

/// A bounds-checked reader; the first overrun sets `ok` to false and every later read is a no-op.
struct Reader {
  const std::uint8_t* p;
  const std::uint8_t* end;
  bool ok = true;

  template <class T>
  T get() {
    T v{};
    if (!ok || static_cast<std::size_t>(end - p) < sizeof v) {
      ok = false;
      return v;
    }
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
  }
  std::string get_string() {
    const auto n = get<std::uint32_t>();
    if (!ok || static_cast<std::size_t>(end - p) < n) {
      ok = false;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
  std::optional<double> get_optional() {
    if (get<std::uint8_t>() == 0) return std::nullopt;
    return get<double>();
  }
};

}  // namespace

void encode_result(const Result& r, std::vector<std::uint8_t>& out) {
  put_string(out, r.case_id);
  put(out, static_cast<std::uint8_t>(r.stage));
  put(out, static_cast<std::uint8_t>(r.outcome));
  put_string(out, r.message);
  put_string(out, r.resolved_op);
  put(out, static_cast<std::uint8_t>(r.decomposed));
  put(out, static_cast<std::uint8_t>(r.reference_upcast));
  put(out, static_cast<std::uint8_t>(r.values_compared));
  put_optional(out, r.figures.max_abs_diff);
  put_optional(out, r.figures.max_rel_diff);
  put_optional(out, r.figures.pcc);
  put(out, r.figures.mismatched);
  put(out, r.figures.total);
  put(out, static_cast<std::uint32_t>(r.figures.worst_index.size()));
  for (auto i : r.figures.worst_index) put(out, i);
  put_optional(out, r.figures.worst_device);
  put_optional(out, r.figures.worst_reference);
  put(out, r.materialize_ms);
  put(out, r.reference_ms);
  put(out, r.device_ms);
  put(out, r.compare_ms);
  put(out, r.compile_ms);
  put(out, static_cast<std::uint32_t>(r.input_digests.size()));
  for (const auto& d : r.input_digests) put_string(out, d);
  put_string(out, r.captured_stderr);
  put(out, static_cast<std::uint32_t>(r.device_ops.size()));
  for (const auto& d : r.device_ops) {
    put_string(out, d.op);
    put(out, static_cast<std::uint8_t>(d.via));
    put(out, d.calls);
    put(out, static_cast<std::uint8_t>(d.in_call));
  }
  put(out, static_cast<std::uint8_t>(r.phase));
}

bool decode_result(const std::uint8_t* data, std::size_t size, Result& r, std::string& error) {
  Reader in{data, data + size};
  r.case_id = in.get_string();
  const auto stage = in.get<std::uint8_t>();
  const auto outcome = in.get<std::uint8_t>();
  if (in.ok &&
      (stage > static_cast<std::uint8_t>(kLastStage) || outcome > static_cast<std::uint8_t>(kLastOutcome))) {
    error = "result has stage " + std::to_string(stage) + " / outcome " + std::to_string(outcome) + " out of range";
    return false;
  }
  r.stage = static_cast<Stage>(stage);
  r.outcome = static_cast<Outcome>(outcome);
  r.message = in.get_string();
  r.resolved_op = in.get_string();
  r.decomposed = in.get<std::uint8_t>() != 0;
  r.reference_upcast = in.get<std::uint8_t>() != 0;
  r.values_compared = in.get<std::uint8_t>() != 0;
  r.figures.max_abs_diff = in.get_optional();
  r.figures.max_rel_diff = in.get_optional();
  r.figures.pcc = in.get_optional();
  r.figures.mismatched = in.get<std::int64_t>();
  r.figures.total = in.get<std::int64_t>();
  const auto rank = in.get<std::uint32_t>();
  r.figures.worst_index.clear();
  for (std::uint32_t i = 0; in.ok && i < rank; ++i) r.figures.worst_index.push_back(in.get<std::int64_t>());
  r.figures.worst_device = in.get_optional();
  r.figures.worst_reference = in.get_optional();
  r.materialize_ms = in.get<double>();
  r.reference_ms = in.get<double>();
  r.device_ms = in.get<double>();
  r.compare_ms = in.get<double>();
  r.compile_ms = in.get<double>();
  const auto n = in.get<std::uint32_t>();
  r.input_digests.clear();
  for (std::uint32_t i = 0; in.ok && i < n; ++i) r.input_digests.push_back(in.get_string());
  r.captured_stderr = in.get_string();
  const auto ops = in.get<std::uint32_t>();
  r.device_ops.clear();
  for (std::uint32_t i = 0; in.ok && i < ops; ++i) {
    DeviceOp d;
    d.op = in.get_string();
    const auto via = in.get<std::uint8_t>();
    if (in.ok && via > static_cast<std::uint8_t>(DeviceOpVia::Composite)) {
      error = "result has a device op served via " + std::to_string(via) + ", out of range";
      return false;
    }
    d.via = static_cast<DeviceOpVia>(via);
    d.calls = in.get<std::int64_t>();
    d.in_call = in.get<std::uint8_t>() != 0;
    r.device_ops.push_back(std::move(d));
  }
  const auto phase = in.get<std::uint8_t>();
  if (in.ok && phase > static_cast<std::uint8_t>(kLastCasePhase)) {
    error = "result has phase " + std::to_string(phase) + ", out of range";
    return false;
  }
  r.phase = static_cast<CasePhase>(phase);
  if (!in.ok) {
    error = "result record is truncated (" + std::to_string(size) + " bytes)";
    return false;
  }
  if (in.p != in.end) {
    error = "result record has " + std::to_string(in.end - in.p) + " unexpected trailing bytes";
    return false;
  }
  return true;
}

}  // namespace opcheck
