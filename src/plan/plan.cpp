#include "plan/plan.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <unordered_map>

#include "common/op_names.h"
#include "common/opened_files.h"
#include "common/sha256.h"

namespace opcheck {
namespace {

void put_shape(std::string& out, const std::vector<std::int64_t>& v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  out += ']';
}

void put_kwargs(std::string& out, const KwArgs& kw, bool sort) {
  std::vector<const std::pair<std::string, PyValue>*> items;
  for (const auto& p : kw) items.push_back(&p);
  if (sort)
    std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
  out += '{';
  for (auto* p : items) out += p->first + '=' + p->second.repr() + ';';
  out += '}';
}

/// sha256_file, once per file and process: the tensors of one .safetensors file (one key each) would read the
/// whole file once per tensor otherwise, quadratic in the tensors of a file. Keyed by the file's identity.
std::string file_digest(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::string> digests;
  const std::string key = file_identity(path);
  if (key.empty()) return sha256_file(path);
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = digests.find(key);
  if (it == digests.end()) it = digests.emplace(key, sha256_file(path)).first;
  return it->second;
}

void put_tensor(std::string& out, const TensorSpec& t) {
  out += "T(";
  out += dtype_name(t.dtype);
  put_shape(out, t.shape);
  out += "s";
  put_shape(out, t.stride);
  out += "o" + std::to_string(t.storage_offset);
  out += t.placement == Placement::Host ? "@host" : "@dut";
  out += std::string(" ") + init_kind_name(t.init);
  put_kwargs(out, t.init_args, /*sort=*/true);
  if (t.init == InitKind::Data) out += "data:" + sha256_hex(t.data.repr());
  // The file's bytes, not its name: the same tensor saved twice is the same input.
  if (t.init == InitKind::File) out += (t.shape_from_file ? "file(shape):" : "file:") + file_digest(t.file_source());
  out += ')';
}

}  // namespace

namespace {

// A field's part of the canonical text, as key format k4 spells it: `|rtol=0.01` (`default` when absent),
// `|cmp=allclose`, `|nan=eq` (a bool's own spellings), `|err=Type/match` (nothing when absent).
template <class Owner>
void put_field(std::string& out, const Owner& o, const Field<Owner>& f) {
  std::visit(
      [&](auto m) {
        using T = std::decay_t<decltype(o.*m)>;
        const T& v = o.*m;
        // Appended piece by piece: the key is computed for every case of a run, with no temporary strings.
        const auto label = [&] {
          out += '|';
          out += f.key_label ? f.key_label : f.name;
          out += '=';
        };
        if constexpr (std::is_same_v<T, bool>) {
          out += v ? f.key_true : f.key_false;
          return;
        } else if constexpr (std::is_same_v<T, std::optional<ExpectedError>>) {
          if (!v) return;
          label();
          out += v->type;
          out += '/';
          out += v->match;
          return;
        } else {
          label();
          if constexpr (std::is_same_v<T, std::int64_t>) out += std::to_string(v);
          else if constexpr (std::is_same_v<T, double>) out += PyValue::real(v).repr();
          else if constexpr (std::is_same_v<T, std::optional<double>>)
            out += v ? PyValue::real(*v).repr() : "default";
          else if constexpr (std::is_same_v<T, Comparator>) out += comparator_name(v);
          else if constexpr (std::is_same_v<T, std::string>) out += v;
          else if constexpr (std::is_same_v<T, std::vector<std::string>>)
            for (const std::string& s : v) (out += s) += ',';
          else if constexpr (std::is_same_v<T, std::vector<PyValue>>)
            for (const PyValue& x : v) (out += x.repr()) += ',';
          else if constexpr (std::is_same_v<T, KwArgs>) put_kwargs(out, v, /*sort=*/true);
          else static_assert(unhandled_field_type<T>, "the dedupe key spells every field type");
        }
      },
      f.member);
}

const std::array<const CaseField*, kCaseFieldCount>& key_order() {
  static const auto order = case_fields_in_key_order();
  return order;
}

}  // namespace

std::string canonical_case_text(const Case& c) {
  std::string out = kDedupeKeyVersion;
  out += '|';
  out += canonical_op(c.op);
  // Not the case dtype: it only labels the case (a v1 manifest's `defaults: {dtype: fp16}` and a v2 config's
  // first-argument dtype name one call differently); what it decides, the dtype of every input, is covered below.
  // The case fields in the key (kCaseFields' in_key, seed before the inputs), then the inputs and keywords: their
  // spelling and order are format k4's.
  for (const CaseField* f : key_order())
    if (f->key == KeyPlace::BeforeInputs) put_field<CaseSettings>(out, c, *f);
  out += "|in=";
  for (const auto& in : c.inputs) {
    if (!in.keyword.empty()) out += "K(" + in.keyword + ")";  // only keyword inputs: other cases keep their keys
    switch (in.kind) {
      case Input::Kind::Tensor: put_tensor(out, in.tensor); break;
      case Input::Kind::TensorList:
        out += "L[";
        for (const auto& t : in.list) put_tensor(out, t);
        out += ']';
        break;
      case Input::Kind::Value: out += "V(" + in.value.repr() + ")"; break;
    }
    out += ',';
  }
  out += "|kw=";
  put_kwargs(out, c.kwargs, /*sort=*/true);
  for (const CaseField* f : key_order())
    if (f->key == KeyPlace::AfterInputs) put_field<CaseSettings>(out, c, *f);
  if (c.module) {  // a module case: the module and how it is built decide what it computes too
    out += "|module";
    for (const ModuleField& f : kModuleFields)
      if (f.key != KeyPlace::None) put_field(out, *c.module, f);
  }
  return out;
}

std::string dedupe_key(const Case& c) {
  return std::string(kDedupeKeyVersion) + ":" + sha256_hex(canonical_case_text(c)).substr(0, 32);
}

std::string input_signature(const Case& c) {
  std::string out = canonical_op(c.op) + "(";
  auto tensor = [&](const TensorSpec& t) {
    out += dtype_name(t.dtype);
    put_shape(out, t.shape);
  };
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    if (i) out += ", ";
    const auto& in = c.inputs[i];
    if (!in.keyword.empty()) out += in.keyword + "=";
    if (in.kind == Input::Kind::Tensor) tensor(in.tensor);
    else if (in.kind == Input::Kind::TensorList) {
      out += '[';
      for (std::size_t j = 0; j < in.list.size(); ++j) {
        if (j) out += ", ";
        tensor(in.list[j]);
      }
      out += ']';
    } else out += in.value.repr();
  }
  for (const auto& [k, v] : c.kwargs) out += ", " + k + "=" + v.repr();
  return out + ")";
}

Plan make_plan(const std::vector<const Case*>& selected, bool dedupe, const KnownKeys* known) {
  Plan p;
  p.occurrences = selected;
  p.keys.reserve(selected.size());
  p.unique_of.reserve(selected.size());
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    p.selection_index.push_back(i);
    const auto k = known ? known->find(selected[i]) : KnownKeys::const_iterator{};
    p.keys.push_back(known && k != known->end() ? k->second : dedupe_key(*selected[i]));
    auto [it, fresh] = seen.emplace(p.keys.back(), p.unique.size());
    if (fresh || !dedupe) {
      p.unique_of.push_back(p.unique.size());
      p.unique.push_back(selected[i]);
      p.unique_first.push_back(i);
    } else {
      p.unique_of.push_back(it->second);
    }
  }
  return p;
}

double estimated_cost(const Case& c) {
  double bytes = 0;
  for (const auto& in : c.inputs) {
    if (in.kind == Input::Kind::Tensor) bytes += static_cast<double>(in.tensor.numel()) * dtype_size(in.tensor.dtype);
    for (const auto& t : in.list) bytes += static_cast<double>(t.numel()) * dtype_size(t.dtype);
  }
  // A fixed per-case overhead so that many tiny cases still spread evenly.
  return bytes + 64.0 * 1024;
}

Plan shard_plan(const Plan& plan, int index, int total) {
  if (total <= 1) return plan;
  std::vector<double> cost(plan.unique.size());
  for (std::size_t u = 0; u < plan.unique.size(); ++u) cost[u] = estimated_cost(*plan.unique[u]);
  return shard_plan(plan, index, total, cost);
}

ExpectedTimes expected_times(const Plan& plan, const std::unordered_map<std::string, double>& recorded_s) {
  ExpectedTimes t;
  t.seconds.assign(plan.unique.size(), -1.0);
  double timed_s = 0, timed_cost = 0;
  for (std::size_t u = 0; u < plan.unique.size(); ++u) {
    const auto it = recorded_s.find(plan.keys[plan.unique_first[u]]);
    if (it == recorded_s.end()) continue;
    t.seconds[u] = it->second;
    timed_s += it->second;
    timed_cost += estimated_cost(*plan.unique[u]);
    ++t.recorded;
  }
  t.in_seconds = t.recorded > 0;
  // The recorded cases say what a unit of estimated cost takes on this device; without any, the estimates stand.
  const double per_cost = t.in_seconds ? timed_s / timed_cost : 1.0;
  for (std::size_t u = 0; u < plan.unique.size(); ++u) {
    if (t.seconds[u] >= 0) continue;
    t.seconds[u] = estimated_cost(*plan.unique[u]) * per_cost;
    ++t.estimated;
  }
  return t;
}

Plan shard_plan(const Plan& plan, int index, int total, const std::vector<double>& cost, std::vector<double>* loads) {
  // Longest-processing-time-first: heaviest unique case to the lightest shard; ties by key so every shard
  // computes the same assignment without talking to the others.
  std::vector<std::size_t> order(plan.unique.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (cost[a] != cost[b]) return cost[a] > cost[b];
    return plan.keys[plan.unique_first[a]] < plan.keys[plan.unique_first[b]];
  });
  total = std::max(total, 1);
  std::vector<double> load(static_cast<std::size_t>(total), 0.0);
  std::vector<std::size_t> count(load.size(), 0);
  std::vector<int> shard_of(plan.unique.size());
  for (std::size_t u : order) {
    // Fewest cases among equally loaded shards, so that cases recorded as taking no time still spread out.
    std::size_t lightest = 0;
    for (std::size_t s = 1; s < load.size(); ++s)
      if (load[s] < load[lightest] || (load[s] == load[lightest] && count[s] < count[lightest])) lightest = s;
    shard_of[u] = static_cast<int>(lightest);
    load[lightest] += cost[u];
    ++count[lightest];
  }
  if (loads) *loads = load;
  if (total == 1) return plan;
  Plan out;
  std::vector<std::size_t> remap(plan.unique.size(), SIZE_MAX);
  for (std::size_t u = 0; u < plan.unique.size(); ++u) {
    if (shard_of[u] != index) continue;
    remap[u] = out.unique.size();
    out.unique.push_back(plan.unique[u]);
  }
  for (std::size_t i = 0; i < plan.occurrences.size(); ++i) {
    std::size_t u = plan.unique_of[i];
    if (remap[u] == SIZE_MAX) continue;
    if (plan.unique_first[u] == i) out.unique_first.push_back(out.occurrences.size());
    out.occurrences.push_back(plan.occurrences[i]);
    out.keys.push_back(plan.keys[i]);
    out.unique_of.push_back(remap[u]);
    out.selection_index.push_back(plan.selection_index[i]);
  }
  return out;
}

std::string describe_plan(const Plan& plan) {
  std::vector<std::vector<std::size_t>> served(plan.unique.size());
  for (std::size_t i = 0; i < plan.occurrences.size(); ++i) served[plan.unique_of[i]].push_back(i);
  std::string out;
  for (std::size_t u = 0; u < plan.unique.size(); ++u) {
    out += plan.unique[u]->id + "  " + plan.keys[plan.unique_first[u]] + "\n";
    for (std::size_t i : served[u])
      if (i != plan.unique_first[u]) out += "    also " + plan.occurrences[i]->id + "\n";
  }
  const std::size_t duplicates = plan.occurrences.size() - plan.unique.size();
  out += std::to_string(plan.occurrences.size()) + (plan.occurrences.size() == 1 ? " case, " : " cases, ") +
         std::to_string(plan.unique.size()) + " unique, " + std::to_string(duplicates) +
         (duplicates == 1 ? " duplicate" : " duplicates") + " served\n";
  return out;
}

}  // namespace opcheck
