// What the console shows while a run goes (the progress line, -v's case lines) and the report files it writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "report/console.h"
#include "report/outputs.h"
#include "report/progress.h"

namespace opcheck {
namespace {

using namespace std::chrono_literals;

CaseRecord record(const std::string& id, Outcome o, Stage stage, const std::string& message = "") {
  CaseRecord r;
  r.id = id;
  r.model = id.substr(0, id.find("::"));
  r.name = id.substr(id.find("::") + 2);
  r.outcome = o;
  r.result.stage = stage;
  r.result.outcome = o;
  r.result.message = message;
  return r;
}

TEST(ProgressLine, ALogGetsALineEveryFiveSecondsAndTheLast) {
  const auto t0 = ProgressLine::Clock::time_point{} + 1h;
  ProgressLine p(4, /*terminal=*/false, t0);
  EXPECT_EQ(p.on_record(record("m::a", Outcome::Passed, Stage::PASSED), t0 + 1s), "");
  EXPECT_EQ(p.on_record(record("m::b", Outcome::Failed, Stage::INCORRECT_RESULT), t0 + 6s),
            "opcheck: 2/4 done: 1 failed, 1 passed; ETA 6.00s, last m::b\n");
  EXPECT_EQ(p.on_record(record("m::c", Outcome::NotSupported, Stage::NOT_SUPPORTED), t0 + 7s), "");
  // The last occurrence always shows, however soon after the one before.
  EXPECT_EQ(p.on_record(record("m::d", Outcome::Passed, Stage::PASSED), t0 + 7s + 1ms),
            "opcheck: 4/4 done: 1 failed, 1 not supported, 2 passed; ETA 0.00s, last m::d\n");
  EXPECT_EQ(p.clear(), "");  // nothing was drawn in place
}

// One occurrence of each outcome, the last one passed.
std::vector<CaseRecord> one_of_each_outcome() {
  std::vector<CaseRecord> out;
  for (auto [id, o, stage] : {std::tuple{"m::a", Outcome::Failed, Stage::INCORRECT_RESULT},
                              {"m::b", Outcome::NotSupported, Stage::NOT_SUPPORTED},
                              {"m::c", Outcome::Error, Stage::FAILED_INPUT},
                              {"m::d", Outcome::Skipped, Stage::SKIPPED},
                              {"m::e", Outcome::XFailed, Stage::INCORRECT_RESULT},
                              {"m::f", Outcome::XPassed, Stage::PASSED},
                              {"m::h", Outcome::NoDeviceOp, Stage::NO_DEVICE_OP},
                              {"m::g", Outcome::Passed, Stage::PASSED}})
    out.push_back(record(id, o, stage));
  return out;
}

TEST(ProgressLine, CountsEachOutcomeInTheSummaryLinesWords) {
  const auto t0 = ProgressLine::Clock::time_point{} + 1h;
  RunReport run;
  run.cases = one_of_each_outcome();
  ProgressLine p(run.cases.size(), /*terminal=*/false, t0);
  std::string last;
  for (const CaseRecord& r : run.cases) last = p.on_record(r, t0 + 1s);
  const std::string summary = summary_line(run);
  EXPECT_EQ(last, "opcheck: 8/8 done: " + summary.substr(0, summary.find(" in ")) + "; ETA 0.00s, last m::g\n");
  EXPECT_EQ(last, "opcheck: 8/8 done: 1 failed, 1 not supported, 1 passed, 1 passed without the device, 1 skipped, "
                  "1 xfailed, 1 xpassed, 1 error; ETA 0.00s, last m::g\n");
}

TEST(ProgressLine, AStoppedRunDrawsItsLastStateAndATerminalNeverCutsTheCounts) {
  const auto t0 = ProgressLine::Clock::time_point{} + 1h;
  ProgressLine p(10, /*terminal=*/true, t0);
  for (const CaseRecord& r : one_of_each_outcome())
    EXPECT_EQ(p.on_record(r, t0 + 10ms), "");  // within 100 ms of the start: not drawn
  // The run stops (--maxfail) with 2 of 10 left: its last state is drawn once, counts whole though wider than 110.
  const std::string counts = "8/10 done: 1 failed, 1 not supported, 1 passed, 1 passed without the device, "
                             "1 skipped, 1 xfailed, 1 xpassed, 1 error";
  ASSERT_GT(counts.size() + std::string("; ETA").size(), 110u);
  const std::string line = p.finish(t0 + 20ms);
  EXPECT_EQ(line, "\r\033[K" + counts) << line;
  EXPECT_EQ(p.finish(t0 + 30ms), "");  // nothing new since
  EXPECT_EQ(p.clear(), "\r\033[K");
}

TEST(ProgressLine, ATerminalGetsOneLineRewrittenAndCutToItsWidth) {
  const auto t0 = ProgressLine::Clock::time_point{} + 1h;
  ProgressLine p(3, /*terminal=*/true, t0);
  EXPECT_EQ(p.clear(), "");
  EXPECT_EQ(p.on_record(record("m::a", Outcome::Passed, Stage::PASSED), t0 + 50ms), "");
  const std::string line = p.on_record(record("m::" + std::string(200, 'x'), Outcome::Passed, Stage::PASSED), t0 + 150ms);
  ASSERT_EQ(line.rfind("\r\033[K2/3 done: 2 passed; ETA ", 0), 0u) << line;
  EXPECT_EQ(line.size(), std::string("\r\033[K").size() + 110);
  EXPECT_EQ(line.substr(line.size() - 3), "...");
  EXPECT_EQ(p.clear(), "\r\033[K");
}

TEST(CaseLine, SaysOutcomeStageFirstMessageLineAndTheOccurrenceServed) {
  EXPECT_EQ(case_line(record("m::a", Outcome::Passed, Stage::PASSED), false), "PASSED m::a\n");
  CaseRecord f = record("m::b", Outcome::Failed, Stage::INCORRECT_RESULT, "output: 3 of 8 differ\nmore detail");
  f.deduplicated_from = "m::a";
  EXPECT_EQ(case_line(f, false), "FAILED m::b [INCORRECT_RESULT] output: 3 of 8 differ (same as m::a)\n");
  EXPECT_EQ(case_line(f, true).rfind("\033[31mFAILED\033[0m m::b", 0), 0u);
  // Control characters in an id are shown, never sent to the terminal.
  EXPECT_EQ(case_line(record("m::\x1b[2J", Outcome::Passed, Stage::PASSED), false).find('\x1b'), std::string::npos);
}

TEST(RunBanner, NamesTheDeviceAndTheWorkAndTheShard) {
  ExecInfo info;
  info.device = "privateuseone:0";
  info.device_name = "loopback";
  EXPECT_EQ(run_banner(info, 180, 149, 0, 1, 149),
            "opcheck: device loopback (privateuseone:0); 180 cases, 149 unique\n");
  info.device_lib = "/opt/lib/libdev.so";
  EXPECT_EQ(run_banner(info, 1, 1, 1, 3, 149),
            "opcheck: device loopback (privateuseone:0, /opt/lib/libdev.so); 1 case, 1 unique, shard 1/3 of 149\n");
  info.log_line = "device spyre (torch_spyre 0.1, Python 3.11)";
  EXPECT_EQ(run_banner(info, 2, 2, 0, 1, 2),
            "opcheck: device spyre (torch_spyre 0.1, Python 3.11); 2 cases, 2 unique\n");
}

TEST(ReportFiles, AReportThatCannotBeWrittenIsNamedAndTheOthersAreStillWritten) {
  const auto dir = std::filesystem::temp_directory_path() / ("opcheck-outputs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RunReport report;
  report.cases.push_back(record("m::a", Outcome::Passed, Stage::PASSED));
  ReportFiles files;
  files.paths["--junit-xml"] = (dir / "junit.xml").string();
  files.paths["--metrics-json"] = (dir / "no-such-folder" / "metrics.json").string();
  std::ofstream(dir / "no-such-folder");  // a file where a folder would have to be
  const std::vector<std::string> errors = write_report_files(report, files);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("metrics.json"), std::string::npos) << errors[0];
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "junit.xml"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace opcheck
