#include "sample_report.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "report/atomic_file.h"
#include "report/junit.h"
#include "report/metrics.h"

namespace opcheck::testing {
namespace {

std::string written_by(const std::function<void(const std::string& path)>& write) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "opcheck-written-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot make a temporary folder for " + tmpl);
  const std::string path = (std::filesystem::path(tmpl) / "report").string();
  std::string text;
  try {
    write(path);
    text = read_file_bytes(path);
  } catch (...) {
    std::filesystem::remove_all(tmpl);
    throw;
  }
  std::filesystem::remove_all(tmpl);
  return text;
}

CaseRecord record(int index, const std::string& model, const std::string& name, const std::string& op,
                  const std::string& dtype, Outcome outcome, Stage stage) {
  CaseRecord r;
  r.index = index;
  r.id = model + "::" + name;
  r.model = model;
  r.name = name;
  r.op = op;
  r.dtype = dtype;
  r.file = "manifests/" + model + ".yaml";
  r.line = 10 + 7 * index;
  r.key = "key-" + name;
  r.signature = op + "(" + dtype + "[2, 3])";
  r.outcome = outcome;
  r.result.case_id = r.id;
  r.result.stage = stage;
  r.result.outcome = stage_outcome(stage);
  return r;
}

void timings(CaseRecord& r, double m, double ref, double dev, double cmp) {
  r.result.materialize_ms = m;
  r.result.reference_ms = ref;
  r.result.device_ms = dev;
  r.result.compare_ms = cmp;
}

// An occurrence served by the run of `ran` (same key, same result).
CaseRecord served(int index, const std::string& model, const std::string& name, const CaseRecord& ran) {
  CaseRecord r = ran;
  r.index = index;
  r.id = model + "::" + name;
  r.model = model;
  r.name = name;
  r.file = "manifests/" + model + ".yaml";
  r.line = 10 + 7 * index;
  r.deduplicated_from = ran.id;
  return r;
}

}  // namespace

RunReport sample_report() {
  RunReport rep;
  RunInfo& i = rep.info;
  i.opcheck_version = "0.1.0";
  i.torch_version = "1.13.1";
  i.device = "privateuseone:0";
  i.device_name = "loopback";
  i.device_lib = "/opt/opcheck/libopcheck_loopback.so";
  i.device_lib_sha256 = std::string(64, 'a');
  i.host = "ci-runner-1";
  i.started_at = "2026-01-02T03:04:05Z";
  i.duration_s = 30;
  i.argv = {"run", "manifests", "-m", "not slow"};
  i.manifests = {{"manifests/llama.yaml", std::string(64, 'b')}, {"manifests/granite.yaml", std::string(64, 'c')}};
  i.enabled_ops = {"aten::add.Tensor", "aten::mul.Tensor", "aten::addmm", "aten::t", "aten::sin", "aten::cos", "neg"};

  auto add = record(0, "llama", "add_f16", "torch.add", "fp16", Outcome::Passed, Stage::PASSED);
  add.key = "k-add";
  add.signature = "torch.add(fp16[2, 3], fp16[2, 3])";
  add.result.resolved_op = "aten::add.Tensor";
  add.result.figures.max_abs_diff = 0.0;
  add.result.figures.max_rel_diff = 0.0;
  add.result.figures.total = 6;
  add.marks = {"smoke", "elementwise"};
  timings(add, 1, 4, 2, 1);
  rep.cases.push_back(add);
  rep.cases.push_back(served(1, "llama", "add_f16_again", add));

  auto mul = record(2, "llama", "mul", "torch.mul", "fp32", Outcome::Failed, Stage::INCORRECT_RESULT);
  mul.result.resolved_op = "aten::mul.Tensor";
  mul.result.message = "Tensor-likes are not close!\nMismatched elements: 3 / 6 (50.0%)\nGreatest absolute difference: 0.5";
  mul.result.figures.max_abs_diff = 0.5;
  mul.result.figures.max_rel_diff = HUGE_VAL;
  mul.result.figures.pcc = std::nan("");
  mul.result.figures.mismatched = 3;
  mul.result.figures.total = 6;
  mul.result.captured_stderr = "warning: <fallback> & \"slow\" path \x1b[31mred\x1b[0m\n";
  mul.result.input_digests = {std::string(64, 'd'), std::string(64, 'e')};
  mul.result.device_ops = {{"aten::_copy_from", DeviceOpVia::Kernel, 4, false},
                           {"aten::mul.Tensor", DeviceOpVia::Fallback, 2, true},
                           {"aten::copy_", DeviceOpVia::Composite, 4, false}};
  timings(mul, 1, 2, 8, 1);
  rep.cases.push_back(mul);

  auto softmax = record(3, "llama", "softmax", "torch.nn.functional.softmax", "fp16", Outcome::Error, Stage::FAILED_INPUT);
  softmax.result.message = "input 0: cannot build tensor: shape [2, -1] has a negative size";
  timings(softmax, 0.5, 0, 0, 0);
  rep.cases.push_back(softmax);

  auto sdpa = record(4, "llama", "sdpa", "torch.nn.functional.scaled_dot_product_attention", "bf16", Outcome::Skipped,
                     Stage::SKIPPED);
  sdpa.status = "skip";
  sdpa.status_reason = "not supported on this device";
  rep.cases.push_back(sdpa);

  auto silu = record(5, "llama", "silu", "torch.nn.functional.silu", "fp16", Outcome::XFailed, Stage::INCORRECT_RESULT);
  silu.status = "xfail";
  silu.status_reason = "known silu rounding bug";
  silu.result.resolved_op = "aten::silu";
  silu.result.message = "Tensor-likes are not close!";
  timings(silu, 1, 1, 1, 1);
  rep.cases.push_back(silu);

  auto neg = record(6, "llama", "neg", "torch.neg", "fp16", Outcome::XPassed, Stage::PASSED);
  neg.status = "xfail";
  neg.status_reason = "flaky neg";
  neg.result.resolved_op = "aten::neg";
  neg.marks = {"trace"};  // converted from an op trace
  timings(neg, 1, 0, 1, 0);
  rep.cases.push_back(neg);

  rep.cases.push_back(served(7, "granite", "add", add));

  auto linear = record(8, "granite", "linear", "torch.nn.functional.linear", "fp32", Outcome::Passed, Stage::PASSED);
  linear.result.resolved_op = "aten::t, aten::addmm";
  linear.result.decomposed = true;
  linear.marks = {"opinfo"};  // an OpInfo sample
  linear.result.reference_upcast = true;
  linear.result.figures.pcc = 0.99999;
  timings(linear, 2, 10, 5, 3);
  rep.cases.push_back(linear);

  auto cat = record(9, "granite", "cat", "torch.cat", "fp32", Outcome::Failed, Stage::CRASHED);
  cat.result.resolved_op = "aten::cat";
  cat.result.message = "worker crashed (signal 11: Segmentation fault)";
  timings(cat, 1, 1, 0, 0);
  rep.cases.push_back(cat);
  return rep;
}

RunReport parity_report() {
  RunReport rep;
  rep.info.opcheck_version = "0.1.0";
  rep.info.host = "parity-host";
  rep.info.started_at = "2026-01-02T03:04:05Z";
  rep.info.duration_s = 0.02;
  const std::string m = "parity_suite";
  auto add = [&](const char* name, Outcome o, Stage s, const char* msg, const char* status_reason) {
    auto r = record(static_cast<int>(rep.cases.size()), m, name, "torch.add", "fp32", o, s);
    r.result.message = msg;
    r.status_reason = status_reason;
    r.result.captured_stderr = std::string("stderr of ") + name + "\n";
    rep.cases.push_back(r);
  };
  add("test_pass", Outcome::Passed, Stage::PASSED, "", "");
  add("test_fail", Outcome::Failed, Stage::INCORRECT_RESULT, "AssertionError: boom", "");
  add("test_error", Outcome::Error, Stage::FAILED_INPUT, "RuntimeError: setup broke", "");
  add("test_skip", Outcome::Skipped, Stage::SKIPPED, "not here", "");
  add("test_xfail", Outcome::XFailed, Stage::INCORRECT_RESULT, "AssertionError", "known bug");
  add("test_xpass_strict", Outcome::XPassed, Stage::PASSED, "", "should fail");
  return rep;
}

std::string written_junit_xml(const RunReport& report) {
  return written_by([&](const std::string& path) { write_junit_xml(report, path); });
}

std::string written_metrics_json(const RunReport& report) {
  return written_by([&](const std::string& path) { write_metrics_json(report, path); });
}

RunReport verdicts_report() {
  RunReport rep = sample_report();
  rep.info.warnings = {"manifests/x_spyre.yaml: warning: model 'x' has only 'spyre' variant files, which are not "
                       "selected by default; none of its cases will run"};
  auto ns = record(10, "granite", "mul_unsupported", "torch.mul", "bf16", Outcome::NotSupported, Stage::NOT_SUPPORTED);
  ns.call = "torch.mul(bf16[1,32,64], bf16[1,32,64])";
  ns.result.message = "NotImplementedError: Could not run 'aten::mul.Tensor' with arguments from the 'PrivateUse1' "
                      "backend.\n'aten::mul.Tensor' is only available for these backends: [CPU, Meta].";
  rep.cases.push_back(ns);
  for (auto& c : rep.cases)
    if (c.id == "llama::mul") {
      c.call = "torch.mul(fp32[2,3]{stride 1,2}, 2.0)";
      c.result.figures.worst_index = {1, 2};
      c.result.figures.worst_device = 1.5;
      c.result.figures.worst_reference = 1.0;
    }
  return rep;
}

}  // namespace opcheck::testing
