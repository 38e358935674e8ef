// The order of a case's steps (CaseRun::steps, the one place that times them), and the first of them: resolving
// the op, checking the case's size and building its inputs on the host.

#include "exec/case_run.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "exec/device_ops.h"
#include "exec/inputs.h"

namespace opcheck::exec {

namespace {

using Clock = std::chrono::steady_clock;

std::string bytes_text(std::int64_t b) {
  char buf[64];
  if (b >= (std::int64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1 << 30));
  else if (b >= (std::int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(b));
  return buf;
}

}  // namespace

std::string slot_name(const Case& c, const TensorSlot& s) {
  std::string out = "input " + std::to_string(s.input);
  // Appended piece by piece: gcc 12 at -O3 takes "[" + std::string for an overflowing copy (-Wstringop-overflow).
  if (c.inputs.at(s.input).kind == Input::Kind::TensorList)
    out.append("[").append(std::to_string(s.element)).append("]");
  return out;
}

std::optional<Verdict> CaseRun::steps() {
  if (auto v = resolve()) return v;
  if (auto v = check_size()) return v;
  auto t0 = Clock::now();
  {
    enter(CasePhase::Inputs);
    const OwnWork own(engine_.clock_);
    if (auto v = build_inputs()) return v;  // inputs that could not be built have no time
    r_.materialize_ms = ms_since(t0);
  }
  // The device runs first (on a device other than the CPU, for a case that expects no error): a call the device
  // cannot run at all is NOT_SUPPORTED without a reference. Any other end of the device runs still waits for the
  // reference, so a bad call (FAILED_REFERENCE) is told from a device bug as before.
  const bool device_first = !c_.expects_error && !dev_.is_cpu();
  if (!device_first) {
    enter(CasePhase::Reference);
    if (auto v = reference()) return v;
  }
  enter(CasePhase::Device);
  std::optional<Verdict> device = find_compiler();
  if (!device) {
    t0 = Clock::now();
    device = recording_device_ops(dev_, r_.device_ops, [&] { return run_on_device(); });
    r_.device_ms = ms_since(t0) - r_.compile_ms;  // however the runs ended
  }
  if (device_first) {
    if (device && device->stage == Stage::NOT_SUPPORTED && !needs_reference()) return device;
    enter(CasePhase::Reference);
    if (auto v = reference()) return v;
    if (device && raised_ && !ref_.refused.empty()) return refused_too(*raised_);
  }
  if (device) return device;
  t0 = Clock::now();
  enter(CasePhase::Compare);
  const OwnWork own(engine_.clock_);
  std::optional<Verdict> verdict = judge();
  r_.compare_ms = ms_since(t0) - r_.golden_ms;  // the float64 result has its own figure
  return verdict;
}

// The record says where the case ended, and so does the shared clock, for a worker that dies on the way.
void CaseRun::enter(CasePhase phase) {
  r_.phase = phase;
  if (engine_.clock_) engine_.clock_->phase.store(static_cast<int>(phase), std::memory_order_release);
}

// Resolves the op and binds the arguments: nothing is built for a case that cannot run.
std::optional<Verdict> CaseRun::resolve() {
  res_ = engine_.resolver_.resolve(c_);
  if (!res_.skip_reason.empty()) return Verdict{Stage::SKIPPED, res_.skip_reason};
  if (!res_.invocation) return Verdict{Stage::INVALID_CASE, res_.error, res_.kind};
  inv_ = res_.invocation.get();
  r_.resolved_op = inv_->resolved_op;
  r_.decomposed = inv_->decomposed;
  if (ev_) {
    ev_->slots = res_.call.slots;
    ev_->written_slots = inv_->written_slots;
  }
  return std::nullopt;
}

std::optional<Verdict> CaseRun::check_size() const {
  std::int64_t bytes = 0;
  for (const auto& s : slots()) bytes += s.spec->storage_bytes();
  if (opts_.max_case_bytes <= 0 || bytes <= opts_.max_case_bytes) return std::nullopt;
  return Verdict{Stage::SKIPPED, "the case's tensors need " + bytes_text(bytes) + ", more than --max-case-bytes (" +
                                     bytes_text(opts_.max_case_bytes) + ")"};
}

std::optional<Verdict> CaseRun::build_inputs() {
  const auto& s = slots();
  host_.resize(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    try {
      host_[i] = build_tensor(*s[i].spec, input_seed(c_.seed, s[i].input, s[i].element));
    } catch (...) {
      return Verdict{Stage::FAILED_INPUT, slot_name(c_, s[i]) + ": " + op_error_of(std::current_exception()).message};
    }
  }
  try {
    for (const auto& t : host_) r_.input_digests.push_back(tensor_digest(t));
  } catch (...) {
    return Verdict{Stage::FAILED_INPUT,
                   "digest of the inputs failed: " + op_error_of(std::current_exception()).message};
  }
  if (ev_) ev_->inputs = host_;  // shares the tensors: nothing below writes the host inputs
  return std::nullopt;
}

}  // namespace opcheck::exec
