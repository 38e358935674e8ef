// `opcheck run`: load -> select -> plan -> execute -> record -> report.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "cli/exec_library.h"
#include "config/status_config.h"
#include "plan/plan.h"
#include "report/console.h"
#include "report/diff.h"
#include "report/html.h"
#include "report/journal.h"
#include "report/junit.h"
#include "report/merge.h"
#include "report/metrics.h"
#include "report/text_escape.h"
#include "common/sha256.h"
#include "runner/artifact_lock.h"
#include "runner/earlier_results.h"
#include "runner/run_identity.h"
#include "runner/session.h"
#include "runner/worker_pool.h"

namespace opcheck::cli {
namespace {

volatile bool g_interrupted = false;
volatile std::sig_atomic_t g_signals = 0;  // SIGINT/SIGTERM received so far
extern "C" void on_signal(int) {
  g_interrupted = true;
  g_signals = g_signals + 1;
}

// After the first signal running cases get this long to finish; a second signal ends them at once.
constexpr double kSignalGraceSeconds = 5;

// The end of a run that got as far as its reports: output is flushed and the process ends here, without freeing
// every record and manifest and without libtorch's static destructors (together ~80 ms for 10,000 cases). Every
// file the run wrote is complete and closed by now; the workers have exited.
[[noreturn]] void end_process(int rc) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(rc);
}

std::string iso_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// One line for a finished occurrence: "FAILED model::case [STAGE] first line of the message".
std::string case_line(const CaseRecord& r, bool color) {
  static const char* words[] = {"PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS"};
  static const char* colors[] = {"\033[32m", "\033[31m", "\033[31m", "\033[33m", "\033[33m", "\033[31m"};
  const auto o = static_cast<std::size_t>(r.outcome);
  std::string line = color ? std::string(colors[o]) + words[o] + "\033[0m" : words[o];
  // Ids and messages are data: control characters in them are shown, never sent to the terminal.
  line += " " + xml_visible(r.id);
  if (r.outcome != Outcome::Passed) {
    line += std::string(" [") + stage_name(r.result.stage) + "]";
    const std::string& m = r.result.message;
    if (!m.empty()) line += " " + xml_visible(m.substr(0, m.find('\n')));
  }
  if (!r.deduplicated_from.empty()) line += " (same as " + xml_visible(r.deduplicated_from) + ")";
  return line + "\n";
}

std::string host_name() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

// "I/N" from --shard, else GoogleTest-style variables, else a Kubernetes Indexed Job's index.
bool resolve_shard(const std::string& flag, int& index, int& total, std::string& error) {
  std::string spec = flag;
  if (spec.empty()) {
    const char* i = std::getenv("OPCHECK_SHARD_INDEX");
    const char* n = std::getenv("OPCHECK_TOTAL_SHARDS");
    if (i && n) spec = std::string(i) + "/" + n;
    else if (const char* k = std::getenv("JOB_COMPLETION_INDEX"); k && n) spec = std::string(k) + "/" + n;
  }
  if (spec.empty()) {
    index = 0;
    total = 1;
    return true;
  }
  auto slash = spec.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used = 0;
    index = std::stoi(spec.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("index");
    total = std::stoi(spec.substr(slash + 1), &used);
    if (used != spec.size() - slash - 1) throw std::invalid_argument("total");
  } catch (const std::exception&) {
    error = "invalid shard '" + spec + "': expected I/N with 0 <= I < N, e.g. --shard 0/3";
    return false;
  }
  if (total < 1 || index < 0 || index >= total) {
    error = "invalid shard '" + spec + "': expected I/N with 0 <= I < N";
    return false;
  }
  return true;
}

// The plan as a user reviews it: each unique case with its key and the occurrences it serves, then the counts.
void print_plan(const Plan& plan) {
  std::vector<std::vector<std::size_t>> served(plan.unique.size());
  for (std::size_t i = 0; i < plan.occurrences.size(); ++i) served[plan.unique_of[i]].push_back(i);
  std::string out;
  for (std::size_t u = 0; u < plan.unique.size(); ++u) {
    out += plan.unique[u]->id + "  " + plan.keys[plan.unique_first[u]] + "\n";
    for (std::size_t i : served[u])
      if (i != plan.unique_first[u]) out += "    also " + plan.occurrences[i]->id + "\n";
  }
  std::cout << out;
  std::cout << plan.occurrences.size() << (plan.occurrences.size() == 1 ? " case, " : " cases, ")
            << plan.unique.size() << " unique, "
            << plan.occurrences.size() - plan.unique.size()
            << (plan.occurrences.size() - plan.unique.size() == 1 ? " duplicate" : " duplicates") << " served\n";
}

// A count or a limit that must be a finite number greater than zero: "nan", "inf", 0 and negatives are usage errors
// (a nan timeout would fail every case as TIMEOUT; -j 0 or a negative byte limit would mean nothing).
CLI::Validator positive_finite(const char* what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || used == 0) return std::string(what) + " must be a number, got '" + text + "'";
        if (!std::isfinite(v) || v <= 0)
          return std::string(what) + " must be a finite number greater than 0, got '" + text + "'";
        return {};
      },
      "> 0");
}

// Writes the reports asked for, side by side: they are independent views of the same records. Returns
// kInternalError when one could not be written, else 0.
int write_reports(const RunReport& report, const RunFlags& f) {
  int failure = 0;
  std::vector<std::future<void>> writing;
  if (!f.junit_xml.empty())
    writing.push_back(std::async(std::launch::async, [&] { write_junit_xml(report, f.junit_xml); }));
  if (!f.junit_dir.empty())
    writing.push_back(std::async(std::launch::async, [&] { write_junit_dir(report, f.junit_dir); }));
  if (!f.metrics_json.empty())
    writing.push_back(std::async(std::launch::async, [&] { write_metrics_json(report, f.metrics_json); }));
  if (!f.html.empty()) writing.push_back(std::async(std::launch::async, [&] { write_html_report(report, {}, f.html); }));
  for (auto& w : writing) {
    try {
      w.get();
    } catch (const std::exception& e) {
      print_error(e, "writing reports: ");
      failure = kInternalError;
    }
  }
  return failure;
}

// The command that reruns one failed case alone: `opcheck repro ID` with the run's manifests and device flags (its
// bundle with --save-failures). None for a case rejected while loading (it has no dedupe key): there is nothing to
// rerun.
std::string repro_command(const CaseRecord& r, const RunFlags& f) {
  if (r.key.empty()) return {};
  namespace fs = std::filesystem;
  auto absolute = [](const std::string& p) {
    std::error_code ec;
    const fs::path a = fs::absolute(p, ec);
    return ec ? p : a.lexically_normal().string();
  };
  std::vector<std::string> words{opcheck_binary(), "repro", r.id};
  if (!f.exec.save_failures_dir.empty() && r.deduplicated_from.empty()) {
    words.insert(words.end(), {"--bundle", absolute(f.exec.save_failures_dir)});
    return join_words(words);
  }
  for (const auto& m : f.manifest.manifests) words.insert(words.end(), {"--manifests", absolute(m)});
  if (!f.config.empty()) words.insert(words.end(), {"--config", absolute(f.config)});
  words.insert(words.end(), {"--device", f.exec.device.empty() ? "auto" : f.exec.device});
  if (!f.exec.device_lib.empty()) words.insert(words.end(), {"--device-lib", absolute(f.exec.device_lib)});
  if (!f.exec.device_name.empty()) words.insert(words.end(), {"--device-name", f.exec.device_name});
  for (const auto& m : f.exec.device_imports) words.insert(words.end(), {"--device-import", m});
  if (!f.exec.compile_backend.empty()) words.insert(words.end(), {"--compile-backend", f.exec.compile_backend});
  return join_words(words);
}

}  // namespace

// "90", "90s", "15m", "2h", "1h30m" -> seconds.
bool parse_duration(const std::string& text, double& seconds) {
  if (text.empty()) return false;
  seconds = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t used = 0;
    double v;
    try {
      v = std::stod(text.substr(pos), &used);
    } catch (const std::exception&) {
      return false;
    }
    if (v < 0) return false;
    pos += used;
    char unit = pos < text.size() ? text[pos] : 's';
    double mult = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : unit == 'd' ? 86400 : -1;
    if (mult < 0) return false;
    if (pos < text.size()) ++pos;
    seconds += v * mult;
  }
  return true;
}

static std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

/// --device-import / OPCHECK_DEVICE_IMPORT and --compile-backend / TEST_COMPILE_BACKEND into the exec options.
/// False after printing a usage error.
static bool python_device_flags(RunFlags& f) {
  static const char* kNameChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.";
  if (f.exec.device_imports.empty()) {
    if (const char* env = std::getenv("OPCHECK_DEVICE_IMPORT")) {
      std::stringstream in(env);
      for (std::string item; std::getline(in, item, ',');)
        if (!trimmed(item).empty()) f.exec.device_imports.push_back(trimmed(item));
    }
  }
  for (const auto& m : f.exec.device_imports) {
    const bool ok = !m.empty() && m.find_first_not_of(kNameChars) == std::string::npos && m.front() != '.' &&
                    m.back() != '.';
    if (!ok) {
      std::cerr << "opcheck: error: --device-import '" << m << "' is not a Python module name\n"
                << "  Fix: name the module as `import` takes it, e.g. --device-import torch_spyre\n";
      return false;
    }
  }
  std::string backend = f.compile_backend;
  if (backend.empty())
    if (const char* env = std::getenv("TEST_COMPILE_BACKEND")) backend = trimmed(env);
  if (backend == "none") backend.clear();
  if (!backend.empty() && backend.find_first_not_of(std::string(kNameChars) + "-") != std::string::npos) {
    std::cerr << "opcheck: error: --compile-backend '" << backend << "' is not a backend name\n"
              << "  Fix: inductor, aot_eager, eager, a registered backend's name, or none\n";
    return false;
  }
  f.exec.compile_backend = backend;
  if (const char* py = std::getenv("OPCHECK_PYTHON"); py != nullptr && *py != '\0') f.exec.python = py;
  // Inductor's on-disk caches live with the run's artifacts, so a second run compiles from them.
  if (!backend.empty()) {
    std::error_code ec;
    const auto cache = std::filesystem::path(f.artifact_dir) / "inductor-cache";
    f.exec.inductor_cache_dir = std::filesystem::absolute(cache, ec).string();
  }
  return true;
}

void add_run_flags(CLI::App& app, RunFlags& f) {
  add_manifest_flags(app, f.manifest, true);
  add_case_id_args(app, f.manifest);
  app.add_option("--device", f.exec.device,
                 "Device under test: auto (a configured device library, else loopback), cpu (self-check), loopback, "
                 "privateuseone, a backend's registered name, cuda, xpu, mps")
      ->capture_default_str();
  app.add_option("--device-lib", f.exec.device_lib,
                 "PrivateUse1 backend library to load before any case runs (also OPCHECK_DEVICE_LIB)")
      ->type_name("PATH");
  app.add_option("--device-import", f.exec.device_imports,
                 "Python module whose import registers the device under test (repeatable; also "
                 "OPCHECK_DEVICE_IMPORT, comma-separated): each worker hosts a Python interpreter, e.g. "
                 "--device-import torch_spyre --device spyre")
      ->type_name("MODULE")
      ->allow_extra_args(false);
  app.add_option("--compile-backend", f.compile_backend,
                 "Run the device side of every case as torch.compile(backend=NAME) of the op's Python callable: "
                 "inductor, aot_eager, eager, any registered backend, or none (eager, the default; also "
                 "TEST_COMPILE_BACKEND)")
      ->type_name("NAME");
  app.add_option("--device-name", f.exec.device_name,
                 "Name skip_if expressions and reports see for the device (e.g. spyre)");
  app.add_option("--reference-dtype", f.reference_dtype,
                 "Reference compute dtype: same, float32, float64 (default: the case's dtype, float32 where the "
                 "CPU lacks a kernel)")
      ->check(CLI::IsMember({"same", "float32", "float64"}));
  app.add_option("--repeat", f.exec.repeat, "Device runs per case to detect nondeterminism (default 2, 1 on cpu)");
  app.add_option("--max-case-bytes", f.exec.max_case_bytes, "Skip cases whose tensors need more bytes than this")
      ->check(positive_finite("--max-case-bytes"));
  app.add_flag("--no-dedupe", f.no_dedupe, "Run every occurrence, even when the same call appears again");
  app.add_flag("--collect-only,--co", f.collect_only,
               "Print the plan (unique cases and what each dedupes) without running anything or loading libtorch");
  app.add_option("--shard", f.shard,
                 "Run shard I of N of the unique cases (0-based), e.g. 1/3; also OPCHECK_SHARD_INDEX/"
                 "OPCHECK_TOTAL_SHARDS or JOB_COMPLETION_INDEX")
      ->type_name("I/N");
  app.add_option("--maxfail", f.maxfail, "Stop after N failures or errors")->type_name("N");
  app.add_flag("-x,--exitfirst", f.exitfirst, "Stop after the first failure or error (--maxfail 1)");
  app.add_option("--durations", f.durations, "Show the N slowest cases before the summary (0: all)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--deadline", f.deadline, "Stop starting new cases after this long, e.g. 90m, 2h")
      ->type_name("DURATION");
  app.add_option("--junit-xml", f.junit_xml, "Write JUnit XML (pytest's xunit2 shape, one testsuite for the run)")
      ->type_name("PATH");
  app.add_option("--junit-dir", f.junit_dir, "Write one JUnit XML file per model, DIR/<model>.xml (one testsuite each)")
      ->type_name("DIR");
  app.add_option("--metrics-json", f.metrics_json, "Write the JSON metrics file (schemas/metrics.schema.json)")
      ->type_name("PATH");
  app.add_option("--html", f.html, "Write the self-contained HTML dashboard of this run")->type_name("PATH");
  app.add_option("--artifact-dir", f.artifact_dir, "Where the journal of results (journal.jsonl) is kept")
      ->capture_default_str();
  app.add_option("--results-cache", f.results_cache,
                 "Keep verdicts by dedupe key in FILE (valid for the same opcheck, libtorch and device library)")
      ->type_name("FILE");
  app.add_flag("--reuse-results", f.reuse_results,
               "Serve unchanged cases from --results-cache instead of running them (off by default)");
  app.add_flag("--resume", f.resume, "Continue a killed run: reuse the results in the artifact dir's journal");
  app.add_flag("--last-failed,--lf", f.last_failed,
               "Run only what failed or errored in the previous run (its journal); everything when nothing did");
  app.add_option("--baseline", f.baseline, "Compare with an earlier metrics file at the end; exit 1 on regressions")
      ->type_name("OLD.json");
  app.add_option("-j,--jobs", f.jobs, "Worker processes (default: one per core, one intra-op thread each)")
      ->check(positive_finite("-j"));
  app.add_option("--intra-op-threads", f.exec.intra_op_threads, "libtorch intra-op threads per worker (default: cores / jobs)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  app.add_option("--timeout", f.timeout_s, "Seconds a case may take before its worker is killed (TIMEOUT); > 0")
      ->capture_default_str()
      ->check(positive_finite("--timeout"));
  app.add_flag("--no-isolation", f.no_isolation, "Run cases in this process (debugging; a crash ends the run)");
  app.add_option("--devices", f.devices, "Device indices of one backend, one worker per index, e.g. 0,1")
      ->delimiter(',')
      ->allow_extra_args(false);
  app.add_option("--config", f.config,
                 "Status config (known failures, skips, tolerances per device); default: opcheck.yaml in a "
                 "manifest folder")
      ->type_name("FILE");
  app.add_option("--save-failures", f.exec.save_failures_dir,
                 "Write a folder per failed or errored case into DIR: the case alone as a manifest of its exact input "
                 "tensors, the device and reference outputs, and a README with the commands that rerun it")
      ->type_name("DIR");
  app.add_flag("--xpass-ok", f.xpass_ok, "A case expected to fail that passes (XPASS) does not fail the run");
  app.add_option("--tb", f.tb,
                 "Failures section after the run, as pytest's --tb: short (file:line, op and overload, the message "
                 "with its figures, the repro command), long (everything the reports carry, captured stderr "
                 "included), no (none)")
      ->capture_default_str()
      ->check(CLI::IsMember({"short", "long", "no"}));
  app.add_option("-r", f.report_chars,
                 "Short summary, as pytest's -r: f failed, E error, s skipped, x xfailed, X xpassed, p passed, "
                 "a all but passed, A all, N none (e.g. -rA, -rfE)")
      ->type_name("CHARS")
      ->capture_default_str();
  app.add_flag("-v,--verbose", f.verbose, "A line per case");
  app.add_flag("-q,--quiet", f.quiet, "Only failures and the summary line");
}

int cmd_run(RunFlags& f) {
  const auto t0 = std::chrono::steady_clock::now();
  // libtorch loads on another thread while the manifests are read and planned.
  std::optional<ExecLibrary> exec_library;
  if (!f.collect_only) exec_library.emplace();
  std::string error;
  FailureReportOptions failure_report;
  std::string report_chars;
  if (!parse_traceback_style(f.tb, failure_report.style) ||
      !parse_report_chars(f.report_chars, report_chars, error)) {
    std::cerr << "opcheck: error: " << (error.empty() ? "--tb must be short, long or no" : error) << "\n";
    return kUsageError;
  }
  failure_report.repro_command = [&f](const CaseRecord& r) { return repro_command(r, f); };
  Loaded l = load_and_select(f.manifest);
  print_diagnostics(l.diagnostics, /*errors_only=*/true);
  if (l.selected.usage_error) return kUsageError;
  const bool invalid_input = l.diagnostics.has_errors();

  int shard_index = 0, shard_total = 1;
  if (!resolve_shard(f.shard, shard_index, shard_total, error)) {
    std::cerr << "opcheck: error: " << error << "\n";
    return kUsageError;
  }
  double deadline_s = 0;
  if (!f.deadline.empty() && !parse_duration(f.deadline, deadline_s)) {
    std::cerr << "opcheck: error: invalid --deadline '" << f.deadline << "'\n  Fix: use seconds or a unit, e.g. 90s, 45m, 2h\n";
    return kUsageError;
  }

  namespace fs = std::filesystem;
  const std::string journal_path = (fs::path(f.artifact_dir) / "journal.jsonl").string();
  // Earlier results: --resume keeps them, --last-failed narrows the selection to what went wrong in them.
  std::vector<CaseRecord> previous;
  std::optional<RunInfo> previous_info;
  if (f.resume || f.last_failed) {
    std::error_code ec;
    if (fs::exists(journal_path, ec)) {
      try {
        Journal j = read_journal(journal_path);
        print_diagnostics(j.diagnostics);
        previous = std::move(j.records);
        previous_info = j.info;
      } catch (const std::exception& e) {
        print_error(e, "cannot read " + journal_path + ": ");
        return kUsageError;
      }
    } else if (f.last_failed) {
      std::cerr << "opcheck: no previous run in " << f.artifact_dir << "; running everything selected\n";
    }
  }
  std::vector<const Case*> cases = l.selected.cases;
  if (f.last_failed && !previous.empty()) {
    std::set<std::string> bad;
    for (const auto& r : previous)
      if (fails_run(r.outcome, r.xfail_strictness, RunPolicy{f.xpass_ok})) bad.insert(r.id);
    if (bad.empty()) {
      // pytest's --lf: with nothing failed last time, everything selected runs.
      std::cerr << "opcheck: nothing failed in the previous run (" << journal_path
                << "); running everything selected\n";
    } else {
      std::vector<const Case*> kept;
      for (const Case* c : cases)
        if (bad.count(c->id)) kept.push_back(c);
      cases = std::move(kept);
    }
    previous.clear();
  }
  // --strict-markers is pytest's: a problem found while collecting stops the run before any case runs.
  if (f.manifest.strict_markers && invalid_input) {
    std::cerr << "opcheck: --strict-markers: errors while loading the manifests; no case runs\n";
    cases.clear();
  }
  if (cases.empty()) {
    if (!invalid_input) {
      std::cout << "no tests ran in 0.00s\n";
      return kNoTests;
    }
    // Nothing runnable, but what was rejected is still the run's result: the reports say so.
    RunReport report;
    report.info.opcheck_version = OPCHECK_VERSION;
    report.info.host = host_name();
    report.info.started_at = iso_now();
    report.info.argv = f.argv;
    report.info.policy.xpass_ok = f.xpass_ok;
    for (const auto& m : l.set.manifests) report.info.manifests[m.path] = m.sha256;
    add_load_problems(l.diagnostics, l.set, report);
    report.info.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int report_failure = write_reports(report, f);
    std::cout << failure_details(report, failure_report) << short_summary(report, report_chars)
              << summary_line(report, isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR")) << "\n";
    return report_failure ? report_failure : kInterrupted;
  }

  if (f.reference_dtype == "same") f.exec.reference_dtype = ReferenceDtype::Same;
  else if (f.reference_dtype == "float32") f.exec.reference_dtype = ReferenceDtype::Float32;
  else if (f.reference_dtype == "float64") f.exec.reference_dtype = ReferenceDtype::Float64;
  if (!python_device_flags(f)) return kUsageError;
  // A configured library is the default device, unless Python modules register it (one backend per process).
  if (f.exec.device_lib.empty() && f.exec.device_imports.empty())
    if (const char* lib = std::getenv("OPCHECK_DEVICE_LIB")) f.exec.device_lib = lib;
  // Workers x intra-op threads = cores: no oversubscription, and every core busy.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int jobs = f.jobs > 0 ? f.jobs : cores;
  if (!f.devices.empty()) jobs = std::max<int>(jobs, static_cast<int>(f.devices.size()));
  if (f.no_isolation) jobs = 1;
  if (f.exec.intra_op_threads == 0) f.exec.intra_op_threads = std::max(1, cores / jobs);

  if (!f.exec.save_failures_dir.empty() && !f.collect_only) {
    std::error_code ec;
    fs::create_directories(f.exec.save_failures_dir, ec);
    if (ec || !fs::is_directory(f.exec.save_failures_dir, ec)) {
      std::cerr << "opcheck: error: cannot create the --save-failures folder " << f.exec.save_failures_dir << ": "
                << (ec ? ec.message() : std::string("not a folder")) << "\n  Fix: pass a writable folder\n";
      return kUsageError;
    }
  }
  // The dedupe keys (a SHA-256 per case) are computed while libtorch is still loading.
  KnownKeys known_keys;
  if (exec_library)
    for (const Case* c : cases) known_keys.emplace(c, dedupe_key(*c));
  std::unique_ptr<Executor> ex;
  if (!f.collect_only) {
    bool setup_failed = false;
    ex = exec_library->create(f.exec, error, setup_failed);
    if (!ex) {
      std::cerr << "opcheck: error: " << error << "\n";
      return setup_failed ? kUsageError : kInternalError;
    }
  }
  // The name skip_if expressions and the status config's device overrides see.
  const std::string device_name = ex ? ex->info().device_name
                                     : !f.exec.device_name.empty() ? f.exec.device_name : f.exec.device;

  // The status config: per-case tolerances and triage status, applied to copies so the loaded manifests stay as
  // written. `exclude` deselects.
  StatusConfig config;
  if (!load_command_config(f.config, f.manifest, config)) return kUsageError;
  std::deque<Case> configured;
  std::map<const Case*, Triage> triage;
  std::size_t excluded = 0;
  if (!config.rules.empty()) {
    std::vector<const Case*> kept;
    for (const Case* c : cases) {
      configured.push_back(*c);
      CaseStatus st = apply_status_config(config, configured.back(), device_name);
      if (st.status == TriageStatus::Exclude) {
        configured.pop_back();
        ++excluded;
        continue;
      }
      triage[&configured.back()] = {triage_status_name(st.status), st.reason, st.strict};
      kept.push_back(&configured.back());
    }
    cases = std::move(kept);
  }

  Plan plan = make_plan(cases, !f.no_dedupe, &known_keys);
  const std::size_t all_unique = plan.unique.size();
  if (shard_total > 1) plan = shard_plan(plan, shard_index, shard_total);

  if (f.collect_only) {
    print_plan(plan);
    return invalid_input ? kInterrupted : kOk;
  }

  const ExecInfo& info = ex->info();
  // One line says which device and how much work: the executor's account of the device when it gives one.
  if (!f.quiet)
    std::cerr << "opcheck: "
              << (!info.log_line.empty() ? info.log_line
                                         : "device " + info.device_name + " (" + info.device +
                                               (info.device_lib.empty() ? "" : ", " + info.device_lib) + ")")
              << "; " << plan.occurrences.size() << (plan.occurrences.size() == 1 ? " case, " : " cases, ")
              << plan.unique.size() << " unique"
              << (shard_total > 1 ? ", shard " + std::to_string(shard_index) + "/" + std::to_string(shard_total) +
                                        " of " + std::to_string(all_unique)
                                  : std::string())
              << "\n";

  RunReport report;
  report.info.opcheck_version = OPCHECK_VERSION;
  report.info.torch_version = info.torch_version;
  report.info.device = info.device;
  report.info.device_name = info.device_name;
  report.info.device_lib = info.device_lib;
  report.info.device_lib_sha256 = info.device_lib_sha256;
  report.info.torch_path = info.torch_path;
  report.info.python_modules = info.python_modules;
  report.info.compile_backend = info.compile_backend;
  report.info.device_environment = device_environment_now();
  if (!config.path.empty()) report.info.status_config_sha256 = sha256_file(config.path);
  report.info.dedupe_key_version = kDedupeKeyVersion;
  report.info.enabled_ops = info.enabled_ops;
  report.info.host = host_name();
  report.info.started_at = iso_now();
  report.info.argv = f.argv;
  report.info.policy.xpass_ok = f.xpass_ok;
  report.info.deselected = static_cast<std::int64_t>(l.selected.deselected + excluded);
  if (shard_total > 1) report.info.shard = std::to_string(shard_index) + "/" + std::to_string(shard_total);
  for (const auto& m : l.set.manifests) report.info.manifests[m.path] = m.sha256;

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  SessionOptions so;
  so.device_name = info.device_name;
  if (!triage.empty())
    so.triage = [&](const Case& c) {
      auto it = triage.find(&c);
      return it == triage.end() ? Triage{} : it->second;
    };
  so.policy = report.info.policy;
  so.maxfail = f.exitfirst ? 1 : f.maxfail;
  so.deadline_s = deadline_s;
  so.interrupted = &g_interrupted;

  PoolOptions pool;
  pool.workers = jobs;
  pool.device_indices = f.devices;
  pool.default_timeout_s = f.timeout_s;
  pool.isolation = !f.no_isolation;
  std::optional<std::chrono::steady_clock::time_point> first_signal;
  pool.abort_running = [&first_signal] {
    if (g_signals == 0) return false;
    const auto now = std::chrono::steady_clock::now();
    if (!first_signal) first_signal = now;
    if (g_signals >= 2 || now - *first_signal >= std::chrono::duration<double>(kSignalGraceSeconds)) {
      std::cerr << "opcheck: " << (g_signals >= 2 ? "second signal" : "grace period over")
                << ": ending the cases still running\n";
      return true;
    }
    return false;
  };

  // Earlier results are served only under this run's identity: what computed them must be what would compute them
  // now.
  EarlierResults earlier;
  if (f.resume && !earlier.adopt_journal(std::move(previous), previous_info, report.info, journal_path, error)) {
    std::cerr << "opcheck: error: " << error << "\n";
    return kUsageError;
  }
  if (!f.results_cache.empty()) {
    try {
      std::string note;
      earlier.adopt_cache(f.results_cache, report.info, f.reuse_results, note);
      if (!note.empty() && !f.quiet) std::cerr << "opcheck: " << note;
    } catch (const std::exception& e) {
      print_error(e, "cannot read the results cache: ");
      return kUsageError;
    }
  }

  BatchRunner runner = [&](const std::vector<const Case*>& batch, const std::function<void(std::size_t, Result)>& done,
                           const std::function<bool()>& stop) {
    std::vector<const Case*> todo;
    std::vector<std::size_t> todo_index;
    std::size_t resumed = 0, cached = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      // Only a resumed run or a reused cache has results to serve; otherwise hashing every case again would cost a
      // SHA-256 per case for nothing.
      if (earlier.can_serve()) {
        EarlierResults::Source from{};
        if (const Result* r = earlier.find(batch[i]->id, dedupe_key(*batch[i]), from)) {
          done(i, *r);
          ++(from == EarlierResults::Source::Journal ? resumed : cached);
          continue;
        }
      }
      todo.push_back(batch[i]);
      todo_index.push_back(i);
    }
    if (resumed && !f.quiet)
      std::cerr << "opcheck: resuming: " << resumed << " results reused from " << journal_path << "\n";
    if (cached && !f.quiet)
      std::cerr << "opcheck: " << cached << " unchanged cases served from " << f.results_cache << "\n";
    const PoolStats stats =
        run_cases(*ex, todo, pool, [&](std::size_t k, Result r) { done(todo_index[k], std::move(r)); }, stop);
    note_worker_starts(report.info, stats.worker_start_s);
  };

  // One run per artifact folder: a second one would unlink the journal the first is writing.
  static ArtifactLock artifact_lock;  // held until the process ends
  {
    std::string holder = "pid " + std::to_string(::getpid()) + " on " + host_name() + " since " + iso_now() + ":";
    for (const auto& a : f.argv) holder += " " + a;
    if (!artifact_lock.acquire(f.artifact_dir, holder, error)) {
      std::cerr << "opcheck: error: " << error
                << "\n  Fix: wait for that run to end, or give this one its own --artifact-dir\n";
      return kUsageError;
    }
  }
  std::unique_ptr<JournalWriter> journal;
  try {
    fs::create_directories(f.artifact_dir);
    if (!f.resume) fs::remove(journal_path);
    journal = std::make_unique<JournalWriter>(journal_path, &report.info);
    pool.after_results = [&journal] { journal->flush(); };
  } catch (const std::exception& e) {
    std::cerr << "opcheck: error: cannot write the journal in " << f.artifact_dir << ": " << e.what()
              << "\n  Fix: pass a writable --artifact-dir\n";
    return kUsageError;
  }

  // Colour only for a person at a terminal, and never when NO_COLOR is set (no-color.org).
  const bool tty = isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  auto last_progress = std::chrono::steady_clock::now();
  std::size_t finished = 0;
  std::size_t bad = 0;
  const bool progress_tty = isatty(STDERR_FILENO) && !f.verbose && !f.quiet;
  bool progress_shown = false;
  const auto run_start = std::chrono::steady_clock::now();
  RecordSink sink = [&](const CaseRecord& r) {
    ++finished;
    if (fails_run(r, report.info)) ++bad;
    // A resumed run appends only new results: what the journal holds already stays as it is.
    if (!earlier.journaled(r)) journal->append(r);
    // Failures are listed together at the end; -v shows every case as it finishes.
    if (f.verbose) std::cout << case_line(r, tty) << std::flush;
    if (f.verbose || f.quiet) return;
    // A terminal gets one line updated in place; a log gets a line every few seconds.
    auto now = std::chrono::steady_clock::now();
    if (now - last_progress < (progress_tty ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000)) &&
        finished != plan.occurrences.size())
      return;
    last_progress = now;
    const double elapsed = std::chrono::duration<double>(now - run_start).count();
    const double eta = finished ? elapsed / finished * (plan.occurrences.size() - finished) : 0;
    std::string line = std::to_string(finished) + "/" + std::to_string(plan.occurrences.size()) + " done, " +
                       std::to_string(finished - bad) + " ok, " + std::to_string(bad) + " failed, ETA " +
                       format_session_duration(eta) + ", last " + r.id;
    if (progress_tty) {
      if (line.size() > 110) line = line.substr(0, 107) + "...";
      std::cerr << "\r\033[K" << line << std::flush;
      progress_shown = true;
    } else {
      std::cerr << "opcheck: " << line << "\n";
    }
  };
  run_session(plan, so, runner, report, sink);
  if (progress_shown) std::cerr << "\r\033[K" << std::flush;
  report.info.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  journal->close();

  if (!f.results_cache.empty()) {
    try {
      earlier.write_cache(f.results_cache, report.info, report.cases);
    } catch (const std::exception& e) {
      print_error(e, "cannot write the results cache: ");
    }
  }

  // Reports are written whatever happened, interrupted runs included: partial but valid. The manifests' problems
  // are in them too: errors as ERROR cases, warnings listed.
  add_load_problems(l.diagnostics, l.set, report);
  const int report_failure = write_reports(report, f);

  if (!f.exec.save_failures_dir.empty() && !f.quiet) {
    const bool any = std::any_of(report.cases.begin(), report.cases.end(), [](const CaseRecord& r) {
      return r.outcome == Outcome::Failed || r.outcome == Outcome::Error;
    });
    if (any)
      std::cerr << "opcheck: failure bundles in " << fs::absolute(f.exec.save_failures_dir).string()
                << " (README.md in each says how to rerun the case; `opcheck repro --bundle DIR` prints it)\n";
  }
  std::cout << failure_details(report, failure_report);
  if (report.info.interrupted)
    std::cout << "stopped early: " << report.info.stop_reason << "; " << report.info.not_run << " not run\n";
  if (f.durations >= 0) std::cout << durations_section(report, f.durations);
  // The comparison with --baseline comes before the summary line, which is always the last line (pytest's).
  bool regressions = false;
  if (!f.baseline.empty()) {
    try {
      DiffResult d = diff_reports(read_metrics(f.baseline), report);
      std::cout << render_diff(d);
      regressions = d.has_regressions();
    } catch (const std::exception& e) {
      print_error(e, "baseline " + f.baseline + ": ");
      std::cout << short_summary(report, report_chars) << summary_line(report, tty) << "\n";
      end_process(kUsageError);
    }
  }
  std::cout << short_summary(report, report_chars) << summary_line(report, tty) << "\n";
  auto exit_code = [&]() -> int {
    if (report_failure) return report_failure;
    // pytest's: a signal or a deadline interrupts (2), --maxfail is a run with failures (1).
    if (g_interrupted || invalid_input || report.info.stopped_by == "signal" || report.info.stopped_by == "deadline")
      return kInterrupted;
    if (regressions) return kTestsFailed;
    for (const auto& r : report.cases)
      if (fails_run(r, report.info)) return kTestsFailed;
    return kOk;
  };
  end_process(exit_code());
}

}  // namespace opcheck::cli

namespace opcheck::cli {

int cmd_merge(const std::vector<std::string>& inputs, const std::string& junit_xml, const std::string& metrics_json,
              bool allow_partial) {
  std::vector<RunReport> shards;
  try {
    for (const auto& p : inputs) shards.push_back(read_metrics(p));
    std::string partial;
    RunReport merged = merge_reports(shards, allow_partial, &partial);
    if (!partial.empty()) std::cerr << "opcheck merge: warning: " << partial << "\n";
    if (!junit_xml.empty()) write_junit_xml(merged, junit_xml);
    if (!metrics_json.empty()) write_metrics_json(merged, metrics_json);
    std::cout << "shards: " << merged.info.shard_count << ", longest " << format_session_duration(merged.info.shard_longest_s)
              << ", summed " << format_session_duration(merged.info.shard_sum_s) << "\n";
    std::cout << summary_line(merged) << "\n";
  } catch (const std::exception& e) {
    print_error(e);
    return kInterrupted;
  }
  return kOk;
}

int cmd_diff(const std::string& old_path, const std::string& new_path) {
  try {
    DiffResult d = diff_reports(read_metrics(old_path), read_metrics(new_path));
    std::cout << render_diff(d);
    return diff_exit_code(d);
  } catch (const std::exception& e) {
    print_error(e);
    return kInterrupted;
  }
}

}  // namespace opcheck::cli
