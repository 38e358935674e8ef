// The table of report formats and the run's event list (report/report_format.h): every registered format is sound
// and writes what its reader takes, a format without a writer is refused, listeners hear every event, a merge leaves
// every format's flag out of the one-machine command, and the Markdown summary counts as the metrics file does.
#include <gtest/gtest.h>
#include <pugixml.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/console.h"
#include "report/merge.h"
#include "report/metrics.h"
#include "report/outputs.h"
#include "report/progress.h"
#include "report/report_error.h"
#include "report/report_format.h"
#include "report/stats.h"
#include "sample_report.h"

namespace opcheck {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("opcheck-formats-" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const ReportFormat* format_named(const std::string& flag) {
  for (const ReportFormat* f : report_formats())
    if (flag == f->flag) return f;
  return nullptr;
}

// Each registered format's file (or folder's files), written from the sample run alone, and read by its reader.
TEST(ReportFormats, EveryRegisteredFormatIsSoundAndWritesWhatItsReaderTakes) {
  EXPECT_TRUE(report_format_problems(report_formats()).empty());
  const RunReport sample = testing::sample_report();
  const OutcomeCounts totals = compute_stats(sample).totals;
  ASSERT_GE(report_formats().size(), 5u);
  for (const ReportFormat* f : report_formats()) {
    SCOPED_TRACE(f->flag);
    TempDir dir;
    const fs::path out = dir.path / (f->folder ? "folder" : "report");
    ReportFiles files;
    files.paths[f->flag] = out.string();
    const std::vector<std::string> errors = write_report_files(sample, files);
    ASSERT_TRUE(errors.empty()) << errors.front();
    std::vector<NamedPath> written = report_outputs(files, {"llama", "granite"});
    ASSERT_FALSE(written.empty());
    for (const NamedPath& p : written) ASSERT_TRUE(fs::is_regular_file(p.path)) << p.what << " " << p.path;
    const std::string text = read_file(written.front().path);
    const std::string flag = f->flag;
    if (flag == "--junit-xml" || flag == "--junit-dir") {
      pugi::xml_document doc;
      ASSERT_TRUE(doc.load_string(text.c_str())) << text.substr(0, 200);
      std::int64_t testcases = 0;
      for (const NamedPath& p : written) {
        pugi::xml_document d;
        ASSERT_TRUE(d.load_file(p.path.c_str()));
        for (auto tc : d.select_nodes("//testcase")) testcases += tc.node() ? 1 : 0;
      }
      EXPECT_EQ(testcases, totals.total());
    } else if (flag == "--metrics-json") {
      EXPECT_EQ(compute_stats(read_metrics(written.front().path)).totals, totals);
    } else if (flag == "--html") {
      EXPECT_EQ(text.rfind("<!DOCTYPE html>", 0), 0u) << text.substr(0, 80);
    } else if (flag == "--summary-md") {
      std::string unescaped = text;  // the heading's punctuation is backslash-escaped
      unescaped.erase(std::remove(unescaped.begin(), unescaped.end(), '\\'), unescaped.end());
      EXPECT_NE(unescaped.find("## opcheck: " + summary_line(sample) + "\n"), std::string::npos) << text;
      EXPECT_NE(text.find("| total | " + std::to_string(totals.total()) + " |"), std::string::npos) << text;
    } else {
      ADD_FAILURE() << f->flag << " has no reader in this test: read its file back here";
    }
  }
}

std::unique_ptr<ReportListener> a_writer(const std::string&, const ReportContext&) {
  return std::make_unique<ReportListener>();
}

TEST(ReportFormats, AFormatWithoutAWriterIsRefusedNamingItAndTheFix) {
  const ReportFormat without{"--no-writer", "FILE", "Write nothing", nullptr, kRunCommand, false, nullptr, nullptr};
  const ReportFormat sound{"--sound", "FILE", "Write it", nullptr, kRunCommand, false, nullptr, a_writer};
  const std::vector<std::string> problems = report_format_problems({&sound, &without});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("report format --no-writer has no writer"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("src/report/report_formats.cpp"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("\n  Fix: "), std::string::npos) << problems[0];
  EXPECT_TRUE(report_format_problems({&sound}).empty());
}

TEST(ReportFormats, AFlagTwiceABadFlagNoCommandAndAFolderWithoutFilesAreRefused) {
  const ReportFormat a{"--same", "FILE", "Write it", nullptr, kRunCommand, false, nullptr, a_writer};
  const ReportFormat bad{"same", "FILE", "Write it", nullptr, kRunCommand, false, nullptr, a_writer};
  const ReportFormat idle{"--idle", "FILE", "Write it", nullptr, 0, false, nullptr, a_writer};
  const ReportFormat folder{"--dir", "DIR", "Write them", nullptr, kRunCommand, true, nullptr, a_writer};
  const std::vector<std::string> problems = report_format_problems({&a, &a, &bad, &idle, &folder});
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_NE(problems[0].find("--same is registered twice"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("its flag 'same' is not --name"), std::string::npos) << problems[1];
  EXPECT_NE(problems[2].find("--idle is taken by no command"), std::string::npos) << problems[2];
  EXPECT_NE(problems[3].find("--dir is a folder format without its files"), std::string::npos) << problems[3];
}

// Hears the events in order, as "started", "case ID", "finished N".
class Recorder : public ReportListener {
 public:
  explicit Recorder(std::vector<std::string>& heard, bool throws = false) : heard_(heard), throws_(throws) {}
  void run_started(const RunInfo& info) override { heard_.push_back("started " + info.host); }
  void case_finished(const CaseRecord& r) override { heard_.push_back("case " + r.id); }
  void run_finished(const RunReport& report) override {
    if (throws_) throw ReportError("cannot write " + report.info.host);
  }

 private:
  std::vector<std::string>& heard_;
  bool throws_;
};

TEST(ReportEvents, EveryListenerHearsEveryEventAndOneThatCannotWriteIsNamedWhileTheOthersFinish) {
  std::vector<std::string> first, second;
  ReportEvents events;
  events.add(std::make_unique<Recorder>(first, /*throws=*/true));
  events.add(std::make_unique<Recorder>(second));
  RunReport report;
  report.info.host = "h";
  events.run_started(report.info);
  CaseRecord a, b;
  a.id = "m::a";
  b.id = "m::b";
  events.case_finished(a);
  events.case_finished(b);
  const std::vector<std::string> errors = events.run_finished(report);
  const std::vector<std::string> expected = {"started h", "case m::a", "case m::b"};
  EXPECT_EQ(first, expected);
  EXPECT_EQ(second, expected);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "cannot write h");
}

TEST(ConsoleCases, VerboseWritesALinePerCaseAndQuietWritesNothing) {
  CaseRecord failed;
  failed.id = "m::a";
  failed.outcome = Outcome::Failed;
  failed.result.stage = Stage::INCORRECT_RESULT;
  failed.result.message = "output: 1 of 4 differ";
  std::ostringstream out, err;
  ConsoleCases verbose(out, err, 1, {/*verbose=*/true, false, false, false});
  verbose.case_finished(failed);
  EXPECT_EQ(out.str(), case_line(failed, false));
  EXPECT_EQ(err.str(), "");
  std::ostringstream quiet_out, quiet_err;
  ConsoleCases quiet(quiet_out, quiet_err, 1, {false, /*quiet=*/true, false, false});
  quiet.case_finished(failed);
  EXPECT_EQ(quiet_out.str() + quiet_err.str() + quiet.end_of_cases(), "");
  // Neither: the progress line on stderr (a log's line for the last case).
  std::ostringstream log_out, log_err;
  ConsoleCases log(log_out, log_err, 1, {});
  log.case_finished(failed);
  EXPECT_EQ(log_out.str(), "");
  EXPECT_NE(log_err.str().find("1/1 done: 1 failed"), std::string::npos) << log_err.str();
}

TEST(MergeReports, TheOneMachineCommandLeavesOutEveryReportFormatsFlag) {
  RunReport shard = testing::sample_report();
  shard.info.argv = {"run", "--model", "llama", "--shard", "0/1"};
  for (const ReportFormat* f : report_formats()) {
    shard.info.argv.push_back(f->flag);
    shard.info.argv.push_back("shard-0-" + std::string(f->flag + 2));
  }
  shard.info.argv.push_back("--summary-md=inline.md");
  shard.info.shard = "0/1";
  const RunReport merged = merge_reports({shard});
  const std::vector<std::string> expected = {"run", "--model", "llama"};
  EXPECT_EQ(merged.info.argv, expected);
}

// A hand-built run whose failure message holds Markdown and an id with a table's bar: the summary shows them as text.
TEST(SummaryMarkdown, CountsAsTheMetricsFileAndEscapesWhatTheRunCarries) {
  ASSERT_NE(format_named("--summary-md"), nullptr);
  RunReport run = testing::sample_report();
  for (CaseRecord& rec : run.cases)
    if (rec.outcome == Outcome::Failed) rec.result.message = "a | b **bold** [x](http://e) <script> `c` $m$ & d";
  TempDir dir;
  ReportFiles files;
  files.paths["--summary-md"] = (dir.path / "s.md").string();
  ASSERT_TRUE(write_report_files(run, files).empty());
  const std::string md = read_file(dir.path / "s.md");
  const OutcomeCounts c = compute_stats(run).totals;
  for (const auto& [name, n] : std::vector<std::pair<std::string, std::int64_t>>{
           {"passed", c.passed}, {"failed", c.failed}, {"errors", c.errors}, {"total", c.total()}})
    EXPECT_NE(md.find("| " + name + " | " + std::to_string(n) + " |"), std::string::npos) << name << "\n" << md;
  EXPECT_NE(md.find("a \\| b \\*\\*bold\\*\\* \\[x\\]\\(http\\:\\/\\/e\\) \\<script\\> \\`c\\` \\$m\\$ \\& d"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("<script>"), std::string::npos) << md;
}

}  // namespace
}  // namespace opcheck
