// One edits.ops.include entry of a v2 config -> a Case: its op, name and marks, arguments, tolerances, and the
// conditions its test's mode and the suite's filters give it.
#include <algorithm>
#include <filesystem>

#include "manifest/v2_config.h"
#include "manifest/v2_reader.h"

namespace fs = std::filesystem;

namespace opcheck::v2 {
namespace {

using Keys = std::vector<std::string_view>;

const Keys kEntryKeys{"name", "description", "tags", "sample_inputs_func", "kwargs"};
const Keys kSampleKeys{"args", "kwargs"};
const Keys kTensorKeys{"shape", "dtype", "device", "init", "init_args", "stride", "storage_offset"};

}  // namespace

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
  if (out.op.size() > kMaxNameBytes) {
    r_.error(name, too_long("op", out.op), "name the op as torch writes it, e.g. torch.add");
    return false;
  }
  if (!r_.refuse_control_characters(name, "op", out.op) || refuse_machine_op(r_, name, out.op)) return false;
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
  // torch-spyre's runner drops an op-level `kwargs:`; opcheck passes it (docs/manifests.md: where opcheck differs).
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
  if (!test.not_run.empty())
    out.skip_if.push_back(always(test.not_run + " (" + where + ")", e, true));
  else if (test.mode == Mode::Skip)
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

}  // namespace opcheck::v2
