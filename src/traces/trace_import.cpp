#include "traces/trace_import.h"

#include "common/regular_file.h"
#include "common/text_escape.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace opcheck::traces {
namespace {

bool read_file(const std::string& path, std::string& text) {
  std::string why;
  return read_regular_file(path, text, why);
}

/// The trace files a path stands for, or an error when there are none.
std::vector<std::string> expand(const std::string& path, DiagnosticList& errors) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    errors.error({path, 0, 0}, "no such file or folder", {}, "give op-trace files (*.txt) or folders holding them");
    return {};
  }
  if (!fs::is_directory(status)) return {path};
  std::vector<std::string> found;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".txt") found.push_back(it->path().string());
  }
  if (ec) errors.error({path, 0, 0}, "cannot list the folder: " + ec.message());
  std::sort(found.begin(), found.end());
  if (found.empty() && !ec)
    errors.error({path, 0, 0}, "folder holds no op-trace files (*.txt)", {}, "name the trace files themselves");
  return found;
}

}  // namespace

TraceImport import_traces(const std::vector<std::string>& paths) {
  TraceImport out;
  std::set<std::string> models;
  std::set<std::string> seen_files;
  for (const auto& p : paths) {
    for (const auto& file : expand(p, out.errors)) {
      std::error_code ec;
      const std::string key = fs::weakly_canonical(file, ec).string();
      if (!seen_files.insert(ec ? file : key).second) continue;  // named twice (a file and its folder)
      std::string text;
      if (!read_file(file, text)) {
        out.errors.error({file, 0, 0}, "cannot read the file");
        continue;
      }
      // The model is named after the file; a control or format character in the file name (which manifests refuse in
      // a model name) is written as its escape with `_` for the backslash: t<ESC>x.txt is model t_x1bx.
      std::string stem = printable_text(fs::path(file).stem().string());
      std::replace(stem.begin(), stem.end(), '\\', '_');
      std::string model = stem.empty() ? "trace" : stem;
      for (int n = 2; models.count(model); ++n) model = stem + "_" + std::to_string(n);
      models.insert(model);
      out.traces.push_back(convert_trace(parse_trace_text(file, text), model));
    }
  }
  return out;
}

std::vector<std::string> write_trace_manifests(const TraceImport& imported, const std::string& dir,
                                               DiagnosticList& errors) {
  std::vector<std::string> written;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    errors.error({dir, 0, 0}, "cannot create the output folder: " + ec.message(), {},
                 "name a folder with -o: one that exists, or a new path whose parents are folders; nothing was written");
    return written;
  }
  for (const auto& t : imported.traces) {
    const std::string path = (fs::path(dir) / (t.model + ".yaml")).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << t.yaml;
    out.close();
    if (!out) {
      errors.error({path, 0, 0}, "cannot write the manifest");
      continue;
    }
    written.push_back(path);
  }
  return written;
}

}  // namespace opcheck::traces
