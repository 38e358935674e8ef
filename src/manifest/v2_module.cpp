// Module cases from a v2 test_suite_config's edits.modules.include (torch-spyre's module_tests configs): each entry's
// forward invocations become one Case each, the invocations of one entry sharing its module build.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "common/spelling.h"
#include "common/text.h"
#include "manifest/v2_reader.h"

namespace fs = std::filesystem;

namespace opcheck::v2 {
namespace {

using Keys = std::vector<std::string_view>;

// torch-spyre's keys, then opcheck's own (sizes, sizes_file, attn_implementation: docs/modules.md).
const Keys kModuleEntryKeys{"name",  "module_path", "description", "constructor_inputs", "forward_inputs",
                            "sizes", "sizes_file",  "attn_implementation", "tags"};
const Keys kArgsKwargsKeys{"args", "kwargs"};
const Keys kAttnImplementations{"eager", "sdpa"};

// A `tensor:` or `tensor_list:` mapping (the forward's tensor arguments), as opposed to a value.
bool is_tensor_item(NodeRef n) {
  return n.is_mapping() && n.size() == 1 && (n.key(0).text() == "tensor" || n.key(0).text() == "tensor_list");
}

}  // namespace

bool is_module_test_name(std::string_view name) { return name.find("TestModule") != std::string_view::npos; }

// A module case imports its module_path and calls it: a manifest may name classes of these packages only, so that
// no manifest imports (and runs) arbitrary code. OPCHECK_MODULE_PACKAGES (comma-separated) adds a team's own.
bool module_package_allowed(const std::string& path, std::string& allowed) {
  std::vector<std::string> packages{"transformers", "torch"};
  if (const char* extra = std::getenv("OPCHECK_MODULE_PACKAGES"))
    for (const std::string& p : split_list(extra))
      if (!p.empty()) packages.push_back(p);
  allowed.clear();
  for (const auto& p : packages) allowed += (allowed.empty() ? "" : ", ") + p;
  const std::string top = path.substr(0, path.find('.'));
  return std::find(packages.begin(), packages.end(), top) != packages.end();
}

void V2Reader::read_module_ctor(NodeRef e, ModuleSpec& m) {
  NodeRef ctor = e.find("constructor_inputs");
  if (!ctor || is_yaml_null(ctor)) return;
  if (!r_.want_mapping(ctor, "constructor_inputs") || !r_.check_keys(ctor, kArgsKwargsKeys, "in constructor_inputs"))
    return;
  if (NodeRef args = ctor.find("args"); args && !is_yaml_null(args) &&
                                        want_list(args, "args", "args: [{value: 4096}]"))
    for (std::size_t i = 0; i < args.size(); ++i) {
      NodeRef item = args.item(i);
      NodeRef v = item.is_mapping() && item.size() == 1 && item.key(0).text() == "value" ? item.value(0) : item;
      PyValue value;
      if (r_.read_value(v, "args", value)) m.ctor_args.push_back(std::move(value));
    }
  if (NodeRef kw = ctor.find("kwargs"); kw && !is_yaml_null(kw)) r_.read_kwargs(kw, "kwargs", m.ctor_kwargs);
}

void V2Reader::read_module_options(NodeRef e, ModuleSpec& m) {
  if (NodeRef s = e.find("sizes"); s && !is_yaml_null(s)) r_.read_kwargs(s, "sizes", m.sizes);
  if (NodeRef f = e.find("sizes_file"); f && r_.read_string(f, "sizes_file", m.sizes_file)) {
    fs::path p = m.sizes_file;
    if (p.is_relative()) p = fs::absolute(fs::path(path_).parent_path() / p);
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
      r_.error(f, "sizes_file " + in_quotes(m.sizes_file) + " is not a file",
               "name a model's config.json (a path relative to this config's folder, or absolute)");
    m.sizes_file = p.lexically_normal().string();
  }
  if (NodeRef a = e.find("attn_implementation"); a && r_.read_string(a, "attn_implementation", m.attn_implementation) &&
                                                 !is_one_of(m.attn_implementation, kAttnImplementations))
    r_.error(a, "unknown attn_implementation " + in_quotes(m.attn_implementation), "use eager or sdpa");
}

// One invocation's arguments: positional tensors and values, keyword tensors as keyword inputs, keyword values as
// the case's kwargs. A rotary embedding's cos and sin drawn as integers are said: no real run produces them.
void V2Reader::read_module_invocation(NodeRef inv, Case& c) {
  if (!r_.want_mapping(inv, "forward_inputs") || !r_.check_keys(inv, kArgsKwargsKeys, "in a forward_inputs item"))
    return;
  if (NodeRef args = inv.find("args"); args && !is_yaml_null(args) &&
                                       want_list(args, "args", "args: [{tensor: {shape: [1, 8, 64]}}]"))
    for (std::size_t i = 0; i < args.size(); ++i) {
      Input in;
      if (r_.read_input(args.item(i), c, in)) c.inputs.push_back(std::move(in));
    }
  NodeRef kw = inv.find("kwargs");
  if (!kw || is_yaml_null(kw) || !r_.want_mapping(kw, "kwargs")) return;
  for (std::size_t i = 0; i < kw.size(); ++i) {
    const std::string key(kw.key(i).text());
    NodeRef v = kw.value(i);
    if (!is_tensor_item(v)) {
      PyValue value;
      if (r_.read_value(v, key, value)) c.kwargs.emplace_back(key, std::move(value));
      continue;
    }
    Input in;
    in.keyword = key;
    if (!r_.read_input_kind(v, v.key(0).text(), v.value(0), c, in)) continue;
    if (key == "position_embeddings") warn_unreal_rotary(v, in);
    c.inputs.push_back(std::move(in));
  }
}

void V2Reader::warn_unreal_rotary(NodeRef at, const Input& in) {
  for (const TensorSpec& t : in.list) {
    if (t.init != InitKind::Randint) continue;
    r_.warning(at,
               "position_embeddings (a rotary embedding's cos and sin) are drawn as integers (init: randint); a "
               "rotary embedding's values lie in [-1, 1], so no real run produces these inputs",
               "in opcheck's own dialect write them with init: uniform, init_args: {low: -1, high: 1}");
    return;
  }
}

void V2Reader::read_module_entries(NodeRef include, TestScope& test, bool spyre) {
  Manifest& m = manifest_for(test, spyre);
  for (std::size_t i = 0; i < include.size(); ++i) {
    NodeRef e = include.item(i);
    r_.set_case_id(test.model + "::#module" + std::to_string(i + 1));
    if (!r_.want_mapping(e, "include") || !r_.check_keys(e, kModuleEntryKeys, "in an edits.modules.include entry"))
      continue;
    const std::size_t errors_before = diags_.error_count();
    auto spec = std::make_shared<ModuleSpec>();
    NodeRef name = e.find("name");
    NodeRef path = e.find("module_path");
    if (!name || !r_.read_string(name, "name", spec->name) || spec->name.empty()) {
      r_.error(e, "module entry has no 'name'", "add name: GraniteMLP_1");
      continue;
    }
    if (!r_.refuse_control_characters(name, "name", spec->name)) continue;
    if (!modules_listed_.insert(test.model + "::" + spec->name).second) continue;  // the same entry in another test
    r_.set_case_id(test.model + "::" + spec->name);
    if (!path || !r_.read_string(path, "module_path", spec->module_path) || !is_op_spelling(spec->module_path) ||
        spec->module_path.find('.') == std::string::npos) {
      r_.error(path ? path : e, "module entry needs 'module_path', the module's class as package.module.Class",
               "write module_path: transformers.models.llama.modeling_llama.LlamaMLP");
      continue;
    }
    if (std::string allowed; !module_package_allowed(spec->module_path, allowed)) {
      r_.error(path, "module_path " + in_quotes(spec->module_path) + " is not in a package module cases may import (" +
                         allowed + ")",
               "name a transformers or torch class, or add the package to OPCHECK_MODULE_PACKAGES (comma-separated)");
      continue;
    }
    read_module_ctor(e, *spec);
    read_module_options(e, *spec);
    std::string description;
    if (NodeRef d = e.find("description"); d && d.is_scalar()) description.assign(d.text());
    std::vector<std::string> marks = test.marks;
    if (NodeRef tg = e.find("tags")) {
      std::vector<std::string> tags;
      read_strings(tg, "tags", tags);
      for (const auto& t : tags)
        if (is_python_identifier(t) && std::find(marks.begin(), marks.end(), t) == marks.end()) marks.push_back(t);
    }
    NodeRef fwd = e.find("forward_inputs");
    if (!fwd || !want_list(fwd, "forward_inputs", "forward_inputs: [{args: [...], kwargs: {...}}]") ||
        fwd.size() == 0) {
      if (!fwd || fwd.is_sequence())
        r_.error(fwd ? fwd : e, "module entry has no forward_inputs: it makes no case",
                 "add forward_inputs: [{args: [{tensor: {shape: [1, 8, 64]}}], kwargs: {}}]");
      continue;
    }
    spec->invocations = static_cast<std::int64_t>(fwd.size());
    spec->build_key = test.model + "::" + spec->name;
    if (diags_.error_count() != errors_before) continue;
    for (std::size_t k = 0; k < fwd.size(); ++k) {
      Case c;
      c.model = test.model;
      c.variant = test.variant;
      c.name = spec->name + "." + std::to_string(k);
      c.id = test.model + "::" + c.name;
      r_.set_case_id(c.id);
      c.loc = r_.loc(fwd.item(k));
      c.op = spec->module_path;
      c.description = description;
      c.marks = marks;
      c.seed = global_.seed;
      c.dtype = DType::Float32;
      c.dtype_spelling = "float32";
      read_module_invocation(fwd.item(k), c);
      for (const Input& in : c.inputs) {  // the case dtype: its first floating tensor's
        const TensorSpec* t = in.kind == Input::Kind::Tensor ? &in.tensor : in.list.empty() ? nullptr : &in.list[0];
        if (t && dtype_is_floating(t->dtype)) {
          c.dtype = t->dtype;
          c.dtype_spelling = t->dtype_spelling;
          break;
        }
      }
      // Tolerances: the config's for the case dtype; a bfloat16 case takes float16's (torch-spyre's float16 test
      // runs these bf16 tensors with it), as does any other dtype the config does not list.
      auto rule = global_.dtypes.find(c.dtype);
      if (rule == global_.dtypes.end() && c.dtype != DType::Float32) rule = global_.dtypes.find(DType::Float16);
      if (rule != global_.dtypes.end()) {
        c.atol = rule->second.atol;
        c.rtol = rule->second.rtol;
      }
      auto own = std::make_shared<ModuleSpec>(*spec);
      own->invocation = static_cast<std::int64_t>(k);
      c.module = std::move(own);
      c.upstream_test = test.upstream + "[" + c.name + "]";
      if (test.mode == Mode::Skip) c.skip_if.push_back(always("mode: skip", fwd.item(k), true));
      if (test.mode == Mode::Xfail || test.mode == Mode::XfailStrict)
        c.xfail_if.push_back(always("mode: xfail", fwd.item(k), test.mode == Mode::XfailStrict));
      if (diags_.error_count() == errors_before) m.cases.push_back(std::move(c));
    }
  }
}

}  // namespace opcheck::v2
