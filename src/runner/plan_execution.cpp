#include "runner/plan_execution.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "common/call_signature.h"

extern char** environ;

namespace opcheck {
namespace {

const std::map<std::string, std::string>& process_env() {
  static const std::map<std::string, std::string> env = [] {
    std::map<std::string, std::string> m;
    for (char** e = environ; e && *e; ++e) {
      std::string kv = *e;
      auto eq = kv.find('=');
      if (eq != std::string::npos) m.emplace(kv.substr(0, eq), kv.substr(eq + 1));
    }
    return m;
  }();
  return env;
}

CondEnv env_for(const Case& c, const PlanExecutionOptions& opts) {
  CondEnv e;
  e.device = opts.device_name;
  e.ref_device = "cpu";
  e.dtype = c.dtype_spelling.empty() ? dtype_name(c.dtype) : c.dtype_spelling;
  e.op = c.op;
  e.model = c.model;
  e.env = process_env();
  return e;
}

// The first condition that holds, or nullptr.
const Condition* first_true(const std::vector<Condition>& conds, const CondEnv& env) {
  for (const auto& cond : conds)
    if (cond.ast && cond.ast->evaluate(env)) return &cond;
  return nullptr;
}

}  // namespace

Outcome decide_outcome(Stage stage, bool expected_failure) {
  Outcome o = stage_outcome(stage);
  if (!expected_failure) return o;
  // Strict xfail, like pytest's xfail_strict: a pass is a surprise. opcheck-side errors stay errors: an expected
  // device failure must not hide a broken case. A call the device has no kernel for is a device failure too.
  if (o == Outcome::Failed || o == Outcome::NotSupported) return Outcome::XFailed;
  if (o == Outcome::Passed) return Outcome::XPassed;
  return o;
}

CaseRecord record_for(const Case& c, const std::string& key, const std::string& signature) {
  CaseRecord r;
  r.id = c.id;
  r.model = c.model;
  r.name = c.name;
  r.op = c.op;
  r.dtype = dtype_name(case_dtype(c));
  r.file = c.loc.file;
  r.line = c.loc.line;
  r.marks = c.marks;
  for (const CaseField& f : kCaseFields)  // labels are string fields (case_fields.h checks it)
    if (f.record_label)
      if (const auto* m = std::get_if<std::string CaseSettings::*>(&f.member); m && !(c.*(*m)).empty())
        r.labels.push_back({&f, c.*(*m)});
  r.key = key;
  r.signature = signature;
  r.call = call_signature(c);
  return r;
}

namespace {

/// One plan executed: each unique case runs once (unless every occurrence of it is skipped) and its result is fanned
/// out to its occurrences, each judged by its own conditions and triage.
class PlanExecution {
 public:
  PlanExecution(const Plan& plan, const PlanExecutionOptions& opts, RunReport& report, const RecordSink& sink)
      : plan_(plan), opts_(opts), report_(report), sink_(sink), n_(plan.occurrences.size()) {}

  void run(const BatchRunner& runner) {
    decide_conditions();
    finish_skipped();
    choose_representatives();
    runner(batch_, [&](std::size_t b, Result result) { fan_out(b, result); }, [&] { return should_stop(); });
    collect_records();
  }

 private:
  // Conditions belong to occurrences (they are not part of the dedupe key): a unique case runs when at least one
  // of its occurrences is not skipped. A status config entry acts like a condition that holds, with the entry's
  // reason.
  void decide_conditions() {
    triage_.resize(n_);
    config_conditions_.resize(n_);
    skip_.assign(n_, nullptr);
    xfail_.assign(n_, nullptr);
    occurrences_of_.resize(plan_.unique.size());
    for (std::size_t i = 0; i < n_; ++i) {
      const Case& c = *plan_.occurrences[i];
      // The condition environment holds a copy of every environment variable: build it only for cases with
      // conditions.
      const CondEnv env = c.skip_if.empty() && c.xfail_if.empty() ? CondEnv{} : env_for(c, opts_);
      if (opts_.triage) triage_[i] = opts_.triage(c);
      const std::string status = triage_status_name(triage_[i].status);
      config_conditions_[i].expr = "status config: " + status;
      config_conditions_[i].reason = triage_[i].reason.empty() ? "status: " + status : triage_[i].reason;
      config_conditions_[i].strict = triage_[i].strict;
      skip_[i] = triage_[i].status == TriageStatus::Skip ? &config_conditions_[i] : first_true(c.skip_if, env);
      xfail_[i] = triage_[i].status == TriageStatus::Xfail ? &config_conditions_[i] : first_true(c.xfail_if, env);
      occurrences_of_[plan_.unique_of[i]].push_back(i);
    }
  }

  // Occurrences skipped by their own conditions are decided without running anything.
  void finish_skipped() {
    for (std::size_t i = 0; i < n_; ++i) {
      if (!skip_[i]) continue;
      Result r;
      r.stage = Stage::SKIPPED;
      r.outcome = Outcome::Skipped;
      r.message = skip_[i]->reason.empty() ? "skip_if: " + skip_[i]->expr : skip_[i]->reason;
      finish(i, std::move(r), "", input_signature(*plan_.occurrences[i]));
    }
  }

  // The representative of a unique case is its first occurrence that is not skipped: it is the one that runs.
  void choose_representatives() {
    for (std::size_t u = 0; u < plan_.unique.size(); ++u) {
      for (std::size_t i : occurrences_of_[u]) {
        if (skip_[i]) continue;
        batch_.push_back(plan_.occurrences[i]);
        batch_unique_.push_back(u);
        break;
      }
    }
  }

  // The first occurrence that is not skipped carries the result; the others are deduplicated from it.
  void fan_out(std::size_t b, const Result& result) {
    const std::string signature = input_signature(*batch_[b]);
    std::string first_id;
    for (std::size_t i : occurrences_of_[batch_unique_[b]]) {
      if (skip_[i]) continue;
      finish(i, result, first_id, signature);
      if (first_id.empty()) first_id = plan_.occurrences[i]->id;
    }
  }

  void finish(std::size_t i, Result result, const std::string& from, const std::string& signature) {
    CaseRecord rec = record_for(*plan_.occurrences[i], plan_.keys[i], signature);
    rec.index = static_cast<int>(plan_.selection_index[i]);
    rec.deduplicated_from = from;
    rec.status = triage_status_name(triage_[i].status);
    rec.status_reason = triage_[i].reason;
    rec.outcome = decide_outcome(result.stage, xfail_[i] != nullptr);
    rec.xfail_strictness = !xfail_[i] || xfail_[i]->strict ? XfailStrictness::Strict : XfailStrictness::NonStrict;
    explain_expected_failure(i, rec, result);
    // A case the exec layer rejects (an op that does not resolve, arguments that do not bind) is a manifest problem:
    // its message points at the case as a load error does.
    if (result.stage == Stage::INVALID_CASE && !rec.file.empty()) {
      const std::string where = rec.file + ":" + std::to_string(rec.line) + ": ";
      if (result.message.compare(0, where.size(), where) != 0) result.message = where + result.message;
    }
    result.case_id = rec.id;
    rec.result = std::move(result);
    if (fails_run(rec.outcome, rec.xfail_strictness, opts_.policy)) ++failures_;
    if (sink_) sink_(rec);
    records_[i] = std::move(rec);
  }

  void explain_expected_failure(std::size_t i, const CaseRecord& rec, Result& result) const {
    if (!xfail_[i] || (rec.outcome != Outcome::XFailed && rec.outcome != Outcome::XPassed)) return;
    const std::string& reason = xfail_[i]->reason;
    std::string why = "expected failure: " + reason;
    if (rec.outcome == Outcome::XPassed && rec.xfail_strictness == XfailStrictness::NonStrict)
      why = "passed although expected to fail (" + reason + "); a non-strict xfail, so the run does not fail";
    else if (rec.outcome == Outcome::XPassed)
      why = "passed although expected to fail (" + reason + ")" +
            (triage_[i].status == TriageStatus::Xfail        ? "; Fix: remove the xfail entry from the status config"
             : !plan_.occurrences[i]->upstream_test.empty() ? "; Fix: make the entry's test mandatory_success in its v2 config"
                                                            : "; Fix: remove or narrow the xfail_if condition");
    // A result served again (--resume, the results cache) carries the explanation from the run that recorded it.
    if (result.message.compare(0, why.size(), why) == 0) return;
    result.message = result.message.empty() ? why : why + "\n" + result.message;
  }

  bool should_stop() {
    if (opts_.interrupted && *opts_.interrupted) return stop("interrupted", "signal");
    if (opts_.maxfail && failures_ >= opts_.maxfail)
      return stop("maxfail reached (" + std::to_string(opts_.maxfail) + ")", "maxfail");
    if (opts_.deadline_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() >= opts_.deadline_s)
      return stop("deadline reached", "deadline");
    return false;
  }

  bool stop(const std::string& reason, const std::string& by) {
    report_.info.stop_reason = reason;
    report_.info.stopped_by = by;
    return true;
  }

  // The report keeps selection order; an occurrence without a record did not run. It is still a case of the
  // reports, skipped with the reason, so that every report counts the whole selection.
  void collect_records() {
    report_.info.interrupted = !report_.info.stop_reason.empty();
    report_.cases.clear();
    report_.cases.reserve(n_);
    report_.info.not_run = 0;
    for (std::size_t i = 0; i < n_; ++i) {
      if (records_[i]) {
        report_.cases.push_back(std::move(*records_[i]));
        continue;
      }
      ++report_.info.not_run;
      report_.cases.push_back(not_run_record(i));
    }
  }

  CaseRecord not_run_record(std::size_t i) const {
    CaseRecord rec = record_for(*plan_.occurrences[i], plan_.keys[i], std::string());
    rec.index = static_cast<int>(plan_.selection_index[i]);
    rec.status = triage_status_name(triage_[i].status);  // no status reason: the reports' reason is why it did not run
    rec.outcome = Outcome::Skipped;
    rec.result.case_id = rec.id;
    rec.result.stage = Stage::SKIPPED;
    rec.result.outcome = Outcome::Skipped;
    const std::string& why = report_.info.stop_reason;
    rec.result.message = "not run: the run stopped (" + (why.empty() ? std::string("stopped early") : why) + ")";
    return rec;
  }

  const Plan& plan_;
  const PlanExecutionOptions& opts_;
  RunReport& report_;
  const RecordSink& sink_;
  const std::size_t n_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::vector<Triage> triage_;
  std::vector<Condition> config_conditions_;  // the status config's entries, as conditions
  std::vector<const Condition*> skip_, xfail_;
  std::vector<std::vector<std::size_t>> occurrences_of_;  // per unique case, in selection order
  std::vector<const Case*> batch_;                        // the unique cases that run
  std::vector<std::size_t> batch_unique_;                 // their unique case
  std::vector<std::optional<CaseRecord>> records_ = std::vector<std::optional<CaseRecord>>(n_);
  std::size_t failures_ = 0;
};

}  // namespace

void execute_plan(const Plan& plan, const PlanExecutionOptions& opts, const BatchRunner& runner, RunReport& report,
                  const RecordSink& sink) {
  PlanExecution(plan, opts, report, sink).run(runner);
}

void add_load_problems(const DiagnosticList& diagnostics, const ManifestSet& set, RunReport& report) {
  std::map<std::string, std::string> model_of_file;
  for (const auto& m : set.manifests) model_of_file.emplace(m.path, m.model);
  std::set<std::string> taken;
  for (const auto& rec : report.cases) taken.insert(rec.id);

  // One ERROR testcase per rejected case (its problems together), or per located problem outside any case.
  std::vector<CaseRecord> records;
  std::map<std::string, std::size_t> by_case;
  for (const auto& d : diagnostics.items) {
    if (d.severity == Diagnostic::Severity::Warning) {
      report.info.warnings.push_back(d.format());
      continue;
    }
    const std::string where = d.loc.line > 0 ? d.loc.file + ":" + std::to_string(d.loc.line) : d.loc.file;
    const std::string text = d.format();
    if (!d.case_id.empty()) {
      auto it = by_case.find(d.case_id);
      if (it != by_case.end()) {
        records[it->second].result.message += "\n" + text;
        continue;
      }
      by_case.emplace(d.case_id, records.size());
    }
    CaseRecord rec;
    const auto sep = d.case_id.find("::");
    if (sep != std::string::npos) {
      rec.model = d.case_id.substr(0, sep);
      rec.name = d.case_id.substr(sep + 2);
    } else {
      auto m = model_of_file.find(d.loc.file);
      rec.model = m != model_of_file.end() ? m->second : std::filesystem::path(d.loc.file).stem().string();
      rec.name = where.empty() ? "load" : where;
    }
    rec.id = rec.model + "::" + rec.name;
    // A rejected case may share its name with one that loaded (a clash is itself the error): keep ids unique.
    if (!taken.insert(rec.id).second) {
      rec.name += " (" + where + ")";
      rec.id = rec.model + "::" + rec.name;
      taken.insert(rec.id);
    }
    rec.file = d.loc.file;
    rec.line = d.loc.line;
    rec.outcome = Outcome::Error;
    rec.result.case_id = rec.id;
    rec.result.stage = Stage::INVALID_CASE;
    rec.result.kind = VerdictKind::NotLoaded;
    rec.result.outcome = Outcome::Error;
    rec.result.message = text;
    records.push_back(std::move(rec));
  }
  for (auto& rec : records) report.cases.push_back(std::move(rec));
}

}  // namespace opcheck
