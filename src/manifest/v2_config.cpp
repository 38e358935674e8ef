#include "manifest/v2_config.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <unordered_map>

#include "common/spelling.h"
#include "manifest/input_reader.h"

namespace fs = std::filesystem;

namespace opcheck {
namespace {

using yaml::NodeRef;
using yaml::ScalarStyle;
using Keys = std::vector<std::string_view>;

// torch-spyre's v2 files end with `cases: []`, an empty v1 list beside the v2 suite.
const Keys kRootKeys{"test_suite_config", "cases"};
const Keys kSuiteKeys{"global", "files"};
const Keys kGlobalKeys{"supported_dtypes", "supported_ops", "supported_modules", "input_config"};
const Keys kDtypeEntryKeys{"name", "description", "precision", "force_xfail"};
const Keys kPrecisionKeys{"atol", "rtol"};
const Keys kOpEntryKeys{"name", "force_xfail", "dtypes"};
const Keys kOpDtypeKeys{"name", "precision"};
const Keys kNamedItemKeys{"name", "description"};
const Keys kDtypeItemKeys{"name", "description", "precision"};
const Keys kInputConfigKeys{"seed"};
const Keys kFileKeys{"path", "unlisted_test_mode", "tests"};
const Keys kTestKeys{"names", "mode", "tags", "edits"};
const Keys kEditKeys{"ops", "dtypes", "modules", "functions"};
const Keys kIncludeExcludeKeys{"include", "exclude"};
const Keys kEntryKeys{"name", "description", "tags", "sample_inputs_func", "kwargs"};
const Keys kSampleKeys{"args", "kwargs"};
const Keys kTensorKeys{"shape", "dtype", "device", "init", "init_args", "stride", "storage_offset"};
const Keys kModes{"mandatory_success", "xfail", "xfail_strict", "skip"};
// Dtype names torch knows and opcheck's tensors do not; a supported_dtypes list may name them.
const Keys kTorchOnlyDtypes{"uint16", "uint32", "uint64", "torch.uint16", "torch.uint32", "torch.uint64"};

constexpr double kDefaultTolerance = 5e-3;

enum class Mode { MandatorySuccess, Xfail, XfailStrict, Skip };

bool contains(const Keys& keys, std::string_view k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// `gpt-oss-20b_spyre` -> `gpt-oss-20b` (also `__spyre`); `spyre` is set when a suffix was removed.
std::string strip_spyre(std::string name, bool& spyre) {
  for (std::string_view suffix : {"__spyre", "_spyre"})
    if (ends_with(name, suffix) && name.size() > suffix.size()) {
      name.resize(name.size() - suffix.size());
      spyre = true;
      return name;
    }
  return name;
}

struct DtypeRule {
  double atol = kDefaultTolerance, rtol = kDefaultTolerance;
  bool force_xfail = false;
};

struct Global {
  bool have_dtypes = false;                     // supported_dtypes given: dtypes outside it are not run
  std::map<DType, DtypeRule> dtypes;
  bool have_ops = false;
  std::map<std::string, bool> ops;              // op -> force_xfail
  std::int64_t seed = 0;
};

// What a test gives each of its entries.
struct TestScope {
  std::string model, variant;
  Mode mode = Mode::MandatorySuccess;
  std::vector<std::string> marks;         // the test's tags that are marker names
  std::vector<std::string> excluded_ops;  // edits.ops.exclude
  std::vector<DType> dtype_include, dtype_exclude;
};

class V2Reader {
 public:
  V2Reader(const std::string& path, DiagnosticList& diags) : path_(path), diags_(diags), r_(path, diags) {
    r_.use_v2_file_paths();
  }
  bool run(const yaml::Tree& tree, std::vector<Manifest>& out);

 private:
  bool want_list(NodeRef n, std::string_view key, const std::string& example);
  bool read_strings(NodeRef n, std::string_view key, std::vector<std::string>& out);
  bool read_mode(NodeRef n, Mode& out);
  std::optional<DType> read_dtype_name(NodeRef n, std::string_view key, bool allow_torch_only);
  bool read_dtype_list(NodeRef n, std::string_view key, std::vector<DType>& out);
  void read_global(NodeRef g);
  void read_file(NodeRef f);
  void read_test(NodeRef t);
  // One test of a file, in steps.
  bool read_test_names(NodeRef t, std::vector<std::string>& names);  // true when the test is test_model_ops_db
  bool read_test_model(NodeRef t, TestScope& test, bool& spyre);
  NodeRef read_edits(NodeRef t, TestScope& test);  // the edits.ops.include list, or null
  void read_entries(NodeRef include, TestScope& test, bool spyre);
  // One edits.ops.include entry, in steps.
  bool read_entry(NodeRef e, const TestScope& test, Case& out);
  bool read_op(NodeRef e, Case& out);
  void name_entry(NodeRef e, const TestScope& test, Case& out);
  void read_arguments(NodeRef e, Case& out);
  void add_conditions(NodeRef e, const TestScope& test, Case& out);
  bool precheck_tensor(NodeRef t);
  bool precheck_args(NodeRef args);
  Condition always(std::string reason, NodeRef where, bool strict);

  const std::string& path_;
  DiagnosticList& diags_;
  InputReader r_;  // typed reads and the call's arguments, as v1 manifests read them; names the entry being read
  std::string stem_;
  Global global_;
  std::size_t entry_index_ = 0;  // entries through the file, as torch-spyre's runner counts them
  std::vector<Manifest> manifests_;
  std::unordered_map<std::string, std::size_t> manifest_of_;   // model -> index into manifests_
  struct Listed {
    Mode mode;
    int line;
    int listings;
  };
  std::unordered_map<std::string, Listed> listed_;     // case id -> first listing
  std::unordered_map<std::string, int> op_counts_;      // op -> entries without a v1 name so far
};

bool V2Reader::want_list(NodeRef n, std::string_view key, const std::string& example) {
  if (n.is_sequence()) return true;
  r_.error(n, "expected a list for " + in_quotes(key) + ", got " + n.describe(),
           "write it as a YAML list, e.g. " + example);
  return false;
}

bool V2Reader::read_strings(NodeRef n, std::string_view key, std::vector<std::string>& out) {
  if (n.is_scalar() && !is_yaml_null(n)) {  // a single name stands for a list of one
    out.emplace_back(n.text());
    return true;
  }
  if (!want_list(n, key, std::string(key) + ": [a, b]")) return false;
  bool ok = true;
  for (std::size_t i = 0; i < n.size(); ++i) {
    std::string s;
    if (r_.read_string(n.item(i), key, s))
      out.push_back(std::move(s));
    else
      ok = false;
  }
  return ok;
}

bool V2Reader::read_mode(NodeRef n, Mode& out) {
  std::string s;
  if (!r_.read_string(n, "mode", s)) return false;
  for (std::size_t i = 0; i < kModes.size(); ++i)
    if (kModes[i] == s) {
      out = static_cast<Mode>(i);
      return true;
    }
  std::string guess = closest_spelling(s, kModes);
  r_.error(n, "unknown mode " + in_quotes(s) + (guess.empty() ? std::string() : " (did you mean '" + guess + "'?)"),
           "use one of mandatory_success, xfail, xfail_strict, skip");
  return false;
}

std::optional<DType> V2Reader::read_dtype_name(NodeRef n, std::string_view key, bool allow_torch_only) {
  std::string s;
  if (!r_.read_string(n, key, s)) return std::nullopt;
  if (auto t = parse_dtype(s)) return t;
  if (allow_torch_only && contains(kTorchOnlyDtypes, s)) return std::nullopt;
  r_.error(n, "unknown dtype " + in_quotes(s) + did_you_mean(s, all_dtype_names()),
           "use torch's names: float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, bool, complex64, "
           "complex128 (a torch. prefix is allowed)");
  return std::nullopt;
}

bool V2Reader::read_dtype_list(NodeRef n, std::string_view key, std::vector<DType>& out) {
  if (!want_list(n, key, std::string(key) + ": [{name: float16}]")) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    NodeRef item = n.item(i);
    NodeRef name = item;
    if (item.is_mapping()) {
      if (!r_.check_keys(item, key == "include" ? kDtypeItemKeys : kNamedItemKeys, "in edits.dtypes." + std::string(key)))
        continue;
      name = item.find("name");
      if (!name) {
        r_.error(item, "edits.dtypes entry has no 'name'", "write - {name: float16}");
        continue;
      }
      if (NodeRef p = item.find("precision"))
        r_.warning(p,
                   "a per-test precision is not used for edits.ops entries (test_model_ops_db takes atol and rtol from "
                   "global.supported_dtypes only); opcheck does the same",
                   "set the tolerance in global.supported_dtypes, or in opcheck's status config");
    }
    if (auto t = read_dtype_name(name, key, /*allow_torch_only=*/true)) out.push_back(*t);
  }
  return true;
}

void V2Reader::read_global(NodeRef g) {
  if (!r_.want_mapping(g, "global")) return;
  r_.check_keys(g, kGlobalKeys, "in test_suite_config.global");
  if (NodeRef d = g.find("supported_dtypes");
      d && !is_yaml_null(d) && want_list(d, "supported_dtypes", "[{name: float16}]")) {
    // An empty list filters nothing, as upstream reads it.
    global_.have_dtypes = d.size() > 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      NodeRef e = d.item(i);
      if (e.is_scalar()) {
        if (auto t = read_dtype_name(e, "supported_dtypes", /*allow_torch_only=*/true)) global_.dtypes[*t] = DtypeRule{};
        continue;
      }
      if (!r_.want_mapping(e, "supported_dtypes") || !r_.check_keys(e, kDtypeEntryKeys, "in a supported_dtypes entry"))
        continue;
      NodeRef name = e.find("name");
      if (!name) {
        r_.error(e, "supported_dtypes entry has no 'name'", "add name: float16 (torch's dtype name)");
        continue;
      }
      auto t = read_dtype_name(name, "name", /*allow_torch_only=*/true);
      DtypeRule rule;
      if (NodeRef p = e.find("precision"); p && r_.want_mapping(p, "precision") &&
                                           r_.check_keys(p, kPrecisionKeys, "in precision")) {
        for (auto [key, dest] : {std::pair<const char*, double*>{"atol", &rule.atol}, {"rtol", &rule.rtol}}) {
          NodeRef v = p.find(key);
          if (v && r_.read_number(v, key, *dest) && !(*dest >= 0))
            r_.error(v, std::string(key) + " must be >= 0", "write a tolerance such as 0.005");
        }
      }
      if (NodeRef fx = e.find("force_xfail")) r_.read_bool(fx, "force_xfail", rule.force_xfail);
      if (t) global_.dtypes[*t] = rule;
    }
  }
  if (NodeRef o = g.find("supported_ops"); o && want_list(o, "supported_ops", "[{name: torch.add}]")) {
    global_.have_ops = true;
    for (std::size_t i = 0; i < o.size(); ++i) {
      NodeRef e = o.item(i);
      std::string name;
      bool force = false;
      if (e.is_mapping()) {
        if (!r_.check_keys(e, kOpEntryKeys, "in a supported_ops entry")) continue;
        NodeRef n = e.find("name");
        if (!n) {
          r_.error(e, "supported_ops entry has no 'name'", "add name: torch.<op>");
          continue;
        }
        if (!r_.read_string(n, "name", name)) continue;
        if (NodeRef fx = e.find("force_xfail")) r_.read_bool(fx, "force_xfail", force);
        if (NodeRef dts = e.find("dtypes"); dts && want_list(dts, "dtypes", "dtypes: [{name: float16}]"))
          for (std::size_t k = 0; k < dts.size(); ++k) {
            NodeRef dt = dts.item(k);
            if (dt.is_mapping() && r_.check_keys(dt, kOpDtypeKeys, "in a supported_ops dtypes entry")) {
              if (NodeRef dn = dt.find("name")) read_dtype_name(dn, "name", /*allow_torch_only=*/true);
              if (dt.find("precision"))
                r_.warning(
                    dt.find("precision"),
                    "a per-op precision is not used for edits.ops entries (test_model_ops_db takes atol and rtol "
                    "from global.supported_dtypes only); opcheck does the same",
                    "set the tolerance in global.supported_dtypes, or in opcheck's status config");
            } else if (dt.is_scalar()) {
              read_dtype_name(dt, "dtypes", /*allow_torch_only=*/true);
            }
          }
      } else if (!r_.read_string(e, "supported_ops", name)) {
        continue;
      }
      global_.ops[name] = force;
    }
  }
  if (NodeRef ic = g.find("input_config"); ic && r_.want_mapping(ic, "input_config") &&
                                           r_.check_keys(ic, kInputConfigKeys, "in input_config")) {
    if (NodeRef s = ic.find("seed"); s && r_.read_int(s, "seed", global_.seed) && global_.seed < 0) {
      r_.error(s, "seed must be >= 0, got " + std::to_string(global_.seed), "write a seed such as 123");
      global_.seed = 0;
    }
  }
}

Condition V2Reader::always(std::string reason, NodeRef where, bool strict) {
  Condition c;
  std::string err;
  int col = 0;
  c.expr = "True";
  c.ast = parse_cond_expr(c.expr, err, col);
  c.reason = std::move(reason);
  c.loc = r_.loc(where);
  c.strict = strict;
  return c;
}

bool V2Reader::precheck_tensor(NodeRef t) {
  if (!t.is_mapping()) return true;  // the v1 reader reports it
  bool ok = r_.check_keys(t, kTensorKeys, "in a v2 tensor");
  for (const char* key : {"shape", "dtype"})
    if (!t.find(key)) {
      r_.error(t, std::string("tensor has no '") + key + "' (v2 configs require shape and dtype)",
               std::string("add ") + key + (key[0] == 's' ? ": [sizes...]" : ": torch.float16"));
      ok = false;
    }
  return ok;
}

bool V2Reader::precheck_args(NodeRef args) {
  bool ok = true;
  for (std::size_t i = 0; i < args.size(); ++i) {
    NodeRef a = args.item(i);
    if (!a.is_mapping() || a.size() != 1) continue;  // the v1 reader reports it
    std::string_view kind = a.key(0).text();
    NodeRef v = a.value(0);
    if (kind == "tensor")
      ok = precheck_tensor(v) && ok;
    else if (kind == "tensor_list" && v.is_sequence())
      for (std::size_t j = 0; j < v.size(); ++j) ok = precheck_tensor(v.item(j)) && ok;
    else if (kind == "file") {
      r_.error(a.key(0), "'file' is not an argument kind of v2 configs", "use - tensor: {..., init: rand}");
      ok = false;
    }
  }
  return ok;
}

bool V2Reader::read_op(NodeRef e, Case& out) {
  if (!e.is_mapping()) {
    r_.error(e, "expected an op entry mapping (name, sample_inputs_func, tags, ...), got " + e.describe(),
             "write `- name: torch.add` with `sample_inputs_func: {args: [...]}`");
    return false;
  }
  r_.check_keys(e, kEntryKeys, "in an edits.ops.include entry");
  NodeRef name = e.find("name");
  if (!name) {
    r_.error(e, "op entry has no 'name'", "add name: torch.<op>, e.g. name: torch.add");
    return false;
  }
  if (!r_.read_string(name, "name", out.op)) return false;
  if (!is_op_spelling(out.op)) {
    r_.error(name, "op " + in_quotes(out.op) + " is not an op name",
             "e.g. torch.add, torch.Tensor.view, torch.nn.functional.silu");
    return false;
  }
  return true;
}

void V2Reader::name_entry(NodeRef e, const TestScope& test, Case& out) {
  // Tags: the v1 case name (`torch.add.3`) names the case; identifiers are marks; anything else is reported.
  std::vector<std::string> tags;
  NodeRef tags_node = e.find("tags");
  if (tags_node) read_strings(tags_node, "tags", tags);
  for (std::size_t i = 0; i < tags.size(); ++i) {
    const std::string& t = tags[i];
    if (out.name.empty() && t.size() > out.op.size() + 1 && t.compare(0, out.op.size() + 1, out.op + ".") == 0) {
      out.name = t;
    } else if (t.rfind("model__", 0) == 0) {
      continue;  // the model is the test's (upstream's --model matches these per-op tags; opcheck's the model)
    } else if (is_python_identifier(t)) {
      if (std::find(out.marks.begin(), out.marks.end(), t) == out.marks.end()) out.marks.push_back(t);
    } else {
      r_.warning(tags_node.is_sequence() ? tags_node.item(i) : tags_node,
                 "tag " + in_quotes(t) + " is neither a marker name nor the entry's v1 case name; -m cannot select it",
                 "marks are Python identifiers; a v1 case name starts with the op name, e.g. " + out.op + ".1");
    }
  }
  if (out.name.empty()) out.name = out.op + "." + std::to_string(++op_counts_[out.op]);
  for (const auto& m : test.marks)
    if (std::find(out.marks.begin(), out.marks.end(), m) == out.marks.end()) out.marks.push_back(m);
  out.id = test.model + "::" + out.name;
  r_.set_case_id(out.id);
}

void V2Reader::read_arguments(NodeRef e, Case& out) {
  NodeRef sample = e.find("sample_inputs_func");
  NodeRef args;
  if (!sample) {
    r_.error(e, "op entry has no 'sample_inputs_func'", "add sample_inputs_func: {args: [...], kwargs: {...}}");
  } else if (r_.want_mapping(sample, "sample_inputs_func") &&
             r_.check_keys(sample, kSampleKeys, "in sample_inputs_func")) {
    args = sample.find("args");
    if (args && !is_yaml_null(args) && !want_list(args, "args", "args: [{tensor: {shape: [2], dtype: float16}}]"))
      args = NodeRef();
  }
  // The case dtype is args[0]'s (a tensor, or the first tensor of a list), else float16, as upstream decides it.
  out.dtype = DType::Float16;
  out.dtype_spelling = "float16";
  if (args && args.is_sequence()) {
    if (args.size() > 0 && args.item(0).is_mapping() && args.item(0).size() == 1) {
      NodeRef first = args.item(0).value(0);
      std::string_view kind = args.item(0).key(0).text();
      if (kind == "tensor_list" && first.is_sequence() && first.size() > 0) first = first.item(0);
      if ((kind == "tensor" || kind == "tensor_list") && first.is_mapping())
        if (NodeRef dt = first.find("dtype"); dt && dt.is_scalar())
          if (auto t = parse_dtype(dt.text())) {
            out.dtype = *t;
            out.dtype_spelling.assign(dt.text());
          }
    }
    if (precheck_args(args)) {
      out.inputs.resize(args.size());
      for (std::size_t i = 0; i < args.size(); ++i) r_.read_input(args.item(i), out, out.inputs[i]);
    }
  }
  if (sample && sample.is_mapping())
    if (NodeRef kw = sample.find("kwargs"); kw && !is_yaml_null(kw)) r_.read_kwargs(kw, "kwargs", out.kwargs);
  // torch-spyre's runner drops an op-level `kwargs:`; opcheck passes it (README: differences).
  if (NodeRef kw = e.find("kwargs"); kw && !is_yaml_null(kw)) r_.read_kwargs(kw, "kwargs", out.kwargs);
}

void V2Reader::add_conditions(NodeRef e, const TestScope& test, Case& out) {
  // Mode and filters become conditions of the occurrence: every entry is reported, run or not.
  const auto rule = global_.dtypes.find(out.dtype);
  const bool force_dtype = rule != global_.dtypes.end() && rule->second.force_xfail;
  const std::string where = fs::path(path_).filename().string() + ":" + std::to_string(e.line());
  auto listed = [](const std::vector<DType>& dtypes, DType t) {
    return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
  };
  const std::string dt = torch_dtype_name(out.dtype);
  if (test.mode == Mode::Skip)
    out.skip_if.push_back(always("mode: skip (" + where + ")", e, true));
  else if (std::find(test.excluded_ops.begin(), test.excluded_ops.end(), out.op) != test.excluded_ops.end())
    out.skip_if.push_back(always("op " + out.op + " is in edits.ops.exclude (" + where + ")", e, true));
  else if (listed(test.dtype_exclude, out.dtype))
    out.skip_if.push_back(always("dtype " + dt + " is in edits.dtypes.exclude (" + where + ")", e, true));
  else if (global_.have_dtypes && rule == global_.dtypes.end() && !listed(test.dtype_include, out.dtype))
    out.skip_if.push_back(always("dtype " + dt + " is not in global.supported_dtypes (" + where + ")", e, true));
  else if (global_.have_ops && !global_.ops.count(out.op))
    out.skip_if.push_back(always("op " + out.op + " is not in global.supported_ops (" + where + ")", e, true));

  bool forced = force_dtype;
  if (auto op = global_.ops.find(out.op); op != global_.ops.end()) forced = forced || op->second;
  if (test.mode == Mode::Xfail)
    out.xfail_if.push_back(always("mode: xfail (" + where + ")", e, /*strict=*/false));
  else if (test.mode == Mode::XfailStrict)
    out.xfail_if.push_back(always("mode: xfail_strict (" + where + ")", e, /*strict=*/true));
  else if (test.mode == Mode::MandatorySuccess && forced)
    out.xfail_if.push_back(always(
        "force_xfail for " + (force_dtype ? "dtype " + dt : "op " + out.op) + " (" + where + ")", e, /*strict=*/false));
}

bool V2Reader::read_entry(NodeRef e, const TestScope& test, Case& out) {
  const std::size_t errors_before = diags_.error_count();
  const std::size_t index = entry_index_++;
  r_.set_case_id(test.model + "::#" + std::to_string(index + 1));
  out.loc = r_.loc(e);
  out.model = test.model;
  out.variant = test.variant;
  if (!read_op(e, out)) return false;
  name_entry(e, test, out);
  if (NodeRef d = e.find("description")) {
    if (d.is_scalar())
      out.description.assign(d.text());
    else
      r_.error(d, "expected a string for 'description', got " + d.describe());
  }
  read_arguments(e, out);

  out.seed = global_.seed;
  auto rule = global_.dtypes.find(out.dtype);
  const DtypeRule tol = rule != global_.dtypes.end() ? rule->second : DtypeRule{};
  out.atol = tol.atol;
  out.rtol = tol.rtol;
  out.upstream_test = v2_upstream_test_name(out.op, index, out.dtype);
  add_conditions(e, test, out);
  return diags_.error_count() == errors_before;
}

bool V2Reader::read_test_names(NodeRef t, std::vector<std::string>& names) {
  NodeRef names_node = t.find("names");
  if (!names_node)
    r_.error(t, "test has no 'names'", std::string("add names: [") + kV2ModelOpsTest + "]");
  else
    read_strings(names_node, "names", names);
  bool runs = false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == kV2ModelOpsTest) {
      runs = true;
      continue;
    }
    r_.warning(names_node.is_sequence() ? names_node.item(i) : names_node,
               "test " + in_quotes(names[i]) + " is not " + kV2ModelOpsTest + "; opcheck runs nothing under it",
               std::string("opcheck runs the edits.ops entries of ") + kV2ModelOpsTest);
  }
  return runs;
}

bool V2Reader::read_test_model(NodeRef t, TestScope& test, bool& spyre) {
  // The model: the test's model__NAME tag, else the file's stem; a _spyre/__spyre suffix marks the variant.
  std::vector<std::string> tags;
  if (NodeRef tg = t.find("tags")) read_strings(tg, "tags", tags);
  for (const auto& tag : tags) {
    if (tag.rfind("model__", 0) == 0 && tag.size() > 7) {
      if (test.model.empty()) test.model = strip_spyre(tag.substr(7), spyre);
    } else if (is_python_identifier(tag)) {
      test.marks.push_back(tag);
    }
  }
  bool stem_spyre = false;
  std::string from_stem = strip_spyre(stem_, stem_spyre);
  if (test.model.empty()) test.model = from_stem;
  spyre = spyre || stem_spyre;
  if (test.model.find("::") != std::string::npos || test.model.find('/') != std::string::npos) {
    r_.error(t, "model name " + in_quotes(test.model) + " may not contain '::' or '/'",
             "rename the model__ tag or the file");
    return false;
  }
  return true;
}

NodeRef V2Reader::read_edits(NodeRef t, TestScope& test) {
  NodeRef include;
  NodeRef edits = t.find("edits");
  if (!edits || !r_.want_mapping(edits, "edits")) return include;
  r_.check_keys(edits, kEditKeys, "in edits");
  if (NodeRef ops = edits.find("ops");
      ops && r_.want_mapping(ops, "ops") && r_.check_keys(ops, kIncludeExcludeKeys, "in edits.ops")) {
    include = ops.find("include");
    if (include && !want_list(include, "include", "include: [{name: torch.add, sample_inputs_func: ...}]"))
      include = NodeRef();
    if (NodeRef ex = ops.find("exclude"); ex && want_list(ex, "exclude", "exclude: [torch.add]"))
      for (std::size_t i = 0; i < ex.size(); ++i) {
        NodeRef item = ex.item(i);
        if (item.is_mapping() && !r_.check_keys(item, kNamedItemKeys, "in an edits.ops.exclude entry")) continue;
        NodeRef n = item.is_mapping() ? item.find("name") : item;
        std::string s;
        if (!n)
          r_.error(item, "edits.ops.exclude entry has no 'name'", "write the op name, e.g. - torch.add");
        else if (r_.read_string(n, "exclude", s))
          test.excluded_ops.push_back(s);
      }
  }
  if (NodeRef dts = edits.find("dtypes");
      dts && r_.want_mapping(dts, "dtypes") && r_.check_keys(dts, kIncludeExcludeKeys, "in edits.dtypes")) {
    if (NodeRef in = dts.find("include")) read_dtype_list(in, "include", test.dtype_include);
    if (NodeRef ex = dts.find("exclude")) read_dtype_list(ex, "exclude", test.dtype_exclude);
  }
  for (const char* key : {"modules", "functions"})
    if (NodeRef n = edits.find(key); n && !is_yaml_null(n) && !(n.is_mapping() && n.size() == 0))
      r_.warning(n, std::string("edits.") + key + " is not run by opcheck (it checks op calls only)",
                 "run module and function tests with torch-spyre's runner");
  return include;
}

void V2Reader::read_entries(NodeRef include, TestScope& test, bool spyre) {
  auto [slot, added] = manifest_of_.emplace(test.model, manifests_.size());
  if (added) {
    manifests_.emplace_back();
    manifests_.back().model = test.model;
    manifests_.back().variant = spyre ? "spyre" : "";
  } else if (manifests_[slot->second].variant.empty() && spyre) {
    manifests_[slot->second].variant = "spyre";
  }
  Manifest& m = manifests_[slot->second];
  test.variant = m.variant;
  for (std::size_t i = 0; i < include.size(); ++i) {
    Case c;
    if (!read_entry(include.item(i), test, c)) continue;
    auto [first, inserted] = listed_.emplace(c.id, Listed{test.mode, c.loc.line, 1});
    if (!inserted) {
      if (first->second.mode != test.mode) {
        r_.error(include.item(i),
                 "entry " + in_quotes(c.name) + " is listed twice with different modes (" +
                     std::string(kModes[int(test.mode)]) + " here, " + std::string(kModes[int(first->second.mode)]) +
                     " at line " + std::to_string(first->second.line) + "); this one is dropped",
                 "keep one listing, under the test whose mode it should have");
        continue;
      }
      // The same mode again: another occurrence of the entry, reported under its own name.
      const std::string renamed = c.name + "~" + std::to_string(++first->second.listings);
      r_.set_case_id(c.id);
      r_.warning(include.item(i),
                 "entry " + in_quotes(c.name) + " is listed again (first at line " +
                     std::to_string(first->second.line) + "); this occurrence is " + in_quotes(renamed),
                 "remove the repeated listing unless the call is meant to be reported twice");
      c.name = renamed;
      c.id = c.model + "::" + renamed;
    }
    m.cases.push_back(std::move(c));
  }
}

void V2Reader::read_test(NodeRef t) {
  r_.set_case_id({});
  if (!r_.want_mapping(t, "tests")) return;
  r_.check_keys(t, kTestKeys, "in a test of test_suite_config.files");
  std::vector<std::string> names;
  const bool runs = read_test_names(t, names);
  TestScope test;
  if (NodeRef m = t.find("mode")) read_mode(m, test.mode);
  bool spyre = false;
  if (!read_test_model(t, test, spyre)) return;
  NodeRef include = read_edits(t, test);
  if (!include || !runs) {
    if (include && include.size() > 0 && !names.empty())
      r_.warning(include, std::to_string(include.size()) + " op entries of this test are not run",
                 std::string("list them under a test named ") + kV2ModelOpsTest);
    else if (runs)
      r_.warning(t, "test has no edits.ops.include entries", "add the op calls under edits: {ops: {include: [...]}}");
    // Entries still count for upstream's test indices.
    if (include) entry_index_ += include.size();
    return;
  }
  read_entries(include, test, spyre);
}

void V2Reader::read_file(NodeRef f) {
  if (!r_.want_mapping(f, "files")) return;
  r_.check_keys(f, kFileKeys, "in a test_suite_config.files entry");
  // `path` names upstream's test file; opcheck does not need it, only its type is checked.
  if (NodeRef p = f.find("path")) {
    std::string s;
    r_.read_string(p, "path", s);
  }
  // unlisted_test_mode is the mode of the file's tests that no entry names. opcheck runs only the edits.ops
  // entries of test_model_ops_db, which a test entry names by definition, so no unlisted test is ever run here: a
  // mode other than skip asks for verdicts opcheck does not give, which is said.
  if (NodeRef m = f.find("unlisted_test_mode")) {
    Mode mode;
    if (read_mode(m, mode) && mode != Mode::Skip)
      r_.warning(m,
                 "unlisted_test_mode: " + std::string(kModes[int(mode)]) +
                     " applies to tests of this file that no entry names; opcheck runs only the edits.ops entries of " +
                     kV2ModelOpsTest + ", so those tests are not run here",
                 "run the file's other tests with torch-spyre's runner, or write unlisted_test_mode: skip");
  }
  NodeRef tests = f.find("tests");
  if (!tests) {
    r_.error(f, "files entry has no 'tests'", std::string("add tests: [{names: [") + kV2ModelOpsTest + "], ...}]");
    return;
  }
  if (!want_list(tests, "tests", std::string("tests: [{names: [") + kV2ModelOpsTest + "], ...}]")) return;
  for (std::size_t i = 0; i < tests.size(); ++i) read_test(tests.item(i));
}

bool V2Reader::run(const yaml::Tree& tree, std::vector<Manifest>& out) {
  NodeRef top = tree.root();
  stem_ = fs::path(path_).stem().string();
  const std::size_t errors_before = diags_.error_count();
  r_.check_keys(top, kRootKeys, "at the top of a v2 config");
  if (NodeRef cases = top.find("cases"); cases && !is_yaml_null(cases) && !(cases.is_sequence() && cases.size() == 0))
    r_.error(cases, "a v2 config's 'cases' must be empty (its calls are the edits.ops.include entries)",
             "move the cases into a v1 manifest of their own, or list them under edits.ops.include");
  NodeRef suite = top.find("test_suite_config");
  if (!r_.want_mapping(suite, "test_suite_config")) return false;
  r_.check_keys(suite, kSuiteKeys, "in test_suite_config");
  if (NodeRef g = suite.find("global")) read_global(g);
  NodeRef files = suite.find("files");
  if (!files) {
    diags_.error(r_.loc(suite), "test_suite_config has no 'files'", {}, "add files: [{path: ..., tests: [...]}]");
    return false;
  }
  const bool file_ok = diags_.error_count() == errors_before;
  if (want_list(files, "files", "files: [{path: ..., tests: [...]}]"))
    for (std::size_t i = 0; i < files.size(); ++i) read_file(files.item(i));
  if (manifests_.empty()) {
    Manifest m;
    bool spyre = false;
    m.model = strip_spyre(stem_, spyre);
    m.variant = spyre ? "spyre" : "";
    manifests_.push_back(std::move(m));
  }
  for (auto& m : manifests_) out.push_back(std::move(m));
  return file_ok;
}

}  // namespace

std::string v2_upstream_test_name(const std::string& op, std::size_t index, DType dtype) {
  std::string flat = op;
  std::replace(flat.begin(), flat.end(), '.', '_');
  return "test_model_ops_db_" + flat + "__" + std::to_string(index) + "_spyre_" + torch_dtype_name(dtype);
}

bool is_v2_config(const yaml::Tree& tree) {
  NodeRef top = tree.root();
  return top.is_mapping() && top.find("test_suite_config");
}

bool normalize_v2_config(const yaml::Tree& tree, const std::string& path, std::vector<Manifest>& out,
                         DiagnosticList& diags) {
  V2Reader r(path, diags);
  return r.run(tree, out);
}

}  // namespace opcheck
