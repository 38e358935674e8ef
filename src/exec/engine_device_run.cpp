// The device runs of a case: the compiler of --compile-backend, the inputs moved once, each repeat run on the
// device and kept on the host, and what a run that raises is (NOT_SUPPORTED, FAILED_RUNTIME, the expected error).

#include "exec/case_run.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "common/op_names.h"
#include "exec/device_ops.h"
#include "exec/python_device.h"

namespace opcheck::exec {

/// Runs `inv` once on `tensors`, catching what it raises.
RunOutcome run_once(const Invocation& inv, const std::vector<at::Tensor>& tensors, const RunContext& ctx) {
  RunOutcome out;
  try {
    const OpCallScope call;
    out.output = inv.run(tensors, ctx);
    for (auto s : inv.written_slots) out.written.push_back(tensors.at(s));
  } catch (...) {
    out.error = op_error_of(std::current_exception());
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

/// One compiled device run (--compile-backend): the op's Python callable through torch.compile, in the host.
RunOutcome run_compiled(PythonHost& host, const std::string& op, const CallArgs& args, const Invocation& inv,
                        const std::vector<at::Tensor>& tensors, const at::Device& device) {
  RunOutcome out;
  try {
    const OpCallScope call;
    out.output = host.call_compiled(op, args, tensors, device);
    for (auto s : inv.written_slots) out.written.push_back(tensors.at(s));
  } catch (...) {
    out.error = op_error_of(std::current_exception());
  }
  return out;
}

/// The dispatch key a device's kernels are registered under, with the backend's name where the key does not say
/// it: "CPU", "PrivateUse1 (pyloop)".
std::string dispatch_key_text(const at::Device& device, const std::string& name) {
  std::string key = c10::toString(c10::computeDispatchKey(std::nullopt, at::kStrided, device));
  std::string lower = key;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (!name.empty() && name != lower) key += " (" + name + ")";
  return key;
}

}  // namespace

// Compiled runs: the first compiles, the second reuses the compiled code; their difference is the compile time.
std::optional<Verdict> CaseRun::find_compiler() {
  if (opts_.compile_backend.empty()) return std::nullopt;
  // Found once, before any case (setup_device): a compile that cannot generate code for the device is not tried.
  if (!engine_.device_.compile_unsupported.empty())
    return Verdict{Stage::NOT_SUPPORTED, engine_.device_.compile_unsupported};
  compiler_ = python_host_if_started();
  if (compiler_) return std::nullopt;
  return Verdict{Stage::FAILED_COMPILE,
                 "--compile-backend " + opts_.compile_backend + ": this process has no Python host to compile with"};
}

// Device runs: inputs moved once; tensors the op writes are fresh copies for every repeat.
std::optional<Verdict> CaseRun::run_on_device() {
  int repeats = opts_.repeat > 0 ? opts_.repeat : (dev_.is_cpu() ? 1 : 2);
  if (compiler_) repeats = std::max(repeats, 2);
  written_.insert(inv_->written_slots.begin(), inv_->written_slots.end());
  moved_.resize(host_.size());
  try {
    for (std::size_t s = 0; s < host_.size(); ++s) {
      if (written_.count(s)) continue;
      const at::Device d = slot_device(s);
      moved_[s] = d.is_cpu() ? host_[s] : copy_with_layout(host_[s], d);  // on the CPU: shared, never copied
    }
  } catch (...) {
    return inputs_not_moved();
  }
  values_defined_ = !returns_uninitialised(inv_->resolved_op);
  r_.values_compared = values_defined_;
  for (int rep = 0; rep < repeats; ++rep)
    if (auto v = device_run()) return v;
  return std::nullopt;
}

// One device run, kept on the host for judge(); a run that raises, or puts its output elsewhere, ends the case.
std::optional<Verdict> CaseRun::device_run() {
  std::vector<at::Tensor> tensors = moved_;
  try {
    for (auto s : written_) tensors[s] = copy_with_layout(host_[s], slot_device(s));
  } catch (...) {
    return inputs_not_moved();
  }
  const auto rep_t0 = Clock::now();
  RunOutcome out;
  if (compiler_) {
    out = run_compiled(*compiler_, canonical_op(c_.op), res_.call.args, *inv_, tensors, dev_);
  } else {
    RunContext ctx;
    ctx.device = dev_;
    out = run_once(*inv_, tensors, ctx);
  }
  rep_ms_.push_back(ms_since(rep_t0));
  if (compiler_) r_.compile_ms = rep_ms_.size() >= 2 ? std::max(0.0, rep_ms_[0] - rep_ms_[1]) : rep_ms_[0];
  if (out.error && out.error->compile_failed)
    return Verdict{Stage::FAILED_COMPILE, "torch.compile(backend=\"" + opts_.compile_backend + "\") of " + c_.op +
                                              " failed: " + out.error->message};
  if (auto v = check_output_device(out, tensors)) return v;
  if (c_.expects_error) return expected_error(out);
  if (out.error && !ref_.refused.empty()) return refused_too(*out.error);
  if (out.error) {
    raised_ = out.error;  // judged again once the reference is known (steps)
    return device_error(*out.error, "the device raised " + out.error->text());
  }
  std::string transfer_error;
  if (!outputs_to_host(out, transfer_error))
    return Verdict{Stage::FAILED_TRANSFER, "moving outputs from " + dev_.str() + " failed: " + transfer_error};
  if (ev_) ev_->device_runs.push_back(out);
  runs_.push_back(std::move(out));
  return std::nullopt;
}

Verdict CaseRun::refused_too(const OpError& error) const {
  return Verdict{Stage::NOT_SUPPORTED, "the device refuses the call as the CPU does (" + ref_.refused +
                                           "); its reference was computed in float64\n\nthe device raised " +
                                           error.text()};
}

// Whether a NOT_SUPPORTED device run still needs the reference: where the kernel missing is the CPU's (a device
// that runs the CPU's kernels, as the loopback does, says so), the call may be one the CPU refuses too, which the
// reference tells (FAILED_REFERENCE, or its float64 reference).
bool CaseRun::needs_reference() const {
  return raised_ && raised_->message.find("from the 'CPU' backend") != std::string::npos;
}

// NOT_SUPPORTED leads with what a team acts on (the op, the dispatch key, the error's first line); the whole
// error (a dispatcher account runs to kilobytes) follows a blank line, for --tb long and the record.
Verdict CaseRun::device_error(const OpError& error, const std::string& text) const {
  if (!is_not_supported(error)) return Verdict{Stage::FAILED_RUNTIME, text};
  const std::string headline =
      not_supported_headline(error, inv_->resolved_op, raised_device_op(), dispatch_key_text(dev_, engine_.device_.name));
  return Verdict{Stage::NOT_SUPPORTED, headline + "\n\n" + text};
}

Verdict CaseRun::inputs_not_moved() const {
  return Verdict{Stage::FAILED_TRANSFER,
                 "moving inputs to " + dev_.str() + " failed: " + op_error_of(std::current_exception()).text()};
}

Verdict CaseRun::expected_error(const RunOutcome& out) const {
  const std::string expected = "expected " + describe_expected(*c_.expects_error);
  if (!out.error)
    return Verdict{Stage::INCORRECT_RESULT, expected + " (the CPU reference raised " +
                                                ref_.outcome.error->text() + "), but the device returned a result"};
  std::string why;
  if (error_matches(*out.error, *c_.expects_error, why)) return Verdict{Stage::PASSED, "raised " + out.error->text()};
  return device_error(*out.error, expected + ", but the device " + why);
}

}  // namespace opcheck::exec
