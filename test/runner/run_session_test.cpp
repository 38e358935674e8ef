// The run session around the executor: what a resumed run, --last-failed and the results cache serve or run again,
// what the journal ends up holding, why a run is refused its artifact folder, and the exit code a run ends with.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "plan/plan.h"
#include "report/journal.h"
#include "settings/run_identity.h"
#include "runner/run_session.h"
#include "runner/plan_execution.h"

namespace opcheck {
namespace {

// An executor whose verdicts are written in the test: it counts the cases it is asked to run.
class ScriptedExecutor : public Executor {
 public:
  explicit ScriptedExecutor(std::map<std::string, Stage> verdicts = {}) : verdicts_(std::move(verdicts)) {
    info_.device = "scripted:0";
    info_.device_name = "scripted";
    info_.torch_version = "2.13.0";
  }
  const ExecInfo& info() const override { return info_; }
  Result run(const Case& c) override {
    ran.push_back(c.id);
    Result r;
    r.case_id = c.id;
    r.stage = verdicts_.count(c.id) ? verdicts_.at(c.id) : Stage::PASSED;
    r.outcome = stage_outcome(r.stage);
    r.message = r.stage == Stage::PASSED ? "" : "scripted failure";
    return r;
  }
  std::vector<std::string> ran;

 private:
  ExecInfo info_;
  std::map<std::string, Stage> verdicts_;
};

Case make_case(const std::string& name, const std::string& op) {
  Case c;
  c.model = "m";
  c.name = name;
  c.id = "m::" + name;
  c.op = op;
  c.dtype = DType::Float32;
  return c;
}

struct RunSessionTest : ::testing::Test {
  std::filesystem::path dir;
  std::vector<Case> cases = {make_case("a", "torch.exp"), make_case("b", "torch.neg"), make_case("c", "torch.sin")};
  std::vector<std::string> notes;

  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("opcheck-session-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::vector<const Case*> selected() const {
    std::vector<const Case*> out;
    for (const auto& c : cases) out.push_back(&c);
    return out;
  }
  RunSessionOptions options() {
    RunSessionOptions o;
    o.artifact_dir = (dir / "art").string();
    o.argv = {"opcheck", "run"};
    o.note = [this](const std::string& line) { notes.push_back(line); };
    return o;
  }
  RunInfo identity(const std::string& device = "scripted:0") {
    RunInfo info = describe_run({"opcheck", "run"}, RunPolicy{}, ManifestSet{});
    ExecInfo e;
    e.device = device;
    e.torch_version = "2.13.0";
    describe_executor(e, info);
    info.identity = run_identity(RunSettings{}, e, "");
    return info;
  }
  // One whole run with `options`: select, open, execute, close. Returns the report.
  RunReport run(RunSessionOptions o, ScriptedExecutor& ex, std::vector<const Case*>* ran_selection = nullptr) {
    RunSession s(std::move(o));
    EXPECT_TRUE(s.read_previous_run().items.empty());
    const std::vector<const Case*> chosen = s.select(selected(), RunPolicy{});
    if (ran_selection) *ran_selection = chosen;
    RunReport report;
    report.info = identity();
    std::string error;
    EXPECT_TRUE(s.open(report.info, error)) << error;
    PoolOptions pool;
    pool.isolation = false;
    PlanExecutionOptions so;
    so.device_name = "scripted";
    const std::unique_ptr<ReportListener> journal = s.journal_listener();
    s.execute(make_plan(chosen, true), ex, pool, so, report, [&](const CaseRecord& r) { journal->case_finished(r); });
    s.close(report);
    return report;
  }
  std::size_t journal_records() { return read_journal((dir / "art" / "journal.jsonl").string()).records.size(); }
};

TEST_F(RunSessionTest, AResumedRunServesWhatTheJournalHoldsAndAppendsOnlyNewResults) {
  ScriptedExecutor first({{"m::b", Stage::INCORRECT_RESULT}});
  RunReport r1 = run(options(), first);
  EXPECT_EQ(first.ran, (std::vector<std::string>{"m::a", "m::b", "m::c"}));
  EXPECT_EQ(journal_records(), 3u);

  // A killed run: the journal kept the first result only.
  const auto path = dir / "art" / "journal.jsonl";
  std::ifstream in(path);
  std::string header, first_record;
  std::getline(in, header);
  std::getline(in, first_record);
  in.close();
  std::ofstream(path) << header << "\n" << first_record << "\n";

  RunSessionOptions o = options();
  o.resume = true;
  ScriptedExecutor second({{"m::b", Stage::INCORRECT_RESULT}});
  RunReport r2 = run(o, second);
  EXPECT_EQ(second.ran, (std::vector<std::string>{"m::b", "m::c"}));
  ASSERT_EQ(r2.cases.size(), 3u);
  EXPECT_EQ(r2.cases[0].result.stage, Stage::PASSED);
  EXPECT_EQ(r2.cases[1].result.stage, Stage::INCORRECT_RESULT);
  EXPECT_EQ(journal_records(), 3u);  // one per occurrence, never a second copy
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("resuming: 1 results reused from"), std::string::npos) << notes.back();
}

TEST_F(RunSessionTest, LastFailedRunsWhatFailedAndEverythingWhenNothingDid) {
  RunSessionOptions o = options();
  o.last_failed = true;
  ScriptedExecutor none;
  std::vector<const Case*> chosen;
  run(o, none, &chosen);  // no journal yet: everything runs
  EXPECT_EQ(chosen.size(), 3u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("no previous run in"), std::string::npos) << notes[0];

  ScriptedExecutor failing({{"m::c", Stage::FAILED_RUNTIME}});
  run(options(), failing);
  ScriptedExecutor again;
  run(o, again, &chosen);
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(chosen[0]->id, "m::c");
  EXPECT_EQ(again.ran, (std::vector<std::string>{"m::c"}));

  notes.clear();
  run(o, again, &chosen);  // m::c passed this time: nothing failed, everything runs
  EXPECT_EQ(chosen.size(), 3u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("nothing failed in the previous run"), std::string::npos) << notes[0];
}

TEST_F(RunSessionTest, AJournalOfAnotherIdentityIsNotResumed) {
  ScriptedExecutor ex;
  run(options(), ex);
  RunSessionOptions o = options();
  o.resume = true;
  RunSession s(o);
  s.read_previous_run();
  s.select(selected(), RunPolicy{});
  std::string error;
  EXPECT_FALSE(s.open(identity("privateuseone:1"), error));
  EXPECT_NE(error.find("device: 'scripted:0' -> 'privateuseone:1'"), std::string::npos) << error;
  EXPECT_NE(error.find("Fix: "), std::string::npos) << error;
  EXPECT_EQ(journal_records(), 3u);  // the refused run left the journal as it was
}

TEST_F(RunSessionTest, ASecondRunInTheSameArtifactFolderIsRefusedNamingTheFirst) {
  RunSession first(options());
  std::string error;
  ASSERT_TRUE(first.open(identity(), error)) << error;
  RunSession second(options());
  EXPECT_FALSE(second.open(identity(), error));
  EXPECT_NE(error.find("pid " + std::to_string(::getpid())), std::string::npos) << error;
  EXPECT_NE(error.find("Fix: wait for that run to end, or give this one its own --artifact-dir"), std::string::npos)
      << error;
}

TEST_F(RunSessionTest, TheResultsCacheServesUnchangedCasesOnlyWithReuse) {
  RunSessionOptions o = options();
  o.results_cache = (dir / "cache.jsonl").string();
  ScriptedExecutor first;
  run(o, first);
  EXPECT_EQ(first.ran.size(), 3u);
  ScriptedExecutor without_reuse;
  run(o, without_reuse);
  EXPECT_EQ(without_reuse.ran.size(), 3u);
  o.reuse_results = true;
  ScriptedExecutor with_reuse;
  RunReport r = run(o, with_reuse);
  EXPECT_TRUE(with_reuse.ran.empty());
  EXPECT_EQ(r.cases.size(), 3u);
  EXPECT_NE(notes.back().find("3 unchanged cases served from"), std::string::npos) << notes.back();
  o.quiet = true;  // --quiet: no such note
  notes.clear();
  run(o, with_reuse);
  EXPECT_TRUE(notes.empty());
}

TEST(RunExitCode, FollowsPytest) {
  RunReport report;
  CaseRecord passed;
  passed.outcome = Outcome::Passed;
  CaseRecord failed;
  failed.outcome = Outcome::Failed;
  CaseRecord xpassed;
  xpassed.outcome = Outcome::XPassed;
  report.cases = {passed};
  EXPECT_EQ(run_exit_code(report, {}), kOk);
  RunEnd regressions;
  regressions.regressions = true;
  EXPECT_EQ(run_exit_code(report, regressions), kTestsFailed);
  RunEnd bad_input;
  bad_input.invalid_input = true;
  EXPECT_EQ(run_exit_code(report, bad_input), kInterrupted);
  RunEnd signalled;
  signalled.signalled = true;
  EXPECT_EQ(run_exit_code(report, signalled), kInterrupted);
  RunEnd unwritten;
  unwritten.report_failure = kInternalError;
  unwritten.signalled = true;
  EXPECT_EQ(run_exit_code(report, unwritten), kInternalError);

  report.cases = {passed, failed};
  EXPECT_EQ(run_exit_code(report, {}), kTestsFailed);
  report.info.stopped_by = "maxfail";  // --maxfail is a run with failures, not an interrupted one
  EXPECT_EQ(run_exit_code(report, {}), kTestsFailed);
  report.info.stopped_by = "deadline";
  EXPECT_EQ(run_exit_code(report, {}), kInterrupted);

  report.info.stopped_by.clear();
  report.cases = {passed, xpassed};  // a strict xfail that passed fails the run, unless --xpass-ok
  EXPECT_EQ(run_exit_code(report, {}), kTestsFailed);
  report.info.policy.xpass_ok = true;
  EXPECT_EQ(run_exit_code(report, {}), kOk);

  CaseRecord unsupported;
  unsupported.outcome = Outcome::NotSupported;
  report.cases = {passed, unsupported};  // no kernel fails the run (the reports never look greener than the run)
  EXPECT_EQ(run_exit_code(report, {}), kTestsFailed);
  report.info.policy.not_supported_ok = true;  // ... unless --not-supported-ok
  EXPECT_EQ(run_exit_code(report, {}), kOk);
}

TEST(DecideOutcome, NotSupportedIsItsOwnOutcomeAndAnXfailOnItIsXfailed) {
  EXPECT_EQ(decide_outcome(Stage::NOT_SUPPORTED, false), Outcome::NotSupported);
  EXPECT_EQ(decide_outcome(Stage::NOT_SUPPORTED, true), Outcome::XFailed);
  EXPECT_EQ(decide_outcome(Stage::INCORRECT_RESULT, true), Outcome::XFailed);
}

TEST(DecideOutcome, APassWithoutTheDeviceStaysOneUnderAnXfail) {
  // An expected failure whose call ran no op on the device is no xpass: it says nothing about the device.
  EXPECT_EQ(decide_outcome(Stage::NO_DEVICE_OP, false), Outcome::NoDeviceOp);
  EXPECT_EQ(decide_outcome(Stage::NO_DEVICE_OP, true), Outcome::NoDeviceOp);
}

TEST(DescribePlan, ListsUniqueCasesWithWhatEachServesThenTheCounts) {
  std::vector<Case> cases = {make_case("a", "torch.exp"), make_case("b", "torch.exp"), make_case("c", "torch.neg")};
  std::vector<const Case*> sel = {&cases[0], &cases[1], &cases[2]};
  const Plan plan = make_plan(sel, true);
  const std::string text = describe_plan(plan);
  EXPECT_EQ(text.rfind("m::a  " + plan.keys[0] + "\n    also m::b\nm::c  ", 0), 0u) << text;
  EXPECT_NE(text.find("\n3 cases, 2 unique, 1 duplicate served\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace opcheck
