#include "report/outputs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "common/text_escape.h"

#include "report/atomic_file.h"

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

std::string check_file(const std::string& flag, const std::string& path) {
  if (path.empty()) return {};
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec);
  if (std::string special = not_a_report_target(p.string()); !special.empty())
    return flag + " " + path + ": cannot write the report there: " + special +
           "\n  Fix: name a regular file (a new one, or a report to replace)";
  const std::string why = cannot_write_in(p.parent_path());
  if (why.empty()) return {};
  return flag + " " + path + ": cannot write the report there: " + why +
         "\n  Fix: pass a path in an existing, writable folder";
}

std::string check_folder(const std::string& flag, const std::string& path) {
  if (path.empty()) return {};
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec);
  std::string why = cannot_write_in(p);
  if (why.empty()) return {};
  return flag + " " + path + ": cannot write the reports there: " + why +
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

const std::string& ReportFiles::path(const std::string& flag) const {
  static const std::string none;
  const auto it = paths.find(flag);
  return it == paths.end() ? none : it->second;
}

bool ReportFiles::any() const {
  for (const auto& [flag, path] : paths)
    if (!path.empty()) return true;
  return false;
}

std::vector<NamedPath> report_outputs(const ReportFiles& files, const std::vector<std::string>& models) {
  std::vector<NamedPath> out;
  for (const ReportFormat* f : report_formats())
    if (!f->folder && !files.path(f->flag).empty()) out.push_back({f->flag, files.path(f->flag)});
  for (const ReportFormat* f : report_formats())
    if (f->folder && !files.path(f->flag).empty())
      for (auto& p : f->files(files.path(f->flag), models)) out.push_back(std::move(p));
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
  for (const ReportFormat* f : report_formats()) {
    const std::string& path = files.path(f->flag);
    std::string e = f->folder ? check_folder(f->flag, path) : check_file(f->flag, path);
    if (!e.empty()) out.push_back(std::move(e));
  }
  return out;
}

ReportEvents report_listeners(const ReportFiles& files, const ReportContext& context) {
  ReportEvents events;
  for (const ReportFormat* f : report_formats())
    if (!files.path(f->flag).empty()) events.add(f->listener(files.path(f->flag), context));
  return events;
}

std::vector<std::string> write_report_files(const RunReport& report, const ReportFiles& files,
                                            const ReportContext& context) {
  return report_listeners(files, context).run_finished(report);
}

}  // namespace opcheck
