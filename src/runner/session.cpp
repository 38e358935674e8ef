#include "runner/session.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
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

CondEnv env_for(const Case& c, const SessionOptions& opts) {
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
  r.dtype = dtype_name(c.dtype);
  r.file = c.loc.file;
  r.line = c.loc.line;
  r.marks = c.marks;
  r.upstream_test = c.upstream_test;
  r.key = key;
  r.signature = signature;
  r.call = call_signature(c);
  return r;
}

void run_session(const Plan& plan, const SessionOptions& opts, const BatchRunner& runner, RunReport& report,
                 const RecordSink& sink) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t n = plan.occurrences.size();

  // Conditions belong to occurrences (they are not part of the dedupe key): a unique case runs when at least one
  // of its occurrences is not skipped.
  // A status config entry acts like a condition that holds, with the entry's reason.
  std::vector<Triage> triage(n);
  std::vector<Condition> config_conditions(n);
  std::vector<const Condition*> skip(n, nullptr), xfail(n, nullptr);
  std::vector<char> unique_needed(plan.unique.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    const Case& c = *plan.occurrences[i];
    // The condition environment holds a copy of every environment variable: build it only for cases with conditions.
    const CondEnv env = c.skip_if.empty() && c.xfail_if.empty() ? CondEnv{} : env_for(c, opts);
    if (opts.triage) triage[i] = opts.triage(c);
    config_conditions[i].expr = "status config: " + triage[i].status;
    config_conditions[i].reason = triage[i].reason.empty() ? "status: " + triage[i].status : triage[i].reason;
    config_conditions[i].strict = triage[i].strict;
    skip[i] = triage[i].status == "skip" ? &config_conditions[i] : first_true(c.skip_if, env);
    xfail[i] = triage[i].status == "xfail" ? &config_conditions[i] : first_true(c.xfail_if, env);
    if (!skip[i]) unique_needed[plan.unique_of[i]] = 1;
  }

  std::vector<std::vector<std::size_t>> occurrences_of(plan.unique.size());
  for (std::size_t i = 0; i < n; ++i) occurrences_of[plan.unique_of[i]].push_back(i);

  std::vector<CaseRecord> records(n);
  std::vector<char> have(n, 0);
  std::size_t failures = 0;

  auto finish = [&](std::size_t i, Result result, const std::string& from, const std::string& signature) {
    CaseRecord rec = record_for(*plan.occurrences[i], plan.keys[i], signature);
    rec.index = static_cast<int>(plan.selection_index[i]);
    rec.deduplicated_from = from;
    rec.status = triage[i].status;
    rec.status_reason = triage[i].reason;
    rec.outcome = decide_outcome(result.stage, xfail[i] != nullptr);
    rec.xfail_strictness = !xfail[i] || xfail[i]->strict ? XfailStrictness::Strict : XfailStrictness::NonStrict;
    if (xfail[i] && (rec.outcome == Outcome::XFailed || rec.outcome == Outcome::XPassed)) {
      std::string why = "expected failure: " + xfail[i]->reason;
      if (rec.outcome == Outcome::XPassed && rec.xfail_strictness == XfailStrictness::NonStrict)
        why = "passed although expected to fail (" + xfail[i]->reason + "); a non-strict xfail, so the run does not fail";
      else if (rec.outcome == Outcome::XPassed)
        why = "passed although expected to fail (" + xfail[i]->reason + ")" +
              (triage[i].status == "xfail"                    ? "; Fix: remove the xfail entry from the status config"
               : !plan.occurrences[i]->upstream_test.empty() ? "; Fix: make the entry's test mandatory_success in its v2 config"
                                                             : "; Fix: remove or narrow the xfail_if condition");
      result.message = result.message.empty() ? why : why + "\n" + result.message;
    }
    // A case the exec layer rejects (an op that does not resolve, arguments that do not bind) is a manifest problem:
    // its message points at the case as a load error does.
    if (result.stage == Stage::INVALID_CASE && !rec.file.empty()) {
      const std::string where = rec.file + ":" + std::to_string(rec.line) + ": ";
      if (result.message.compare(0, where.size(), where) != 0) result.message = where + result.message;
    }
    result.case_id = rec.id;
    rec.result = std::move(result);
    if (fails_run(rec.outcome, rec.xfail_strictness, opts.policy)) ++failures;
    if (sink) sink(rec);
    records[i] = std::move(rec);
    have[i] = 1;
  };

  // Occurrences skipped by their own conditions are decided without running anything.
  for (std::size_t i = 0; i < n; ++i) {
    if (!skip[i]) continue;
    Result r;
    r.stage = Stage::SKIPPED;
    r.outcome = Outcome::Skipped;
    r.message = skip[i]->reason.empty() ? "skip_if: " + skip[i]->expr : skip[i]->reason;
    finish(i, std::move(r), "", input_signature(*plan.occurrences[i]));
  }

  std::vector<const Case*> batch;
  std::vector<std::size_t> batch_unique;
  for (std::size_t u = 0; u < plan.unique.size(); ++u) {
    if (!unique_needed[u]) continue;
    // The representative is the first occurrence that is not skipped: it is the one that runs.
    std::size_t rep = occurrences_of[u].front();
    for (std::size_t i : occurrences_of[u])
      if (!skip[i]) { rep = i; break; }
    batch.push_back(plan.occurrences[rep]);
    batch_unique.push_back(u);
  }

  auto stop = [&]() {
    if (opts.interrupted && *opts.interrupted) {
      report.info.stop_reason = "interrupted";
      report.info.stopped_by = "signal";
      return true;
    }
    if (opts.maxfail && failures >= opts.maxfail) {
      report.info.stop_reason = "maxfail reached (" + std::to_string(opts.maxfail) + ")";
      report.info.stopped_by = "maxfail";
      return true;
    }
    if (opts.deadline_s > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= opts.deadline_s) {
      report.info.stop_reason = "deadline reached";
      report.info.stopped_by = "deadline";
      return true;
    }
    return false;
  };

  runner(batch, [&](std::size_t b, Result result) {
    std::size_t u = batch_unique[b];
    const std::string signature = input_signature(*batch[b]);
    std::string first_id;
    for (std::size_t i : occurrences_of[u]) {
      if (skip[i]) continue;
      if (first_id.empty()) {
        first_id = plan.occurrences[i]->id;
        finish(i, result, "", signature);
      } else {
        finish(i, result, first_id, signature);
      }
    }
  }, stop);

  report.info.interrupted = !report.info.stop_reason.empty();
  report.cases.clear();
  report.cases.reserve(n);
  report.info.not_run = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (have[i]) report.cases.push_back(std::move(records[i]));
    else ++report.info.not_run;
  }
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
    rec.result.outcome = Outcome::Error;
    rec.result.message = text;
    records.push_back(std::move(rec));
  }
  for (auto& rec : records) report.cases.push_back(std::move(rec));
}

}  // namespace opcheck
