#include "exec/module_case.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include <nlohmann/json.hpp>

#include "judge/backend_freedoms_table.h"
#include "exec/accumulation.h"
#include "exec/compare.h"
#include "exec/device_ops.h"
#include "exec/inputs.h"
#include "exec/op_error.h"
#include "exec/python_device.h"
#include "exec/python_host.h"
#include "repro/bundle_layout.h"

namespace opcheck::exec {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double module_ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// What the Python side gets: the module, how to build it, and the forward's arguments as slots of `tensors`.
struct ModuleRequest {
  json j;
  std::vector<at::Tensor> tensors;  // the host inputs, built by opcheck's input builder
};

json kwargs_json(const KwArgs& kw) {
  json out = json::object();
  for (const auto& [k, v] : kw) out[k] = v.repr();
  return out;
}

/// The request for `c`, its inputs built with their strides and offsets; a message when an input cannot be built.
std::optional<std::string> build_request(const ExecOptions& opts, const at::Device& device, const Case& c,
                                         ModuleRequest& req) {
  const ModuleSpec& m = *c.module;
  json& j = req.j;
  j["module_path"] = m.module_path;
  j["ctor_args"] = json::array();
  for (const PyValue& v : m.ctor_args) j["ctor_args"].push_back(v.repr());
  j["ctor_kwargs"] = kwargs_json(m.ctor_kwargs);
  j["sizes"] = kwargs_json(m.sizes);
  j["sizes_file"] = m.sizes_file;
  j["attn_implementation"] = m.attn_implementation;
  j["seed"] = c.seed;
  // Everything a build depends on: the invocations of one module, and only they, share it.
  j["build"] = {m.module_path, j["ctor_args"], j["ctor_kwargs"], j["sizes"], m.sizes_file, m.attn_implementation, c.seed};
  j["device"] = device.str();
  j["memory_budget"] = opts.module_memory_budget < 0 ? default_module_memory_budget() : opts.module_memory_budget;
  j["compile_backend"] = opts.compile_backend;
  j["args"] = json::array();
  j["kwargs"] = json::object();
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const Input& in = c.inputs[i];
    json item;
    try {
      if (in.kind == Input::Kind::Tensor) {
        item = {"t", req.tensors.size()};
        req.tensors.push_back(build_tensor(in.tensor, input_seed(c.seed, i)));
      } else if (in.kind == Input::Kind::TensorList) {
        json slots = json::array();
        for (std::size_t e = 0; e < in.list.size(); ++e) {
          slots.push_back(req.tensors.size());
          req.tensors.push_back(build_tensor(in.list[e], input_seed(c.seed, i, e)));
        }
        item = {"l", slots};
      } else {
        item = {"v", in.value.repr()};
      }
    } catch (...) {
      return "input " + (in.keyword.empty() ? std::to_string(i) : in.keyword) + ": " +
             op_error_of(std::current_exception()).message;
    }
    if (in.keyword.empty())
      j["args"].push_back(item);
    else
      j["kwargs"][in.keyword] = item;
  }
  for (const auto& [k, v] : c.kwargs) j["kwargs"][k] = json{"v", v.repr()};
  // The traced calls these rules apply to get the accumulation bound's runs (src/pyhost/_opcheck_accumulation.py):
  // each rule as [op, its condition, the argument its terms are counted with], in the table's order.
  j["accumulation_rules"] = json::array();
  const auto text = [](const char* s) { return s ? json(s) : json(nullptr); };
  for (const AccumulationRule& a : accumulation_rules())
    j["accumulation_rules"].push_back(json::array({a.op, text(a.only_with), text(a.counted_with)}));
  return std::nullopt;
}

Stage stage_named(const std::string& name) {
  Stage s = Stage::CRASHED;
  return parse_stage(name, s) ? s : Stage::CRASHED;
}

/// One output's judgement, and its name.
struct LeafVerdict {
  std::string what;
  Comparison cmp;
};

std::vector<LeafVerdict> judge_leaves(const Case& c, const json& record, const std::vector<at::Tensor>& t) {
  const auto& leaves = record.at("leaves");
  const std::size_t n = leaves.size();
  const bool golden = record.value("golden", false);
  std::vector<LeafVerdict> out;
  const Tolerance tol = tolerance_of(c);
  for (std::size_t k = 0; k < n; ++k) {
    const std::string path = leaves[k].get<std::string>();
    const c10::IValue expected(t.at(k)), actual(t.at(n + k));
    const c10::IValue g = golden ? c10::IValue(t.at(2 * n + k)) : c10::IValue();
    LeafVerdict v{"output" + path, {}};
    v.cmp = compare_values(expected, actual, tol, v.what, golden ? &g : nullptr);
    out.push_back(std::move(v));
  }
  return out;
}

/// The accumulation bound's runs of a traced call of an op that accumulates: the call on ones, on squares and on
/// absolute values of its floating inputs (one tensor per output each), and its first floating input's count.
struct TracedRuns {
  std::vector<at::Tensor> ones, squares, magnitudes;
  std::int64_t input_numel = 0;
  const AccumulationRule* rule = nullptr;  // the rule the Python side found the call's (by its place in the table)
};

/// A traced call's verdict (its first failing output's comparison, else ok): `expected` (its CPU outputs) against
/// `actual`, the float64 outputs `golden` (empty: none) widening the bound as for op cases, with the op's backend
/// freedoms; where the op accumulates (`runs`, accumulation_rules), the accumulation bound too.
Comparison judge_call(const Case& c, const std::string& op, const std::vector<at::Tensor>& expected,
                      const std::vector<at::Tensor>& actual, const std::vector<at::Tensor>& golden,
                      const TracedRuns* runs = nullptr) {
  Tolerance tol = tolerance_of(c);
  tol.resolved_op = op;
  tol.values = !returns_uninitialised(op);
  const AccumulationRule* rule = runs && !golden.empty() ? runs->rule : nullptr;
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const c10::IValue g = golden.empty() ? c10::IValue() : c10::IValue(golden[k]);
    const std::string what = expected.size() == 1 ? "output" : "output " + std::to_string(k);
    const c10::IValue bound = rule ? accumulation_bound_of(*rule, runs->input_numel, g, runs->ones.at(k),
                                                           runs->squares.at(k), runs->magnitudes.at(k))
                                   : c10::IValue();
    const AccumulationAllowance acc{&bound, rule ? rule->in : AccumulatesIn::OutputDtype};
    Comparison cmp = compare_values(c10::IValue(expected[k]), c10::IValue(actual[k]), tol, what,
                                    golden.empty() ? nullptr : &g, rule ? &acc : nullptr);
    if (!cmp.ok) return cmp;  // the call's verdict is its first failing output's
  }
  return Comparison{};
}

/// The next `n` tensors of `all` from `at` (advanced past them): one call's outputs of one kind, as the trace lists them.
std::vector<at::Tensor> next_tensors(const std::vector<at::Tensor>& all, std::size_t& at, std::size_t n) {
  if (at + n > all.size()) throw std::runtime_error("the trace returned fewer tensors than its record lists");
  std::vector<at::Tensor> v(all.begin() + static_cast<std::ptrdiff_t>(at), all.begin() + static_cast<std::ptrdiff_t>(at + n));
  at += n;
  return v;
}

/// A traced call's accumulation runs, the last of its tensors when its record says it has them.
std::optional<TracedRuns> traced_runs(const json& call, const std::vector<at::Tensor>& all, std::size_t& at,
                                      std::size_t n) {
  if (!call.value("accumulation", false)) return std::nullopt;
  TracedRuns runs;
  runs.ones = next_tensors(all, at, n);
  runs.squares = next_tensors(all, at, n);
  runs.magnitudes = next_tensors(all, at, n);
  runs.input_numel = call.value("input_numel", std::int64_t{0});
  const std::size_t rule = call.value("accumulation_rule", accumulation_rules().size());
  if (rule >= accumulation_rules().size())
    throw std::runtime_error("the trace names no accumulation rule of the table");
  runs.rule = &accumulation_rules()[rule];
  return runs;
}

/// The trace of a failing module: which calls are wrong alone, else where the device's run first leaves the float64
/// bound. The first line of the message it returns names them; `traced_op` gets the first wrong op.
std::string trace_failure(PythonHost& host, const Case& c, const ModuleRequest& req, json& record,
                          std::string& traced_op, std::string& traced_message, std::vector<std::size_t>& wrong_calls) {
  const bool compiled = !req.j.value("compile_backend", std::string()).empty();
  std::pair<std::string, std::vector<at::Tensor>> got;
  try {
    got = host.call_module("trace", req.j.dump(), req.tensors);
  } catch (...) {
    return "the trace could not run: " + op_error_of(std::current_exception()).message;
  }
  const json t = json::parse(got.first);
  if (t.contains("error")) return "the trace could not run: " + t["error"].get<std::string>();
  const auto& calls = t.at("calls");
  const std::vector<at::Tensor>& tensors = got.second;
  std::size_t at = 0;
  // Per wrong op, in the order first met: how (wrong or raising), its calls, and its first call's signature.
  struct Wrong {
    std::string op, how, signature;
    std::vector<std::size_t> calls;
  };
  std::vector<Wrong> wrong;
  auto blame = [&](const std::string& op, const std::string& how, std::size_t i, const std::string& signature,
                   const std::string& message) {
    auto it = std::find_if(wrong.begin(), wrong.end(), [&](const Wrong& w) { return w.op == op && w.how == how; });
    if (it == wrong.end()) wrong.push_back({op, how, signature, {i}});
    else it->calls.push_back(i);
    if (traced_op.empty()) {
      traced_op = op;
      traced_message = message;
    }
  };
  std::optional<std::size_t> left_bound;
  std::string left_message;
  json verdicts = json::array();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const json& call = calls[i];
    const std::size_t n = call.at("outputs").get<std::size_t>();
    auto take = [&](bool present) { return present ? next_tensors(tensors, at, n) : std::vector<at::Tensor>(); };
    const std::vector<at::Tensor> expected = take(true), alone = take(call.value("alone", false)),
                                  golden = take(call.value("golden", false)), chain = take(call.value("chain", false)),
                                  chain_golden = take(call.value("chain", false));
    const std::optional<TracedRuns> runs = traced_runs(call, tensors, at, n);
    const std::string op = call.at("op").get<std::string>();
    const std::string signature = call.value("signature", op);
    json v = {{"op", op}, {"call", signature}};
    if (n == 0) {
      v["verdict"] = "no tensor output";
    } else if (call.contains("alone_error")) {
      const bool missing = call.value("alone_not_supported", false);
      v["verdict"] = missing ? "not supported alone" : "raised alone";
      v["error"] = call["alone_error"];
      if (!missing) {
        blame(op, "raises with right inputs (call", i, signature,
              "the device raised " + call["alone_error"].get<std::string>());
        wrong_calls.push_back(i);
      }
    } else if (!alone.empty()) {
      const Comparison cmp = judge_call(c, op, expected, alone, golden, runs ? &*runs : nullptr);
      v["verdict"] = cmp.ok ? "passed" : "failed";
      if (!cmp.ok) {
        blame(op, "is wrong with right inputs (call", i, signature, cmp.message);
        wrong_calls.push_back(i);
      }
    }
    if (!left_bound && !chain.empty() && n > 0) {
      const Comparison cmp = judge_call(c, op, expected, chain, chain_golden, runs ? &*runs : nullptr);
      if (!cmp.ok) {
        left_bound = i;
        left_message = signature;
      }
    }
    verdicts.push_back(std::move(v));
  }
  record["trace"] = std::move(verdicts);
  // Where the CPU's calls, each alone on the device, are all right, the device may have taken a path of its own
  // (sdpa's kernel choice differs by device): its own calls, each rerun on the CPU with the inputs it got.
  json device_calls = json::array();
  std::vector<at::Tensor> device_tensors;
  if (wrong.empty()) {
    try {
      auto more = host.call_module("trace_device", req.j.dump(), req.tensors);
      const json d = json::parse(more.first);
      if (d.contains("device_calls")) device_calls = d["device_calls"];
      device_tensors = std::move(more.second);
    } catch (...) {
      record["trace_device_error"] = op_error_of(std::current_exception()).message;
    }
  }
  at = 0;
  for (std::size_t i = 0; wrong.empty() && i < device_calls.size(); ++i) {
    const json& call = device_calls[i];
    if (!call.value("replay", false)) continue;
    const std::size_t n = call.at("outputs").get<std::size_t>();
    auto take = [&](bool present) { return present ? next_tensors(device_tensors, at, n) : std::vector<at::Tensor>(); };
    const std::vector<at::Tensor> expected = take(true), actual = take(true), golden = take(call.value("golden", false));
    const std::optional<TracedRuns> runs = traced_runs(call, device_tensors, at, n);
    if (n == 0) continue;
    const std::string op = call.at("op").get<std::string>();
    const Comparison cmp = judge_call(c, op, expected, actual, golden, runs ? &*runs : nullptr);
    if (!cmp.ok)
      blame(op, "is wrong with the inputs the device's own run gave it (device call", i,
            call.value("signature", op), cmp.message);
  }
  const std::size_t device_total = device_calls.size();
  const std::string of = " of " + std::to_string(calls.size());
  if (!wrong.empty()) {
    std::string head = "inside it, ";
    for (std::size_t k = 0; k < wrong.size() && k < 4; ++k) {
      const Wrong& w = wrong[k];
      std::string which;
      for (std::size_t j = 0; j < w.calls.size(); ++j)
        which += (j == 0 ? "" : j + 1 == w.calls.size() ? " and " : ", ") + std::to_string(w.calls[j] + 1);
      const bool own = w.how.find("device call") != std::string::npos;
      head += (k ? "; " : "") + w.op + " " + w.how + (w.calls.size() > 1 ? "s " : " ") + which +
              (own ? " of " + std::to_string(device_total) : of) + "): " + w.signature;
    }
    if (wrong.size() > 4) head += "; and " + std::to_string(wrong.size() - 4) + " more ops";
    return head;
  }
  std::string head = "inside it, every one of its " + std::to_string(calls.size()) +
                     " ATen calls passes alone with right inputs: the error accumulated";
  if (left_bound)
    head += "; the device's run first leaves the float64 bound at call " + std::to_string(*left_bound + 1) + of +
            ": " + left_message;
  else
    head += "; the device's run stays within the float64 bound call by call up to where its calls and the CPU's part";
  if (!c.module->name.empty() && compiled)
    head += " (the device run was compiled: the trace replays its calls eagerly, so a difference that the compiled "
            "code's fusion makes is seen only in the module's outputs)";
  return head;
}

/// --save-failures: the calls wrong with right inputs, as an op manifest with their inputs (the Python side writes
/// DIR/<case's bundle folder>/calls.yaml); the line the message gets, or "".
std::string save_traced_calls(PythonHost& host, const ExecOptions& opts, const Case& c, const ModuleRequest& req,
                              const std::vector<std::size_t>& calls) {
  if (opts.save_failures_dir.empty() || calls.empty()) return {};
  const std::string dir = opts.save_failures_dir + "/" + repro::bundle_folder_name(c.id);
  json w = {{"dir", dir}, {"calls", calls}, {"name", c.name}, {"case_id", c.id}, {"model", c.model + "_traced"}};
  try {
    const json got = json::parse(host.call_module("write_calls", w.dump(), {}).first);
    if (got.contains("error")) return "the traced calls were not written: " + got["error"].get<std::string>();
    return "traced calls, each with its inputs: " + dir + "/calls.yaml (opcheck run --manifests " + dir + ")";
  } catch (...) {
    return "the traced calls were not written: " + op_error_of(std::current_exception()).message;
  }
}

/// --module-ops: the CPU run's calls of `c` as an op manifest (the Python side dedupes across the run); the note.
std::string write_module_ops(PythonHost& host, const ExecOptions& opts, const Case& c, const ModuleRequest& req) {
  json w = req.j;
  w["ops_dir"] = opts.module_ops_dir;
  w["name"] = c.name;
  w["case_id"] = c.id;
  w["model"] = c.model + "_ops";
  w["file_stem"] = repro::bundle_folder_name(c.id);
  try {
    const json got = json::parse(host.call_module("record_ops", w.dump(), req.tensors).first);
    if (got.contains("error")) return "its ATen calls were not written: " + got["error"].get<std::string>();
    return "--module-ops: " + std::to_string(got.value("written", 0)) + " of its " +
           std::to_string(got.value("calls", 0)) + " ATen calls written (the others were written already)" +
           (got.value("written", 0) > 0 ? " to " + got.value("file", std::string()) : std::string());
  } catch (...) {
    return "its ATen calls were not written: " + op_error_of(std::current_exception()).message;
  }
}

/// The module record for the reports: how it was built, as the Python side said.
std::string module_record_text(const json& record) {
  json out = json::object();
  for (const char* key : {"sizes", "parameters", "bytes_needed", "module_dtype", "dropped", "golden_error", "trace"})
    if (record.contains(key)) out[key] = record[key];
  return out.dump();
}

}  // namespace

std::int64_t default_module_memory_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page / 2 : 0;
}

void run_module_case(const ExecOptions& opts, const at::Device& device, const std::string& compile_unsupported,
                     const Case& c, Result& r) {
  r.resolved_op = c.module->module_path;
  if (!opts.compile_backend.empty() && !compile_unsupported.empty()) {
    r.stage = Stage::NOT_SUPPORTED;
    r.message = compile_unsupported;
    return;
  }
  if (!opts.reference_cache_dir.empty()) {
    r.reference_source = "not_cacheable";
    r.reference_cache_note = "a module case's CPU run is not kept: its module is built in the worker, and its outputs "
                             "are judged with the float64 run made beside it";
  }
  PythonHostFacts facts;
  std::string why;
  PythonHost* host = python_host(python_host_config(opts), facts, why);
  if (host == nullptr) {
    r.stage = Stage::FAILED_SETUP;
    r.message = "module cases need opcheck's Python host: " + why;
    return;
  }
  auto t0 = Clock::now();
  r.phase = CasePhase::Inputs;
  ModuleRequest req;
  if (std::optional<std::string> bad = build_request(opts, device, c, req)) {
    r.stage = Stage::FAILED_INPUT;
    r.message = *bad;
    return;
  }
  for (const at::Tensor& t : req.tensors) r.input_digests.push_back(tensor_digest(t));
  const double inputs_ms = module_ms_since(t0);
  r.phase = CasePhase::Device;
  std::pair<std::string, std::vector<at::Tensor>> got;
  try {
    got = recording_device_ops(device, r.device_ops, [&] {
      const OpCallScope scope;
      return host->call_module("run", req.j.dump(), req.tensors);
    });
  } catch (...) {
    r.stage = Stage::CRASHED;
    r.message = op_error_of(std::current_exception()).text();
    return;
  }
  json record = json::parse(got.first);
  r.materialize_ms = inputs_ms + record.value("build_ms", 0.0);
  r.reference_ms = record.value("reference_ms", 0.0);
  r.golden_ms = record.value("golden_ms", 0.0);
  r.device_ms = record.value("device_ms", 0.0);
  if (record.contains("dropped"))
    for (const auto& name : record["dropped"])
      r.judge_notes.push_back("the forward's required argument " + name.get<std::string>() +
                              " was not in the config: passed as None");
  if (record.contains("golden_error"))
    r.judge_notes.push_back("the float64 judge was not applied: the module did not run in float64 (" +
                            record["golden_error"].get<std::string>() + "); the tolerance alone decides");
  if (record.contains("stage")) {
    r.stage = stage_named(record["stage"].get<std::string>());
    r.message = record.value("message", "");
    if (r.stage == Stage::FAILED_RUNTIME) {  // which op raised: the trace replays each call alone
      std::string traced_message;
      std::vector<std::size_t> wrong_calls;
      std::string head = trace_failure(*host, c, req, record, r.traced_op, traced_message, wrong_calls);
      const auto raised = std::find_if(r.device_ops.begin(), r.device_ops.end(), [](const DeviceOp& d) { return d.raised; });
      if (r.traced_op.empty() && raised != r.device_ops.end()) {
        // No call raises alone, but the device's run did: the op running on the device when it threw is named.
        r.traced_op = raised->op;
        head = "inside it, " + raised->op + " raised on the device (the innermost op running when the error was "
               "thrown; the CPU's calls, each alone on the device, do not raise)";
        const std::string& m = r.message;
        const std::size_t at = m.find(" raised ");
        traced_message = "the device raised " + (at == std::string::npos ? m : m.substr(at + 8, m.find('\n') - at - 8));
      }
      r.message = head + "\n\n" + (traced_message.empty() ? "" : traced_message + "\n\nthe module's run:\n") + r.message;
      if (const std::string saved = save_traced_calls(*host, opts, c, req, wrong_calls); !saved.empty())
        r.judge_notes.push_back(saved);
    }
    r.module_record = module_record_text(record);
    return;
  }
  t0 = Clock::now();
  r.phase = CasePhase::Compare;
  std::vector<LeafVerdict> verdicts;
  try {
    verdicts = judge_leaves(c, record, got.second);
  } catch (...) {
    r.stage = Stage::CRASHED;
    r.message = "opcheck internal error while judging the module's outputs: " +
                op_error_of(std::current_exception()).message;
    return;
  }
  std::string failures;
  const LeafVerdict* figures = verdicts.empty() ? nullptr : &verdicts.front();
  for (const auto& v : verdicts) {
    for (const auto& n : v.cmp.notes)
      if (std::find(r.judge_notes.begin(), r.judge_notes.end(), n) == r.judge_notes.end()) r.judge_notes.push_back(n);
    if (v.cmp.ok) continue;
    if (failures.empty()) figures = &v;
    failures += (failures.empty() ? "" : "\n\n") + v.cmp.message;
  }
  if (figures) r.figures = figures->cmp.figures;
  r.compare_ms = module_ms_since(t0);
  if (!failures.empty()) {
    r.stage = Stage::INCORRECT_RESULT;
    std::string traced_message;
    std::vector<std::size_t> wrong_calls;
    const std::string head = trace_failure(*host, c, req, record, r.traced_op, traced_message, wrong_calls);
    r.message = head + "\n\n" + (traced_message.empty() ? "" : traced_message + "\n\nthe module's outputs:\n") + failures;
    if (const std::string saved = save_traced_calls(*host, opts, c, req, wrong_calls); !saved.empty())
      r.judge_notes.push_back(saved);
  }
  r.module_record = module_record_text(record);
  if (!opts.module_ops_dir.empty()) r.judge_notes.push_back(write_module_ops(*host, opts, c, req));
}

}  // namespace opcheck::exec
