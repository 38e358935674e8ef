#include "manifest/v2_config.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <unordered_map>

#include "common/edit_distance.h"
#include "common/spelling.h"
#include "common/text.h"
#include "manifest/input_reader.h"
#include "manifest/v2_reader.h"

namespace fs = std::filesystem;

namespace opcheck {
namespace v2 {
namespace {

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
const Keys kModes{"mandatory_success", "xfail", "xfail_strict", "skip"};
// Dtype names torch knows and opcheck's tensors do not; a supported_dtypes list may name them.
const Keys kTorchOnlyDtypes{"uint16", "uint32", "uint64", "torch.uint16", "torch.uint32", "torch.uint64"};

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

}  // namespace

bool V2Reader::want_list(NodeRef n, std::string_view key, const std::string& example) {
  if (n.is_sequence()) return true;
  r_.error(n, "expected a list for " + in_quotes(key) + ", got " + n.describe(),
           "write it as a YAML list, e.g. " + example);
  return false;
}

bool V2Reader::read_strings(NodeRef n, std::string_view key, std::vector<std::string>& out) {
  // Tags and names become model names, case names and marks: held to the case-name rule.
  const std::string_view what = key == "tags" ? "tag" : key == "names" ? "name" : key;
  if (n.is_scalar() && !is_yaml_null(n)) {  // a single name stands for a list of one
    if (!r_.refuse_control_characters(n, what, n.text())) return false;
    out.emplace_back(n.text());
    return true;
  }
  if (!want_list(n, key, std::string(key) + ": [a, b]")) return false;
  bool ok = true;
  for (std::size_t i = 0; i < n.size(); ++i) {
    std::string s;
    if (r_.read_string(n.item(i), key, s) && r_.refuse_control_characters(n.item(i), what, s))
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
  if (allow_torch_only && is_one_of(s, kTorchOnlyDtypes)) return std::nullopt;
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

bool V2Reader::read_test_names(NodeRef t, std::vector<std::string>& names, std::string& not_run) {
  NodeRef names_node = t.find("names");
  if (!names_node) {
    r_.error(t, "test has no 'names'", std::string("add names: [") + kV2ModelOpsTest + "]");
  } else if (names_node.is_scalar() && names_node.describe() != "a string") {
    // A single name stands for a list of one; a number or a boolean is no name (the entries would vanish).
    r_.error(names_node, "'names' must be a list of test names, got " + names_node.describe(),
             std::string("names: [") + kV2ModelOpsTest + "]");
    return false;
  } else if (names_node.is_sequence() && names_node.size() == 0) {
    // No test named: every entry of this test would be dropped without a word.
    r_.error(names_node, "'names' lists no test, so none of this test's entries would run",
             std::string("names: [") + kV2ModelOpsTest + "]");
    return false;
  } else {
    read_strings(names_node, "names", names);
  }
  bool runs = false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == kV2ModelOpsTest) {
      runs = true;
      continue;
    }
    if (is_module_test_name(names[i])) continue;  // its edits.modules entries are module cases (v2_module.cpp)
    NodeRef at = names_node.is_sequence() ? names_node.item(i) : names_node;
    // A near miss of the one test opcheck runs is a typo: its entries would silently not run. A name that differs
    // only in case is one, however many letters differ (pytest's node ids are case-sensitive).
    const bool case_slip = equal_ignoring_case(names[i], kV2ModelOpsTest);
    if (case_slip || edit_distance(names[i], kV2ModelOpsTest) <= 3) {
      r_.error(at, "test " + in_quotes(names[i]) + " is not " + kV2ModelOpsTest + " (did you mean '" +
                       kV2ModelOpsTest + "'?" + (case_slip ? " Test names are case-sensitive)" : ")"),
               std::string("write ") + kV2ModelOpsTest + ", the test whose edits.ops entries opcheck runs");
      continue;
    }
    // Another kind's test file (PyTorch's, torch-spyre's own) is named with its kind (name_opinfo_entries).
    if (test_file_.find("test_model_ops") == std::string::npos && !test_file_.empty()) {
      if (not_run.empty()) not_run = "not run: test " + in_quotes(names[i]) + " is not " + kV2ModelOpsTest;
      continue;
    }
    r_.warning(at, "test " + in_quotes(names[i]) + " is not " + kV2ModelOpsTest + "; opcheck runs nothing under it",
               std::string("opcheck runs the edits.ops entries of ") + kV2ModelOpsTest);
    if (not_run.empty()) not_run = "not run: test " + in_quotes(names[i]) + " is not " + kV2ModelOpsTest;
  }
  if (runs) not_run.clear();
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

NodeRef V2Reader::read_edits(NodeRef t, TestScope& test, NodeRef& modules) {
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
  if (NodeRef mods = edits.find("modules"); mods && !is_yaml_null(mods) && !(mods.is_mapping() && mods.size() == 0)) {
    if (r_.want_mapping(mods, "modules") && r_.check_keys(mods, kIncludeExcludeKeys, "in edits.modules")) {
      modules = mods.find("include");
      if (modules && !want_list(modules, "include", "include: [{name: LlamaMLP_1, module_path: ...}]"))
        modules = NodeRef();
    }
  }
  if (NodeRef n = edits.find("functions"); n && !is_yaml_null(n) && !(n.is_mapping() && n.size() == 0))
    r_.warning(n, "edits.functions is not run by opcheck (it checks op calls and modules)",
               "run function tests with torch-spyre's runner");
  return include;
}

Manifest& V2Reader::manifest_for(const TestScope& test, bool spyre) {
  auto [slot, added] = manifest_of_.emplace(test.model, manifests_.size());
  if (added) {
    manifests_.emplace_back();
    manifests_.back().model = test.model;
    manifests_.back().variant = spyre ? "spyre" : "";
  } else if (manifests_[slot->second].variant.empty() && spyre) {
    manifests_[slot->second].variant = "spyre";
  }
  return manifests_[slot->second];
}

void V2Reader::read_entries(NodeRef include, TestScope& test, bool spyre) {
  Manifest& m = manifest_for(test, spyre);
  test.variant = m.variant;
  for (std::size_t i = 0; i < include.size(); ++i) {
    Case c;
    if (!read_entry(include.item(i), test, c)) continue;
    auto [first, inserted] = listed_.emplace(c.id, Listed{test.mode, c.loc.line, 1, test.not_run.empty()});
    if (!inserted) {
      if (first->second.mode != test.mode && first->second.runs && test.not_run.empty()) {
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
  TestScope test;
  const bool runs = read_test_names(t, names, test.not_run);
  if (NodeRef m = t.find("mode")) read_mode(m, test.mode);
  bool spyre = false;
  if (!read_test_model(t, test, spyre)) return;
  NodeRef modules;
  NodeRef include = read_edits(t, test, modules);
  if (std::any_of(names.begin(), names.end(), [](const std::string& n) { return is_module_test_name(n); })) {
    test.upstream = *std::find_if(names.begin(), names.end(), [](const std::string& n) { return is_module_test_name(n); });
    // '*TestModule*::test_forward' is a pattern of upstream's runner: the test's own name has no wildcards.
    test.upstream.erase(std::remove(test.upstream.begin(), test.upstream.end(), '*'), test.upstream.end());
    if (modules && modules.size() > 0) {
      test.variant = manifest_for(test, spyre).variant;
      read_module_entries(modules, test, spyre);
    } else {
      r_.warning(t, "module test has no edits.modules.include entries", "add the modules under edits: {modules: {include: [...]}}");
    }
    return;
  }
  if (modules && modules.size() > 0)
    r_.warning(modules, "edits.modules entries of a test that is not a module test (TestModule...) are not run",
               "list them under a test named '*TestModule*::test_forward'");
  if (!runs && name_opinfo_entries(t, include, names)) return;
  if (include && include.size() > 0 && !runs && !test.not_run.empty()) {
    // Listed under another test: reported, each entry skipped with the reason, never silently dropped.
    r_.warning(include, std::to_string(include.size()) + " op entries of this test are not run",
               std::string("list them under a test named ") + kV2ModelOpsTest);
    read_entries(include, test, spyre);
    return;
  }
  if (!include || !runs) {
    if (runs)
      r_.warning(t, "test has no edits.ops.include entries", "add the op calls under edits: {ops: {include: [...]}}");
    // Entries still count for upstream's test indices.
    if (include) entry_index_ += include.size();
    return;
  }
  read_entries(include, test, spyre);
}

// torch-spyre's config kinds beside model_ops_tests and module_tests (upstream_tests, upstream_tests_beta,
// torch_spyre_tests, distributed_tests, example_test_config) run test files of PyTorch or torch-spyre, which opcheck
// does not run. Their edits.ops entries name OpInfo entries by `name` alone: opcheck's way to their samples is
// import-opinfo, which the warning spells out. True when the test's entries are all such names (nothing to read).
bool V2Reader::name_opinfo_entries(NodeRef t, NodeRef include, const std::vector<std::string>& names) {
  const std::string file = test_file_.substr(test_file_.find_last_of('/') + 1);
  const bool pytorch = test_file_.find("${TORCH_ROOT}") != std::string::npos;
  const bool distributed = test_file_.find("distributed") != std::string::npos;
  const std::string kind = distributed ? "a distributed test file (" + file + ")"
                           : pytorch   ? "PyTorch's own test file " + file
                                       : "torch-spyre's own test file " + file;
  std::vector<std::string> entries;
  bool only_names = include && include.is_sequence() && include.size() > 0;
  for (std::size_t i = 0; only_names && i < include.size(); ++i) {
    NodeRef e = include.item(i);
    NodeRef name = e.is_mapping() ? e.find("name") : e;
    if (!name || !name.is_scalar() || (e.is_mapping() && e.find("sample_inputs_func"))) only_names = false;
    else entries.emplace_back(name.text());
  }
  const std::string test = names.empty() ? std::string("this test") : in_quotes(names.front());
  if (!only_names) {
    if (!include || include.size() == 0)
      r_.warning(t, test + " runs " + kind + ", which opcheck does not run (it runs op calls and modules)",
                 "run that file with its own runner; opcheck's cases come from model_ops_tests and module_tests "
                 "configs, and PyTorch's samples of an op from `opcheck import-opinfo --ops NAME -o DIR`");
    return false;
  }
  std::string list;
  for (std::size_t i = 0; i < entries.size() && i < 8; ++i) list += (i ? "," : "") + entries[i];
  if (entries.size() > 8) list += ",...";
  r_.warning(include,
             test + " runs " + kind + " on " + std::to_string(entries.size()) + " OpInfo entr" +
                 (entries.size() == 1 ? "y" : "ies") + " (" + list + "), which opcheck does not run as a test file",
             "their samples as opcheck cases: opcheck import-opinfo --ops " + list + " -o opinfo, then "
             "opcheck run --manifests opinfo");
  return true;
}

void V2Reader::read_file(NodeRef f) {
  if (!r_.want_mapping(f, "files")) return;
  r_.check_keys(f, kFileKeys, "in a test_suite_config.files entry");
  // `path` names upstream's test file; opcheck does not need it, only its type is checked.
  test_file_.clear();
  if (NodeRef p = f.find("path")) r_.read_string(p, "path", test_file_);
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

}  // namespace v2

std::string v2_upstream_test_name(const std::string& op, std::size_t index, DType dtype) {
  std::string flat = op;
  std::replace(flat.begin(), flat.end(), '.', '_');
  return "test_model_ops_db_" + flat + "__" + std::to_string(index) + "_spyre_" + torch_dtype_name(dtype);
}

bool is_v2_config(const yaml::Tree& tree) {
  yaml::NodeRef top = tree.root();
  return top.is_mapping() && top.find("test_suite_config");
}

bool normalize_v2_config(const yaml::Tree& tree, const std::string& path, std::vector<Manifest>& out,
                         DiagnosticList& diags) {
  v2::V2Reader r(path, diags);
  return r.run(tree, out);
}

}  // namespace opcheck
