// Results served again: the journal of a killed run (--resume) and the results cache, both under one identity.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "report/journal.h"
#include "runner/earlier_results.h"
#include "settings/run_identity.h"

namespace opcheck {
namespace {

RunInfo info(const std::string& device, const std::string& faults = "") {
  RunSettings s;
  if (!faults.empty()) s.device_environment = {{"OPCHECK_LOOPBACK_FAULTS", faults}};
  ExecInfo e;
  e.torch_version = "2.13.0";
  e.device = device;
  e.device_name = device;
  RunInfo i;
  i.identity = run_identity(s, e, "");
  return i;
}

CaseRecord record(const std::string& id, const std::string& key, Stage stage, const std::string& from = "") {
  CaseRecord r;
  r.id = id;
  r.model = id.substr(0, id.find("::"));
  r.name = id.substr(id.find("::") + 2);
  r.key = key;
  r.deduplicated_from = from;
  r.result.case_id = id;
  r.result.stage = stage;
  r.result.outcome = stage_outcome(stage);
  r.result.message = "from " + id;
  return r;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() / ("opcheck-earlier-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST(EarlierResults, JournalOfTheSameIdentityServesSameCaseAndKey) {
  EarlierResults e;
  std::string error;
  ASSERT_TRUE(e.adopt_journal({record("m::a", "k2:1", Stage::PASSED), record("m::b", "k2:2", Stage::INCORRECT_RESULT)}, {},
                              info("cpu"), info("cpu"), "j.jsonl", error))
      << error;
  EXPECT_TRUE(e.can_serve());
  EarlierResults::Source from{};
  const Result* r = e.find("m::b", "k2:2", from);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->stage, Stage::INCORRECT_RESULT);
  EXPECT_EQ(from, EarlierResults::Source::Journal);
  // An edited case (another key) runs again.
  EXPECT_EQ(e.find("m::b", "k2:3", from), nullptr);
  EXPECT_TRUE(e.journaled(record("m::a", "k2:1", Stage::PASSED)));
  EXPECT_FALSE(e.journaled(record("m::b", "k2:3", Stage::PASSED)));
}

TEST(EarlierResults, JournalOfAnotherIdentityIsRefusedSayingWhatDiffers) {
  EarlierResults e;
  std::string error;
  RunInfo then = info("privateuseone:0", "aten::exp=bias:1");
  EXPECT_FALSE(e.adopt_journal({record("m::a", "k2:1", Stage::PASSED)}, {}, then, info("cpu"), "art/journal.jsonl", error));
  EXPECT_NE(error.find("art/journal.jsonl was written by a different run"), std::string::npos) << error;
  EXPECT_NE(error.find("  device: 'privateuseone:0' -> 'cpu'"), std::string::npos) << error;
  EXPECT_NE(error.find("  fault settings: 'OPCHECK_LOOPBACK_FAULTS=aten::exp=bias:1' -> none"), std::string::npos)
      << error;
  EXPECT_NE(error.find("Fix: rerun without --resume"), std::string::npos) << error;
  EXPECT_NE(error.find("--artifact-dir"), std::string::npos) << error;
  EXPECT_FALSE(e.can_serve());
  // A journal without a header cannot say what wrote it.
  EXPECT_FALSE(e.adopt_journal({record("m::a", "k2:1", Stage::PASSED)}, {}, std::nullopt, info("cpu"), "j", error));
  EXPECT_NE(error.find("no header"), std::string::npos) << error;
}

TEST(EarlierResults, CacheOfTheSameIdentityServesByKeyOnlyWhenAsked) {
  TempDir dir;
  const std::string cache = (dir.path / "cache.jsonl").string();
  {
    EarlierResults first;
    std::string note;
    first.adopt_cache(cache, info("cpu"), false, note);  // no file yet
    EXPECT_TRUE(note.empty());
    first.write_cache(cache, info("cpu"),
                      {record("m::a", "k2:1", Stage::PASSED), record("m::b", "k2:1", Stage::PASSED, "m::a"),
                       record("m::c", "k2:9", Stage::SKIPPED)});
  }
  // A header line, then one digested record: the occurrence that ran; no deduplicated copy, no condition skip.
  std::ifstream in(cache);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("{\"format\":\"opcheck-results-cache\"", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("{\"digest\":\"", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find("\"id\":\"m::a\""), std::string::npos) << lines[1];

  EarlierResults off;
  std::string note;
  off.adopt_cache(cache, info("cpu"), /*serve=*/false, note);
  EarlierResults::Source from{};
  EXPECT_EQ(off.find("m::x", "k2:1", from), nullptr);

  EarlierResults on;
  on.adopt_cache(cache, info("cpu"), /*serve=*/true, note);
  EXPECT_TRUE(note.empty()) << note;
  const Result* r = on.find("m::x", "k2:1", from);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(from, EarlierResults::Source::Cache);

  EarlierResults other;
  other.adopt_cache(cache, info("privateuseone:0"), true, note);
  EXPECT_EQ(other.find("m::x", "k2:1", from), nullptr);
  EXPECT_NE(note.find("  device: 'cpu' -> 'privateuseone:0'"), std::string::npos) << note;
}

}  // namespace
}  // namespace opcheck
