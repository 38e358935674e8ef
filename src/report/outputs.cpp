#include "report/outputs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>

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

}  // namespace

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
