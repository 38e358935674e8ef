// The HTML dashboard of a run: the page in order (its parts in html_parts.h), its script allowed by its hash, and
// the history folder a trend is read from.

#include "report/html.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "common/base64.h"
#include "common/sha256.h"
#include "report/atomic_file.h"
#include "report/html_assets.h"
#include "report/html_parts.h"
#include "report/metrics.h"
#include "report/report_error.h"
#include "report/stats.h"

namespace opcheck {
// The page's parts: its building blocks and sections.
using namespace html;

namespace {

// The inline script (html_assets/report.js), allowed by its hash in the page's Content-Security-Policy.

// The script's CSP source: 'sha256-' + base64 of the digest.
std::string script_hash_source() {
  Sha256 h;
  h.update(html_report_script());
  return "'sha256-" + base64_encode(h.digest()) + "'";
}

}  // namespace

std::string html_report(const RunReport& run, const std::vector<RunReport>& history) {
  const RunStats st = compute_stats(run);
  const Trend trend = build_trend(run, history);

  std::string out;
  out.reserve(64 * 1024 + run.cases.size() * 512);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may load from anywhere, and only the script below (by its hash) may run.
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "img-src data:; script-src " +
         script_hash_source() + "\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<link rel=\"icon\" href=\"data:,\">\n";
  out += "<meta name=\"generator\" content=\"opcheck " + esc(run.info.opcheck_version) + "\">\n";
  std::string title = "opcheck report";
  if (!run.info.device_name.empty()) title += " — " + run.info.device_name;
  if (!run.info.started_at.empty()) title += " — " + short_time(run.info.started_at, 0);
  out += "<title>" + esc(title) + "</title>\n<style>" + std::string(html_report_style()) + "</style>\n</head>\n<body>\n";
  header(out, run);
  nav(out, trend.points.size() >= 2);
  out += "<main>\n";
  overview(out, run, st, trend);
  models_section(out, st);
  groups_section(out, run);
  failures_section(out, run, st);
  ops_section(out, st);
  out += "<div class=\"cols\">";
  coverage_section(out, st);
  dedupe_section(out, st);
  out += "</div>\n";
  slowest_section(out, run, st);
  trend_section(out, trend);
  out += "</main>\n<footer>Written by opcheck " + esc(run.info.opcheck_version) +
         ". Pass rate = " + kPassRateRule +
         "; max abs/rel diff: the greatest difference over all compared elements; the figures are those of the "
         "metrics file.</footer>\n";
  out += "<script>" + std::string(html_report_script()) + "</script>\n</body>\n</html>\n";
  return out;
}

void write_html_report(const RunReport& run, const std::vector<RunReport>& history, const std::string& path) {
  write_file_atomically(path, html_report(run, history));
}

namespace {

// Why a `*.json` entry of a history folder is not read: "" when it is a regular file of the folder (or a link to
// one inside it).
std::string not_a_history_file(const std::filesystem::path& entry, const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(entry, ec);
  if (fs::is_symlink(link)) {
    const fs::path target = fs::weakly_canonical(entry, ec);
    if (ec || !fs::exists(target, ec)) return "a symbolic link whose target does not exist";
    if (target.parent_path() != fs::weakly_canonical(folder, ec))
      return "a symbolic link out of the folder (not followed)";
  }
  const fs::file_status st = fs::status(entry, ec);
  if (ec) return "cannot be read: " + ec.message();
  switch (st.type()) {
    case fs::file_type::regular: return {};
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a FIFO (named pipe), not a regular file";
    default: return "not a regular file";
  }
}

}  // namespace

std::vector<RunReport> read_metrics_history(const std::string& dir, const std::string& exclude,
                                            const RunInfo* current, std::vector<std::string>* skipped) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ReportError(dir + ": error: not a folder\n  Fix: pass --history the folder that holds earlier runs' metrics "
                            "JSON files");
  std::vector<fs::path> files;
  fs::directory_iterator it(dir, ec), end;
  if (ec) throw ReportError(dir + ": error: cannot read the folder: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw ReportError(dir + ": error: cannot read the folder: " + ec.message());
    if (it->path().extension() == ".json") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  const auto skip = [&](const fs::path& f, const std::string& why) {
    if (skipped) skipped->push_back(f.string() + ": " + why);
  };
  std::vector<std::pair<std::string, RunReport>> runs;  // started_at, run (file-name order so far)
  for (const auto& f : files) {
    if (const std::string why = not_a_history_file(f, dir); !why.empty()) {
      skip(f, why);
      continue;
    }
    std::error_code eq;
    if (!exclude.empty() && fs::equivalent(f, exclude, eq)) continue;
    RunReport r;
    try {
      r = read_metrics(f.string());
    } catch (const ReportError& e) {
      // "path: error: what\n  Fix: ..." -> what: the readers' messages name the place, never the bytes.
      std::string what = e.what();
      if (const auto at = what.find(": error: "); at != std::string::npos) what.erase(0, at + 9);
      skip(f, "not a readable metrics file: " + what.substr(0, what.find('\n')));
      continue;
    }
    if (current && r.info.started_at == current->started_at && r.info.host == current->host &&
        r.info.duration_s == current->duration_s && r.info.argv == current->argv && r.info.shard == current->shard)
      continue;  // a copy of the current run
    std::string started = r.info.started_at;
    runs.emplace_back(std::move(started), std::move(r));
  }
  std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<RunReport> out;
  out.reserve(runs.size());
  for (auto& [started, r] : runs) out.push_back(std::move(r));
  return out;
}

}  // namespace opcheck
