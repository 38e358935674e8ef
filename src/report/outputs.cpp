#include "report/outputs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <set>

#include "common/text_escape.h"

#include "report/atomic_file.h"
#include "report/html.h"
#include "report/junit.h"
#include "report/metrics.h"

namespace opcheck {
namespace {

namespace fs = std::filesystem;

// "" when `folder` takes a new file, else why not. A folder that does not exist yet is made now, before the run's
// first case, so the report written at its end has it.
std::string cannot_write_in(const fs::path& folder) {
  std::error_code ec;
  if (!fs::exists(folder, ec) && !fs::create_directories(folder, ec) && ec)
    return "cannot create " + folder.string() + ": " + ec.message();
  if (!fs::is_directory(folder, ec)) return folder.string() + " is not a folder";
  std::string probe = (folder / ".opcheck-write-check.XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) return "cannot create a file in " + folder.string() + ": " + std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return {};
}

std::string check_file(const char* flag, const std::string& path) {
  if (path.empty()) return {};
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec);
  if (std::string special = not_a_report_target(p.string()); !special.empty())
    return std::string(flag) + " " + path + ": cannot write the report there: " + special +
           "\n  Fix: name a regular file (a new one, or a report to replace)";
  const std::string why = cannot_write_in(p.parent_path());
  if (why.empty()) return {};
  return std::string(flag) + " " + path + ": cannot write the report there: " + why +
         "\n  Fix: pass a path in an existing, writable folder";
}

std::string check_folder(const char* flag, const std::string& path) {
  if (path.empty()) return {};
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec);
  std::string why = cannot_write_in(p);
  if (why.empty()) return {};
  return std::string(flag) + " " + path + ": cannot write the reports there: " + why +
         "\n  Fix: pass a writable folder, or one whose parent folder is writable";
}

// The directory entry `path` names, however spelt: its folder resolved (links, `.`, `..`), then its own name. Writing
// a report renames a file into that entry.
std::string entry_of(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec);
  const fs::path name = p.filename();
  if (name.empty() || name == "." || name == "..") {
    const fs::path whole = fs::weakly_canonical(p, ec);
    return (ec ? p.lexically_normal() : whole).string();
  }
  const fs::path folder = fs::weakly_canonical(p.parent_path(), ec);
  return ((ec ? p.parent_path().lexically_normal() : folder) / name).string();
}

// The file an existing `path` leads to (through every link), or "" when it does not exist.
std::string file_of(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::canonical(path, ec);
  return ec ? std::string() : p.string();
}

std::string shown(const NamedPath& p) { return p.what + " " + printable_text(p.path); }

}  // namespace

std::vector<NamedPath> report_outputs(const ReportFiles& files, const std::vector<std::string>& junit_models) {
  std::vector<NamedPath> out;
  if (!files.junit_xml.empty()) out.push_back({"--junit-xml", files.junit_xml});
  if (!files.metrics_json.empty()) out.push_back({"--metrics-json", files.metrics_json});
  if (!files.html.empty()) out.push_back({"--html", files.html});
  if (!files.junit_dir.empty()) {
    std::set<std::string> seen;
    for (const auto& model : junit_models)
      if (seen.insert(model).second)
        out.push_back({"--junit-dir's file for model '" + printable_text(model) + "'",
                       (fs::path(files.junit_dir) / junit_file_name(model)).string()});
  }
  return out;
}

std::vector<std::string> path_clashes(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs,
                                      const std::vector<NamedPath>& replaced_folders) {
  std::vector<std::string> out;
  std::map<std::string, const NamedPath*> read;  // an input's entry and the file it leads to -> the input
  for (const auto& in : inputs) {
    read.emplace(entry_of(in.path), &in);
    if (std::string f = file_of(in.path); !f.empty()) read.emplace(std::move(f), &in);
  }
  std::map<std::string, const NamedPath*> written;
  std::vector<std::pair<std::string, const NamedPath*>> every;  // each input's and output's entry, for the folders
  for (const auto& [entry, in] : read) every.emplace_back(entry, in);
  for (const auto& o : outputs) {
    const std::string entry = entry_of(o.path);
    // The file it leads to as well: the journal and the lock are written through a link, not renamed over it.
    auto it = read.find(entry);
    if (it == read.end()) it = read.find(file_of(o.path));
    if (it != read.end()) {
      out.push_back(shown(o) + " would replace " + shown(*it->second) + ", which opcheck reads" +
                    "\n  Fix: write it to another path");
      continue;
    }
    auto [w, added] = written.emplace(entry, &o);
    if (!added) {
      out.push_back(shown(o) + " and " + shown(*w->second) + " are one file: one would replace the other" +
                    "\n  Fix: give each its own path");
      continue;
    }
    every.emplace_back(entry, &o);
  }
  std::map<std::string, const NamedPath*> replaced;
  for (const auto& f : replaced_folders) replaced.emplace(entry_of(f.path), &f);
  if (replaced.empty()) return out;
  std::set<const NamedPath*> inside;  // said once, whichever of its names is inside
  for (const auto& [entry, what] : every) {
    for (fs::path p = entry; p.has_relative_path(); p = p.parent_path()) {
      const auto it = replaced.find(p.string());
      if (it == replaced.end()) continue;
      if (inside.insert(what).second)
        out.push_back(shown(*what) + " is inside " + shown(*it->second) +
                      ", which is removed before it is written\n  Fix: write the bundles to a folder apart from the "
                      "run's inputs and reports");
      break;
    }
  }
  return out;
}

std::vector<std::string> check_report_paths(const ReportFiles& files) {
  std::vector<std::string> out;
  for (std::string e : {check_file("--junit-xml", files.junit_xml), check_folder("--junit-dir", files.junit_dir),
                        check_file("--metrics-json", files.metrics_json), check_file("--html", files.html)})
    if (!e.empty()) out.push_back(std::move(e));
  return out;
}

std::vector<std::string> write_report_files(const RunReport& report, const ReportFiles& files) {
  std::vector<std::function<void()>> writers;
  if (!files.junit_xml.empty()) writers.push_back([&] { write_junit_xml(report, files.junit_xml); });
  if (!files.junit_dir.empty()) writers.push_back([&] { write_junit_dir(report, files.junit_dir); });
  if (!files.metrics_json.empty()) writers.push_back([&] { write_metrics_json(report, files.metrics_json); });
  if (!files.html.empty()) writers.push_back([&] { write_html_report(report, {}, files.html); });
  std::vector<std::future<void>> writing;
  for (auto& w : writers) writing.push_back(std::async(std::launch::async, w));
  std::vector<std::string> errors;
  for (auto& w : writing) {
    try {
      w.get();
    } catch (const std::exception& e) {
      errors.push_back(e.what());
    }
  }
  return errors;
}

}  // namespace opcheck
