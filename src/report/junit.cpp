#include "report/junit.h"

#include <cctype>
#include <charconv>
#include <filesystem>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>

#include "common/sha256.h"
#include "common/text.h"
#include "common/text_escape.h"
#include "opcheck/case.h"
#include "opcheck/dtype.h"
#include "report/atomic_file.h"
#include "report/figures.h"
#include "report/report_error.h"
#include "report/stats.h"

namespace opcheck {
namespace {

std::string seconds(double ms) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", ms / 1000.0);
  return buf;
}

// XML written as text, element by element, laid out as pugixml's default format does (two-space indent, an
// element holding only text on one line, empty elements as `<name ... />`).
class XmlOut {
 public:
  explicit XmlOut(std::string& out) : out_(out) {}
  void start(int depth, const char* name) {
    out_.append(static_cast<std::size_t>(depth) * 2, ' ');
    out_ += '<';
    out_ += name;
  }
  void attr(const char* name, std::string_view value) {
    out_ += ' ';
    out_ += name;
    out_ += "=\"";
    append_escaped(out_, value, EscapeMode::XmlAttribute);
    out_ += '"';
  }
  void end_start() { out_ += ">\n"; }
  void end_empty() { out_ += " />\n"; }
  /// Ends the start tag with the element's text and its end tag; with no text the element is empty.
  void text_and_end(const char* name, std::string_view text) {
    if (text.empty()) return end_empty();
    out_ += '>';
    append_escaped(out_, text, EscapeMode::XmlText);
    out_ += "</";
    out_ += name;
    out_ += ">\n";
  }
  void end(int depth, const char* name) {
    out_.append(static_cast<std::size_t>(depth) * 2, ' ');
    out_ += "</";
    out_ += name;
    out_ += ">\n";
  }
  void property(int depth, const char* name, std::string_view value) {
    start(depth, "property");
    attr("name", name);
    attr("value", value);
    end_empty();
  }

 private:
  std::string& out_;
};

std::string location(const CaseRecord& rec) {
  if (rec.file.empty()) return {};
  return rec.line > 0 ? rec.file + ":" + std::to_string(rec.line) : rec.file;
}

// Why a case was skipped or expected to fail: the triage status reason wins, then the run's message.
std::string reason(const CaseRecord& rec) {
  if (!rec.status_reason.empty()) return rec.status_reason;
  return first_line(rec.result.message);
}

// The record's dtype (a canonical name such as bf16) in torch's spelling (bfloat16).
std::string torch_dtype_of(const std::string& dtype) {
  auto t = parse_dtype(dtype);
  return t ? torch_dtype_name(*t) : dtype;
}

void write_case_properties(XmlOut& x, const CaseRecord& rec) {
  const Result& r = rec.result;
  constexpr int d = 4;
  x.start(3, "properties");
  x.end_start();
  x.property(d, "op", rec.op);
  x.property(d, "resolved_op", r.resolved_op);
  x.property(d, "dtype", rec.dtype);
  x.property(d, "outcome", outcome_name(rec.outcome));
  x.property(d, "stage", stage_name(r.stage));
  x.property(d, "dedupe_key", rec.key);
  if (!rec.deduplicated_from.empty()) x.property(d, "deduplicated_from", rec.deduplicated_from);
  if (r.result_from_cache) x.property(d, "result_from_cache", "true (read from --results-cache, not run by this run)");
  if (r.result_from_journal)
    x.property(d, "result_from_journal", "true (read from the resumed journal, --resume; not run by this run)");
  if (!r.traced_op.empty()) x.property(d, "traced_op", r.traced_op);
  if (!r.module_record.empty()) x.property(d, "module", r.module_record);
  if (r.figures.max_abs_diff) x.property(d, "max_abs_diff", shortest_number(*r.figures.max_abs_diff));
  if (r.figures.max_rel_diff) x.property(d, "max_rel_diff", shortest_number(*r.figures.max_rel_diff));
  if (r.figures.pcc) x.property(d, "pcc", shortest_number(*r.figures.pcc));
  x.property(d, "device_ms", shortest_number(r.device_ms));
  if (r.compile_ms > 0) x.property(d, "compile_ms", shortest_number(r.compile_ms));
  if (r.golden_ms > 0) x.property(d, "golden_ms", shortest_number(r.golden_ms));
  x.property(d, "reference_ms", shortest_number(r.reference_ms));
  x.property(d, "reference_upcast", r.reference_upcast ? "true" : "false");
  if (!r.reference_made.empty()) x.property(d, "reference_made", r.reference_made);
  if (!r.judge_notes.empty()) x.property(d, "judge_notes", join(r.judge_notes, "; "));
  x.property(d, "decomposed", r.decomposed ? "true" : "false");
  if (!r.values_compared) x.property(d, "values_compared", "false (uninitialised output: shape, dtype, strides, device)");
  if (!rec.marks.empty()) x.property(d, "marks", join(rec.marks, ","));
  if (!rec.status.empty()) x.property(d, "status", rec.status);
  if (!rec.status_reason.empty()) x.property(d, "status_reason", rec.status_reason);
  const auto loc = location(rec);
  if (!loc.empty()) x.property(d, "location", loc);
  for (const CaseLabel& l : rec.labels) x.property(d, l.field->record_label, l.value);  // upstream_test, issue, ...
  if (rec.outcome == Outcome::XPassed) x.property(d, "xfail_strict", rec.xfail_strictness == XfailStrictness::Strict ? "true" : "false");
  // torch-spyre's ingest takes op_name, dtype and model from these tags only.
  x.property(d, "tag", op_mark(rec.op));
  x.property(d, "tag", "dtype__" + torch_dtype_of(rec.dtype));
  x.property(d, "tag", "model__" + rec.model);
  x.end(3, "properties");
}

// The verdict element of a case that did not pass.
void write_verdict(XmlOut& x, const CaseRecord& rec, const RunInfo& info) {
  const Result& r = rec.result;
  constexpr int d = 3;
  switch (rec.outcome) {
    case Outcome::Passed: return;
    case Outcome::NotSupported:
      // Forgiven by --not-supported-ok: a skip for every reader (torch-spyre's ingest counts it as skipped: its type
      // holds no "xfail"); otherwise a failure, as the exit code says.
      if (!fails_run(rec, info)) {
        const std::string msg = "not supported: " + first_line(r.message);
        x.start(d, "skipped");
        x.attr("type", stage_name(r.stage));
        x.attr("message", msg);
        x.text_and_end("skipped", r.message);
        return;
      }
      [[fallthrough]];
    case Outcome::Failed:
    case Outcome::Error: {
      const char* name = rec.outcome == Outcome::Error ? "error" : "failure";
      // The message a CI page shows: the error's first line, the call, the worst element and the repro command.
      const auto headline = failure_headline(rec);
      x.start(d, name);
      x.attr("message", headline.empty() ? stage_name(r.stage) : headline);
      x.attr("type", stage_name(r.stage));
      x.text_and_end(name, r.message);
      return;
    }
    case Outcome::NoDeviceOp: {
      // A pass that ran no op on the device says nothing about it: a skip for every reader, never a device pass.
      const std::string msg = first_line(r.message);
      x.start(d, "skipped");
      x.attr("type", stage_name(r.stage));
      x.attr("message", msg);
      x.text_and_end("skipped", r.message);
      return;
    }
    case Outcome::Skipped: {
      const auto why = reason(rec);
      const auto loc = location(rec);
      x.start(d, "skipped");
      x.attr("type", "pytest.skip");
      x.attr("message", why);
      x.text_and_end("skipped", loc.empty() ? why : loc + ": " + why);
      return;
    }
    case Outcome::XFailed: {
      const auto why = reason(rec);
      x.start(d, "skipped");
      x.attr("type", "pytest.xfail");
      x.attr("message", why);
      // pytest writes no text here; the failure that was expected is still worth showing.
      x.text_and_end("skipped", r.message != why ? std::string_view(r.message) : std::string_view());
      return;
    }
    case Outcome::XPassed: {
      // Forgiven (a non-strict xfail, or --xpass-ok): a bare testcase, as pytest writes it (write_suite says how a
      // non-strict one is still counted for torch-spyre's ingest).
      if (!fails_run(rec, info)) return;
      // pytest reports an unexpected pass of a strict xfail as a failure with this exact message; the type holds
      // "xfail", which torch-spyre's ingest reads as xpass.
      const std::string msg = "[XPASS(strict)] " + reason(rec);
      x.start(d, "failure");
      x.attr("message", msg);
      x.attr("type", "xfail_strict");
      x.text_and_end("failure", msg);
      return;
    }
  }
}

}  // namespace

std::string shortest_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

namespace {

// `wall_ms` is the suite's time when known (the run's wall time); otherwise the sum of its cases' times.
void write_suite(XmlOut& x, TextOut& out, const RunInfo& info, const std::string& name,
                 const std::vector<const CaseRecord*>& recs, double wall_ms) {
  OutcomeCounts c;
  std::int64_t lenient_xpass = 0;
  double ms = 0;
  for (const auto* rec : recs) {
    c.add(rec->outcome, rec->xfail_strictness);
    if (rec->outcome == Outcome::XPassed && !fails_run(*rec, info)) ++lenient_xpass;
    ms += case_time_ms(*rec);
  }
  // A not_supported testcase is a <failure> unless --not-supported-ok made it a <skipped>: counted as written.
  const std::int64_t unsupported_failed = info.policy.not_supported_ok ? 0 : c.not_supported;
  const std::int64_t unsupported_skipped = c.not_supported - unsupported_failed;
  // `failures` is pytest's count (failed + strict XPASS). torch-spyre's ingest relabels as xpass the first
  // `failures - (failed + errors + xpass)` bare testcases of the suite; so when there are non-strict XPASSes the
  // count also holds them and the errors, and those testcases come first in the suite.
  const std::int64_t strict_xpass = c.xpassed - lenient_xpass;
  const std::int64_t failures =
      c.failed + unsupported_failed + strict_xpass + (lenient_xpass ? c.errors + lenient_xpass : 0);
  x.start(1, "testsuite");
  x.attr("name", name);
  x.attr("errors", std::to_string(c.errors));
  x.attr("failures", std::to_string(failures));
  x.attr("skipped", std::to_string(c.skipped + c.xfailed + unsupported_skipped + c.no_device_op));
  x.attr("tests", std::to_string(c.total()));
  x.attr("time", seconds(wall_ms > 0 ? wall_ms : ms));
  x.attr("timestamp", info.started_at);
  x.attr("hostname", info.host);
  x.end_start();

  x.start(2, "properties");
  x.end_start();
  x.property(3, "opcheck_version", info.opcheck_version);
  x.property(3, "torch_version", info.torch_version);
  x.property(3, "device", info.device);
  x.property(3, "device_name", info.device_name);
  x.property(3, "device_lib", info.device_lib);
  if (!info.device_choice.asked.empty())
    x.property(3, "device_choice",
               info.device_choice.asked + " -> " + info.device_choice.chosen + ": " + info.device_choice.why);
  x.property(3, "device_lib_sha256", info.device_lib_sha256);
  if (!info.torch_path.empty()) x.property(3, "torch_path", info.torch_path);
  if (!info.python_modules.empty()) x.property(3, "python_modules", join(info.python_modules, ", "));
  if (!info.compile_backend.empty()) x.property(3, "compile_backend", info.compile_backend);
  if (!info.shard.empty()) x.property(3, "shard", info.shard);
  x.property(3, "argv", join(info.argv, " "));
  for (const auto& [path, digest] : info.manifests) x.property(3, "manifest", path + " sha256:" + digest);
  if (info.interrupted) x.property(3, "interrupted", info.stop_reason.empty() ? "true" : info.stop_reason);
  if (lenient_xpass) x.property(3, "nonstrict_xpassed", std::to_string(lenient_xpass));
  if (info.not_run > 0)
    x.property(3, "not_run", std::to_string(info.not_run) + " (" + not_run_cause(info) + ")");
  for (const auto& w : info.warnings) x.property(3, "warning", w);
  x.end(2, "properties");

  auto write_case = [&](const CaseRecord& rec) {
    x.start(2, "testcase");
    x.attr("classname", rec.model);
    // The id after `model::`: the case name, or `file-stem/name` where two files of the model use one name, so
    // classname + name stays unique in the suite.
    const std::string prefix = rec.model + "::";
    x.attr("name", rec.id.compare(0, prefix.size(), prefix) == 0 ? rec.id.substr(prefix.size()) : rec.name);
    x.attr("time", seconds(case_time_ms(rec)));
    x.end_start();
    write_case_properties(x, rec);
    write_verdict(x, rec, info);
    if (!rec.result.captured_stderr.empty()) {
      x.start(3, "system-err");
      x.text_and_end("system-err", rec.result.captured_stderr);
    }
    x.end(2, "testcase");
    out.spill();
  };
  auto lenient = [&](const CaseRecord* r) { return r->outcome == Outcome::XPassed && !fails_run(*r, info); };
  for (const auto* rec : recs)
    if (lenient(rec)) write_case(*rec);
  for (const auto* rec : recs)
    if (!lenient(rec)) write_case(*rec);
  x.end(1, "testsuite");
}

void write_document(TextOut& out, const RunInfo& info, const std::string& name,
                    const std::vector<const CaseRecord*>& recs, double wall_ms) {
  XmlOut x(out.buf);
  out.buf += "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites name=\"opcheck\">\n";
  write_suite(x, out, info, name, recs, wall_ms);
  out.buf += "</testsuites>\n";
}

}  // namespace

std::string junit_file_name(const std::string& model) {
  std::string out = model.empty() ? std::string("opcheck") : model;
  bool lossy = false;
  for (char& ch : out)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) {
      ch = '_';
      lossy = true;
    }
  if (out[0] == '.') {
    out[0] = '_';
    lossy = true;
  }
  if (out.size() > 120) {
    out.resize(120);
    lossy = true;
  }
  // Distinct models never share a file: `*` and `~` are `_-<8 hex>.xml` each, never both `_.xml`.
  if (lossy) out += "-" + sha256_hex(model).substr(0, 8);
  return out + ".xml";
}

void write_junit(const RunReport& report, TextOut& out) {
  std::vector<const CaseRecord*> recs;
  recs.reserve(report.cases.size());
  for (const auto& rec : report.cases) recs.push_back(&rec);
  // The run's suite takes the run's wall time (pytest's suite time), not the sum over parallel workers.
  write_document(out, report.info, "opcheck", recs, report.info.duration_s * 1000.0);
}

void write_junit_dir(const RunReport& report, const std::string& dir) {
  std::vector<std::string> models;  // in order of first appearance
  std::map<std::string, std::vector<const CaseRecord*>> by_model;
  for (const auto& rec : report.cases) {
    auto& v = by_model[rec.model];
    if (v.empty()) models.push_back(rec.model);
    v.push_back(&rec);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ReportError("opcheck: error: cannot create --junit-dir " + dir + ": " + ec.message());
  std::map<std::string, std::string> file_of;  // file name -> model, to refuse two models in one file
  for (const auto& model : models) {
    const std::string file = junit_file_name(model);
    auto [it, added] = file_of.emplace(file, model);
    if (!added)
      throw ReportError("opcheck: error: models '" + it->second + "' and '" + model + "' both map to " + dir + "/" +
                        file + "\n  Fix: rename one of the models");
    write_file_atomically((std::filesystem::path(dir) / file).string(),
                          [&](TextOut& out) { write_document(out, report.info, model, by_model[model], 0); });
  }
}

void write_junit_xml(const RunReport& report, const std::string& path) {
  write_file_atomically(path, [&](TextOut& out) { write_junit(report, out); });
}

}  // namespace opcheck
