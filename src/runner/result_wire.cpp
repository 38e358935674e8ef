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
  put_optional(out, r.figures.worst_golden);
  put_string(out, r.reference_made);
  put(out, static_cast<std::uint32_t>(r.judge_notes.size()));
  for (const auto& n : r.judge_notes) put_string(out, n);
  put(out, r.golden_ms);
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
    put(out, static_cast<std::uint8_t>(d.raised));
  }
  put_string(out, r.reference_source);
  put(out, r.reference_cache_ms);
  put(out, static_cast<std::uint8_t>(r.reference_stored));
  put(out, r.reference_evicted);
  put_string(out, r.reference_cache_note);
  put_string(out, r.reference_cache_warning);
  put(out, static_cast<std::uint8_t>(r.phase));
  put(out, static_cast<std::uint8_t>(r.result_from_cache));  // set by the parent; carried so the codec is whole
  put(out, static_cast<std::uint8_t>(r.result_from_journal));
  put_string(out, r.traced_op);
  put_string(out, r.module_record);
  put(out, static_cast<std::uint8_t>(r.kind));
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
  r.figures.worst_golden = in.get_optional();
  r.reference_made = in.get_string();
  const auto notes = in.get<std::uint32_t>();
  r.judge_notes.clear();
  for (std::uint32_t i = 0; in.ok && i < notes; ++i) r.judge_notes.push_back(in.get_string());
  r.golden_ms = in.get<double>();
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
    d.raised = in.get<std::uint8_t>() != 0;
    r.device_ops.push_back(std::move(d));
  }
  r.reference_source = in.get_string();
  r.reference_cache_ms = in.get<double>();
  r.reference_stored = in.get<std::uint8_t>() != 0;
  r.reference_evicted = in.get<std::int64_t>();
  r.reference_cache_note = in.get_string();
  r.reference_cache_warning = in.get_string();
  const auto phase = in.get<std::uint8_t>();
  if (in.ok && phase > static_cast<std::uint8_t>(kLastCasePhase)) {
    error = "result has phase " + std::to_string(phase) + ", out of range";
    return false;
  }
  r.phase = static_cast<CasePhase>(phase);
  r.result_from_cache = in.get<std::uint8_t>() != 0;
  r.result_from_journal = in.get<std::uint8_t>() != 0;
  r.traced_op = in.get_string();
  r.module_record = in.get_string();
  const auto kind = in.get<std::uint8_t>();
  if (in.ok && kind > static_cast<std::uint8_t>(kLastVerdictKind)) {
    error = "result has verdict kind " + std::to_string(kind) + ", out of range";
    return false;
  }
  r.kind = static_cast<VerdictKind>(kind);
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

namespace opcheck {
namespace {

void put_loc(std::vector<std::uint8_t>& out, const SourceLoc& l) {
  put_string(out, l.file);
  put(out, static_cast<std::int32_t>(l.line));
  put(out, static_cast<std::int32_t>(l.col));
}

void put_value(std::vector<std::uint8_t>& out, const PyValue& v) {
  put(out, static_cast<std::uint8_t>(v.kind));
  put(out, static_cast<std::uint8_t>(v.b));
  put(out, v.i);
  put(out, v.f);
  put_string(out, v.s);
  put(out, static_cast<std::uint8_t>(v.dtype));
  put(out, static_cast<std::uint32_t>(v.items.size()));
  for (const auto& item : v.items) put_value(out, item);
}

void put_kwargs(std::vector<std::uint8_t>& out, const KwArgs& kw) {
  put(out, static_cast<std::uint32_t>(kw.size()));
  for (const auto& [k, v] : kw) {
    put_string(out, k);
    put_value(out, v);
  }
}

void put_ints(std::vector<std::uint8_t>& out, const std::vector<std::int64_t>& v) {
  put(out, static_cast<std::uint32_t>(v.size()));
  for (auto i : v) put(out, i);
}

void put_tensor(std::vector<std::uint8_t>& out, const TensorSpec& t) {
  put_ints(out, t.shape);
  put_ints(out, t.stride);
  put(out, t.storage_offset);
  put(out, static_cast<std::uint8_t>(t.dtype));
  put_string(out, t.dtype_spelling);
  put(out, static_cast<std::uint8_t>(t.placement));
  put(out, static_cast<std::uint8_t>(t.init));
  put_kwargs(out, t.init_args);
  put_value(out, t.data);
  put_string(out, t.file);
  put(out, static_cast<std::int32_t>(t.file_fd));  // the descriptor checked at load: workers inherit it
  put(out, static_cast<std::uint8_t>(t.shape_from_file));
  put_string(out, t.preset);
  put_kwargs(out, t.preset_args);
  put_loc(out, t.loc);
}

void put_conditions(std::vector<std::uint8_t>& out, const std::vector<Condition>& conds) {
  put(out, static_cast<std::uint32_t>(conds.size()));
  for (const auto& c : conds) {
    put_string(out, c.expr);
    put_string(out, c.reason);
    put_loc(out, c.loc);
    put(out, static_cast<std::uint8_t>(c.strict));
  }
}

/// Reads the nested parts of a Case; each keeps going after an overrun (Reader::ok says so once at the end).
struct CaseReader : Reader {
  SourceLoc loc() {
    SourceLoc l;
    l.file = get_string();
    l.line = get<std::int32_t>();
    l.col = get<std::int32_t>();
    return l;
  }
  /// Nested values deeper than any manifest writes are malformed input, not a reason to exhaust the stack.
  PyValue value(int depth = 0) {
    PyValue v;
    v.kind = static_cast<PyValue::Kind>(get<std::uint8_t>());
    v.b = get<std::uint8_t>() != 0;
    v.i = get<std::int64_t>();
    v.f = get<double>();
    v.s = get_string();
    v.dtype = static_cast<DType>(get<std::uint8_t>());
    const auto n = get<std::uint32_t>();
    if (depth > 256) ok = false;
    for (std::uint32_t k = 0; ok && k < n; ++k) v.items.push_back(value(depth + 1));
    return v;
  }
  KwArgs kwargs() {
    KwArgs kw;
    const auto n = get<std::uint32_t>();
    for (std::uint32_t k = 0; ok && k < n; ++k) {
      std::string key = get_string();
      kw.emplace_back(std::move(key), value());
    }
    return kw;
  }
  std::vector<std::int64_t> ints() {
    std::vector<std::int64_t> v;
    const auto n = get<std::uint32_t>();
    for (std::uint32_t k = 0; ok && k < n; ++k) v.push_back(get<std::int64_t>());
    return v;
  }
  TensorSpec tensor() {
    TensorSpec t;
    t.shape = ints();
    t.stride = ints();
    t.storage_offset = get<std::int64_t>();
    t.dtype = static_cast<DType>(get<std::uint8_t>());
    t.dtype_spelling = get_string();
    t.placement = static_cast<Placement>(get<std::uint8_t>());
    t.init = static_cast<InitKind>(get<std::uint8_t>());
    t.init_args = kwargs();
    t.data = value();
    t.file = get_string();
    t.file_fd = get<std::int32_t>();
    t.shape_from_file = get<std::uint8_t>() != 0;
    t.preset = get_string();
    t.preset_args = kwargs();
    t.loc = loc();
    return t;
  }
  std::vector<Condition> conditions() {
    std::vector<Condition> conds;
    const auto n = get<std::uint32_t>();
    for (std::uint32_t k = 0; ok && k < n; ++k) {
      Condition c;
      c.expr = get_string();
      c.reason = get_string();
      c.loc = loc();
      c.strict = get<std::uint8_t>() != 0;
      conds.push_back(std::move(c));
    }
    return conds;
  }
};

// One field of a table on the wire, by its type: the encoder and the decoder of every field type, in one place.
template <class Owner>
void put_field(std::vector<std::uint8_t>& out, const Owner& o, const Field<Owner>& f) {
  std::visit(
      [&](auto m) {
        using T = std::decay_t<decltype(o.*m)>;
        const T& v = o.*m;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, Comparator>) put(out, static_cast<std::uint8_t>(v));
        else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) put(out, v);
        else if constexpr (std::is_same_v<T, std::optional<double>>) put_optional(out, v);
        else if constexpr (std::is_same_v<T, std::string>) put_string(out, v);
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          put(out, static_cast<std::uint32_t>(v.size()));
          for (const auto& x : v) put_string(out, x);
        } else if constexpr (std::is_same_v<T, std::optional<ExpectedError>>) {
          put(out, static_cast<std::uint8_t>(v.has_value()));
          if (v) {
            put_string(out, v->type);
            put_string(out, v->match);
          }
        } else if constexpr (std::is_same_v<T, std::vector<PyValue>>) {
          put(out, static_cast<std::uint32_t>(v.size()));
          for (const PyValue& x : v) put_value(out, x);
        } else if constexpr (std::is_same_v<T, KwArgs>) put_kwargs(out, v);
        else static_assert(unhandled_field_type<T>, "the worker wire encodes every field type");
      },
      f.member);
}

template <class Owner>
void get_field(CaseReader& in, Owner& o, const Field<Owner>& f) {
  std::visit(
      [&](auto m) {
        using T = std::decay_t<decltype(o.*m)>;
        T& v = o.*m;
        if constexpr (std::is_same_v<T, bool>) v = in.get<std::uint8_t>() != 0;
        else if constexpr (std::is_same_v<T, Comparator>) v = static_cast<Comparator>(in.get<std::uint8_t>());
        else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) v = in.get<T>();
        else if constexpr (std::is_same_v<T, std::optional<double>>) v = in.get_optional();
        else if constexpr (std::is_same_v<T, std::string>) v = in.get_string();
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          v.clear();
          const auto n = in.get<std::uint32_t>();
          for (std::uint32_t k = 0; in.ok && k < n; ++k) v.push_back(in.get_string());
        } else if constexpr (std::is_same_v<T, std::optional<ExpectedError>>) {
          v.reset();
          if (in.get<std::uint8_t>() != 0) {
            ExpectedError e;
            e.type = in.get_string();
            e.match = in.get_string();
            v = std::move(e);
          }
        } else if constexpr (std::is_same_v<T, std::vector<PyValue>>) {
          v.clear();
          const auto n = in.get<std::uint32_t>();
          for (std::uint32_t k = 0; in.ok && k < n; ++k) v.push_back(in.value());
        } else if constexpr (std::is_same_v<T, KwArgs>) v = in.kwargs();
        else static_assert(unhandled_field_type<T>, "the worker wire decodes every field type");
      },
      f.member);
}

}  // namespace

void encode_case(const Case& c, std::vector<std::uint8_t>& out) {
  for (const auto* s : {&c.model, &c.variant, &c.name, &c.id}) put_string(out, *s);
  put_loc(out, c.loc);
  put_string(out, c.op);
  put(out, static_cast<std::uint32_t>(c.inputs.size()));
  for (const auto& in : c.inputs) {
    put(out, static_cast<std::uint8_t>(in.kind));
    put_tensor(out, in.tensor);
    put(out, static_cast<std::uint32_t>(in.list.size()));
    for (const auto& t : in.list) put_tensor(out, t);
    put_value(out, in.value);
    put_loc(out, in.loc);
    put_string(out, in.keyword);
  }
  put_kwargs(out, c.kwargs);
  put(out, static_cast<std::uint8_t>(c.dtype));
  put_string(out, c.dtype_spelling);
  put_conditions(out, c.skip_if);
  put_conditions(out, c.xfail_if);
  for (const CaseField& f : kCaseFields) put_field<CaseSettings>(out, c, f);
  put(out, static_cast<std::uint8_t>(c.is_module()));
  if (!c.module) return;
  for (const ModuleField& f : kModuleFields) put_field(out, *c.module, f);
}

bool decode_case(const std::uint8_t* data, std::size_t size, Case& c, std::string& error) {
  CaseReader in{{data, data + size}};
  for (auto* s : {&c.model, &c.variant, &c.name, &c.id}) *s = in.get_string();
  c.loc = in.loc();
  c.op = in.get_string();
  const auto inputs = in.get<std::uint32_t>();
  c.inputs.clear();
  for (std::uint32_t k = 0; in.ok && k < inputs; ++k) {
    Input input;
    input.kind = static_cast<Input::Kind>(in.get<std::uint8_t>());
    input.tensor = in.tensor();
    const auto n = in.get<std::uint32_t>();
    for (std::uint32_t t = 0; in.ok && t < n; ++t) input.list.push_back(in.tensor());
    input.value = in.value();
    input.loc = in.loc();
    input.keyword = in.get_string();
    c.inputs.push_back(std::move(input));
  }
  c.kwargs = in.kwargs();
  c.dtype = static_cast<DType>(in.get<std::uint8_t>());
  c.dtype_spelling = in.get_string();
  c.skip_if = in.conditions();
  c.xfail_if = in.conditions();
  for (const CaseField& f : kCaseFields) get_field<CaseSettings>(in, c, f);
  c.module.reset();
  if (in.get<std::uint8_t>() != 0) {
    auto m = std::make_shared<ModuleSpec>();
    for (const ModuleField& f : kModuleFields) get_field(in, *m, f);
    c.module = std::move(m);
  }
  if (!in.ok || in.p != in.end) {
    error = "case record is malformed (" + std::to_string(size) + " bytes)";
    return false;
  }
  return true;
}

}  // namespace opcheck
