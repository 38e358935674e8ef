#include "report/report_format.h"

#include <cstring>
#include <exception>
#include <future>
#include <set>

namespace opcheck {
namespace {

class WritesAtEnd : public ReportListener {
 public:
  WritesAtEnd(std::string path, void (*write)(const RunReport&, const std::string&))
      : path_(std::move(path)), write_(write) {}
  void run_finished(const RunReport& report) override { write_(report, path_); }

 private:
  std::string path_;
  void (*write_)(const RunReport&, const std::string&);
};

}  // namespace

void ReportEvents::add(std::unique_ptr<ReportListener> listener) { listeners_.push_back(std::move(listener)); }

void ReportEvents::run_started(const RunInfo& info) {
  for (auto& l : listeners_) l->run_started(info);
}

void ReportEvents::case_finished(const CaseRecord& record) {
  for (auto& l : listeners_) l->case_finished(record);
}

std::vector<std::string> ReportEvents::run_finished(const RunReport& report) {
  std::vector<std::future<void>> writing;
  for (auto& l : listeners_)
    writing.push_back(
        std::async(std::launch::async, [&report, listener = l.get()] { listener->run_finished(report); }));
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

const char* report_command_name(ReportCommand command) {
  switch (command) {
    case kRunCommand: return "run";
    case kSweepCommand: return "sweep";
    case kMergeCommand: return "merge";
    case kReportCommand: return "report";
  }
  return "?";
}

std::vector<std::string> report_format_problems(const std::vector<const ReportFormat*>& formats) {
  std::vector<std::string> out;
  std::set<std::string> flags;
  constexpr const char* kWhere = "src/report/report_formats.cpp: report format ";
  for (std::size_t i = 0; i < formats.size(); ++i) {
    const ReportFormat* f = formats[i];
    if (f == nullptr) {
      out.push_back(std::string(kWhere) + "#" + std::to_string(i + 1) + " is null\n  Fix: list the format's "
                    "ReportFormat, defined in its own file");
      continue;
    }
    const std::string flag = f->flag ? f->flag : "";
    const std::string named = std::string(kWhere) + (flag.empty() ? "#" + std::to_string(i + 1) : flag);
    if (flag.size() < 3 || flag.compare(0, 2, "--") != 0 || flag.find_first_of(" ,=") != std::string::npos)
      out.push_back(named + ": its flag '" + flag + "' is not --name" +
                    "\n  Fix: give it a long flag, such as --summary-md");
    else if (!flags.insert(flag).second)
      out.push_back(named + " is registered twice\n  Fix: register each format once, under a flag of its own");
    if (!f->value_name || !*f->value_name || !f->help || !*f->help)
      out.push_back(named + " has no value name or no help\n  Fix: say what the flag takes (PATH, DIR) and writes");
    if ((f->commands & (kRunCommand | kSweepCommand | kMergeCommand | kReportCommand)) == 0)
      out.push_back(named + " is taken by no command\n  Fix: set the ReportCommand bits of the commands that write it");
    if (f->folder && f->files == nullptr)
      out.push_back(named + " is a folder format without its files\n  Fix: say which file it writes per model");
    if (f->listener == nullptr)
      out.push_back(named + " has no writer\n  Fix: give it the listener that writes it (writes_at_end for a file "
                    "written from the whole report)");
  }
  return out;
}

std::unique_ptr<ReportListener> writes_at_end(const std::string& path,
                                              void (*write)(const RunReport& report, const std::string& path)) {
  return std::make_unique<WritesAtEnd>(path, write);
}

}  // namespace opcheck
