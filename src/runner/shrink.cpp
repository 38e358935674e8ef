#include "runner/shrink.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "common/call_signature.h"
#include "common/regular_file.h"
#include "manifest/manifest_writer.h"
#include "report/atomic_file.h"
#include "report/failure_groups.h"
#include "report/json_writer.h"
#include "repro/bundle_layout.h"
#include "repro/reproduction.h"
#include "repro/script.h"
#include "runner/call_variants.h"

namespace opcheck {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kMinimalManifest = "minimal.yaml";
constexpr const char* kReproScript = "repro.py";
constexpr const char* kShrinkJson = "shrink.json";

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool smaller(const Case& a, const Case& b) {
  return std::make_pair(input_elements(a), call_complexity(a)) < std::make_pair(input_elements(b), call_complexity(b));
}

// One pass over the current call's one-step simplifications, smallest first, in batches: the smallest candidate
// of the first batch that holds one failing the same way is kept. False when none does (or the budget ran out).
bool shrink_pass(const CallRunner& run, int budget_steps, double budget_s, std::size_t batch_size, ShrinkOutcome& s,
                 Clock::time_point t0) {
  std::vector<CallVariant> steps = shrink_steps(s.minimal);
  std::stable_sort(steps.begin(), steps.end(),
                   [](const CallVariant& a, const CallVariant& b) { return smaller(a.call, b.call); });
  for (std::size_t from = 0; from < steps.size(); from += batch_size) {
    const int left = budget_steps - s.tried;
    const double time_left = budget_s - seconds_since(t0);
    if (left <= 0 || time_left <= 0) {
      s.stopped_by = left <= 0 ? "steps" : "time";
      return false;
    }
    std::vector<Case> batch;
    std::vector<std::string> edits;
    for (std::size_t i = from; i < steps.size() && batch.size() < std::min<std::size_t>(batch_size, left); ++i) {
      batch.push_back(steps[i].call);
      edits.push_back(steps[i].edit);
    }
    const std::vector<CaseRecord> records = run(batch, time_left);
    s.tried += static_cast<int>(records.size());
    const CaseRecord* found = nullptr;
    for (const CaseRecord& rec : records)
      if (failure_signature(rec) == s.signature && (!found || rec.index < found->index)) found = &rec;
    if (found) {
      s.minimal = batch[static_cast<std::size_t>(found->index)];
      s.record = *found;
      s.kept.push_back({edits[static_cast<std::size_t>(found->index)], input_elements(s.minimal)});
      return true;
    }
    if (records.size() < batch.size()) {
      s.stopped_by = StopSignals::received() ? "signal" : "time";
      return false;
    }
  }
  return false;
}

}  // namespace

ShrinkOutcome shrink_call(const Case& failing, const CaseRecord& record, const CallRunner& run, int steps,
                          double seconds, std::size_t batch) {
  const auto t0 = Clock::now();
  ShrinkOutcome s{failing, record, failure_signature(record), {}, 0, ""};
  if (s.signature.empty()) return s;
  while (shrink_pass(run, steps, seconds, std::max<std::size_t>(batch, 1), s, t0)) {
  }
  return s;
}

namespace {

std::string column(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + "  " : text + std::string(width + 2 - text.size(), ' ');
}

// The original and the minimal call side by side, then the steps kept.
std::string side_by_side(const Case& original, const CaseRecord& original_record, const ShrinkOutcome& s, double took,
                         const ShrinkRequest& r) {
  const std::vector<std::pair<std::string, std::pair<std::string, std::string>>> rows = {
      {"call", {call_signature(original), call_signature(s.minimal)}},
      {"elements", {std::to_string(input_elements(original)), std::to_string(input_elements(s.minimal))}},
      {"verdict", {std::string(stage_name(original_record.result.stage)), stage_name(s.record.result.stage)}},
      {"signature", {failure_signature(original_record), failure_signature(s.record)}}};
  std::size_t width = std::string("original").size();
  for (const auto& row : rows) width = std::max(width, row.second.first.size());
  width = std::min<std::size_t>(width, 72);
  std::ostringstream out;
  out << "shrink " << original.id << "\n";
  out << column("", 9) << column("original", width) << "minimal\n";
  for (const auto& [label, values] : rows) {
    const bool same = label == "signature" && values.first == values.second;
    out << column(label, 9) << column(values.first, width) << (same ? "(the same)" : values.second) << "\n";
  }
  out << s.kept.size() << " simplifications kept of " << s.tried << " calls tried in " << std::fixed
      << std::setprecision(1) << took << " s";
  if (s.stopped_by == "steps") out << "; stopped: --budget-steps " << r.budget_steps << " reached";
  else if (s.stopped_by == "time") out << "; stopped: --budget-s " << r.budget_s << " reached";
  else if (!s.stopped_by.empty()) out << "; stopped: " << s.stopped_by;
  else out << "; no one-step simplification fails the same way";
  out << "\n";
  for (std::size_t i = 0; i < s.kept.size(); ++i)
    out << "  " << i + 1 << ". " << s.kept[i].edit << " (" << s.kept[i].elements << " elements)\n";
  return out.str();
}

std::string shrink_json(const Case& original, const CaseRecord& original_record, const ShrinkOutcome& s, double took,
                        const ShrinkRequest& r) {
  std::string out;
  JsonWriter w(out, 2);
  w.begin_object();
  w.field("case", original.id);
  w.field("minimal_case", s.minimal.id);
  w.key("original").begin_object();
  w.field("call", call_signature(original)).field("input_elements", input_elements(original));
  w.field("stage", stage_name(original_record.result.stage)).field("signature", failure_signature(original_record));
  w.end_object();
  w.key("minimal").begin_object();
  w.field("call", call_signature(s.minimal)).field("input_elements", input_elements(s.minimal));
  w.field("stage", stage_name(s.record.result.stage)).field("signature", failure_signature(s.record));
  w.end_object();
  w.key("steps").begin_array();
  for (const ShrinkStep& k : s.kept) w.begin_object(true).field("edit", k.edit).field("input_elements", k.elements).end_object();
  w.end_array();
  w.field("calls_tried", s.tried).field("seconds", took);
  w.field("budget_steps", r.budget_steps).field("budget_s", r.budget_s);
  w.field("stopped_by", s.stopped_by.empty() ? std::string("minimal") : s.stopped_by);
  w.end_object();
  return out + "\n";
}

// The minimal call as a manifest, the repro script of it, and shrink.json. False after saying why.
bool write_outputs(const CaseProbe& probe, const ShrinkRequest& r, const CaseRecord& original_record, const ShrinkOutcome& s,
                   double took, std::ostream& err) {
  std::vector<std::vector<manifest_text::TensorSource>> sources;
  for (const auto& in : s.minimal.inputs) {
    std::vector<manifest_text::TensorSource> one;
    if (in.kind == Input::Kind::Tensor) one.push_back({in.tensor.file, false});
    for (const auto& t : in.list) one.push_back({t.file, false});
    sources.push_back(one);
  }
  const std::string header = "The smallest call found by `opcheck shrink " + probe.original().id + "` (" +
                             probe.original().loc.file + ":" + std::to_string(probe.original().loc.line) +
                             ")\noriginal: " + call_signature(probe.original()) + "\nminimal:  " +
                             call_signature(s.minimal) + "\nfails as: " + s.signature;
  const fs::path dir(r.out_dir);
  std::string step = "create the folder";
  try {
    fs::create_directories(dir);
    step = "write " + (dir / kMinimalManifest).string();
    write_file_atomically((dir / kMinimalManifest).string(), manifest_text::case_manifest(s.minimal, sources, header));
    step = "write " + (dir / kShrinkJson).string();
    write_file_atomically((dir / kShrinkJson).string(), shrink_json(probe.original(), original_record, s, took, r));
  } catch (const std::exception& e) {
    err << "opcheck: error: cannot " << step << ": " << e.what() << "\n  Fix: pass -o a writable folder\n";
    return false;
  }
  repro::ScriptDevice device;
  std::string error;
  repro::BundleFacts none;
  if (!repro::script_device(repro::device_args({}, probe.settings(), none), r.library_dirs, device, error)) {
    err << "opcheck: warning: no " << kReproScript << ": " << error << "\n";
    return true;
  }
  repro::carry_environment(probe.settings().device_environment, device);
  try {
    write_file_atomically((dir / kReproScript).string(), repro::python_repro_script(s.minimal, device, {}));
  } catch (const std::exception& e) {
    err << "opcheck: error: cannot write " << (dir / kReproScript).string() << ": " << e.what() << "\n";
    return false;
  }
  return true;
}

}  // namespace

int shrink_request(ShrinkRequest r, RunHost& host) {
  const auto t0 = Clock::now();
  CaseProbe probe;
  if (int rc = probe.start(r.probe, host); rc >= 0) return rc;
  // The folder is made once the case is known and before anything runs: a search is not lost to a bad -o.
  std::error_code ec;
  fs::create_directories(r.out_dir, ec);
  if (ec || !fs::is_directory(r.out_dir, ec)) {
    host.err << "opcheck: error: cannot create the -o folder " << r.out_dir << ": "
             << (ec ? ec.message() : std::string("not a folder")) << "\n  Fix: pass -o a writable folder\n";
    return kUsageError;
  }
  // The device's own verdict is what shrinks: an expected failure (xfail_if) is still the failure being shrunk.
  Case original = probe.original();
  original.xfail_if.clear();
  RunInfo info;
  std::vector<CaseRecord> first = probe.run({original}, info);
  if (first.empty()) {
    host.err << "opcheck: shrink stopped before " << original.id << " ran: " << info.stop_reason << "\n";
    return kInterrupted;
  }
  if (failure_signature(first[0]).empty()) {
    host.out << original.id << " does not fail on " << probe.executor().info().device_name << " ("
             << outcome_name(first[0].outcome) << ", " << stage_name(first[0].result.stage)
             << "): there is no failure to shrink\n";
    return kTestsFailed;
  }
  host.err << "opcheck: shrinking " << original.id << " (" << input_elements(original)
           << " input elements), which fails as: " << failure_signature(first[0]) << "\n";
  const CallRunner run = [&](const std::vector<Case>& calls, double deadline_s) {
    return probe.run(calls, info, deadline_s);
  };
  const std::size_t batch = std::max<std::size_t>(4, 2 * static_cast<std::size_t>(probe.settings().jobs));
  ShrinkOutcome s = shrink_call(original, first[0], run, r.budget_steps, r.budget_s - seconds_since(t0), batch);
  s.minimal.name = original.name + ".min";
  s.minimal.id = s.minimal.model + "::" + s.minimal.name;
  const double took = seconds_since(t0);
  host.out << side_by_side(original, first[0], s, took, r);
  if (!write_outputs(probe, r, first[0], s, took, host.err)) return kInternalError;
  const fs::path dir(r.out_dir);
  host.out << "wrote " << (dir / kMinimalManifest).string() << ", " << (dir / kReproScript).string() << " and "
           << (dir / kShrinkJson).string() << "\n";
  const RerunArguments rerun = rerun_arguments(probe.settings());
  std::vector<std::string> words{r.probe.binary, "run"};
  for (auto& w : repro::input_words({(dir / kMinimalManifest).string()})) words.push_back(std::move(w));
  words.insert(words.end(), rerun.args.begin(), rerun.args.end());
  host.out << "run it: " << repro::environment_prefix(rerun.environment) << repro::join_words(words) << "\n";
  return kOk;
}

}  // namespace opcheck
