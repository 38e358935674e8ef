// The HTML report's text: escaping, the script's CSP hash, figures from compute_stats, the trend, history reading.
// test/html/report.test.mjs checks the same pages in a real browser.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "../report/sample_report.h"
#include "common/sha256.h"
#include "fleet_runs.h"
#include "report/atomic_file.h"
#include "report/diff.h"
#include "report/html.h"
#include "report/metrics.h"
#include "report/report_error.h"

namespace opcheck {
namespace {

namespace fs = std::filesystem;

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

std::string base64(const std::string& bytes) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t buf = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buf = (buf << 8) | c;
    bits += 8;
    while (bits >= 6) {
      out += k[(buf >> (bits - 6)) & 63];
      bits -= 6;
    }
  }
  if (bits > 0) out += k[(buf << (6 - bits)) & 63];
  while (out.size() % 4) out += '=';
  return out;
}

// A fresh folder per test, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("opcheck-html-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

TEST(HtmlReport, EverythingFromTheRunIsEscapedAndOnlyOpchecksScriptExists) {
  const std::string html = html_report(testing::hostile_report(), {});
  EXPECT_EQ(count(html, "<script"), 1u);
  EXPECT_EQ(html.find("window.__pwned='"), std::string::npos) << "a raw quote from the run reached the page";
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<svg onload"), std::string::npos);
  EXPECT_EQ(html.find("<b "), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;window.__pwned=&#39;message&#39;&lt;/script&gt; &amp; more"), std::string::npos);
  // Attributes too: the id is quoted-escaped inside data-id.
  EXPECT_NE(html.find("data-id=\"&lt;img src=x onerror=&quot;window.__pwned=&#39;model&#39;&quot;&gt;::"), std::string::npos);
  // Invalid UTF-8 and the terminal escape become visible text instead of raw bytes.
  EXPECT_NE(html.find("bad utf-8 \\xff\\xfe then \\x1b[31mred"), std::string::npos);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
}

TEST(HtmlReport, ContentSecurityPolicyPinsTheInlineScriptByItsHash) {
  const std::string html = html_report(testing::sample_report(), {});
  const auto open = html.find("<script>") + 8;
  const auto close = html.find("</script>", open);
  ASSERT_NE(close, std::string::npos);
  const std::string hex = sha256_hex(html.substr(open, close - open));
  std::string raw;
  for (std::size_t i = 0; i < hex.size(); i += 2) raw += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  EXPECT_NE(html.find("script-src 'sha256-" + base64(raw) + "'"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos) << "nothing may be loaded from anywhere";
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(HtmlReport, SampleFiguresAreThoseOfComputeStats) {
  const std::string html = html_report(testing::sample_report(), {});
  EXPECT_NE(html.find("data-kpi=\"pass-rate\" data-value=\"0.5\""), std::string::npos);
  EXPECT_NE(html.find("<div class=\"kpi-value\">50.0%</div>"), std::string::npos);
  EXPECT_NE(html.find("<tr data-model=\"llama\"><td data-col=\"model\">llama</td><td class=\"num\" data-col=\"total\" "
                      "data-sort=\"7\">7</td><td class=\"num\" data-col=\"passed\" data-sort=\"2\">2</td>"),
            std::string::npos);
  EXPECT_NE(html.find("data-col=\"pass_rate\" data-sort=\"0.4\">40.0%</td>"), std::string::npos);
  // Failures: failed, error and xpassed occurrences, in report order.
  const std::regex row("<tr data-id=\"([^\"]+)\" data-model=\"[^\"]*\" data-outcome=\"([a-z]+)\" data-stage=\"([A-Z_]+)\"");
  std::vector<std::string> ids;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), row); it != std::sregex_iterator(); ++it)
    ids.push_back((*it)[1].str() + " " + (*it)[2].str() + " " + (*it)[3].str());
  EXPECT_EQ(ids, (std::vector<std::string>{"llama::mul failed INCORRECT_RESULT", "llama::softmax error FAILED_INPUT",
                                           "llama::neg xpassed PASSED", "granite::cat failed CRASHED"}));
  EXPECT_NE(html.find("data-col=\"max_rel_diff\" data-sort=\"Infinity\">inf</td>"), std::string::npos);
  EXPECT_NE(html.find("data-col=\"pcc\" data-sort=\"\">nan</td>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"chip mono\">aten::cos</span><span class=\"chip mono\">aten::sin</span>"),
            std::string::npos);
  EXPECT_EQ(html.find("id=\"trend\""), std::string::npos) << "no history, no trend";
}

TEST(HtmlReport, TrendHasOneRowPerRunAndMarksTheRunsDiffCallsRegressed) {
  const auto nights = testing::fleet_nights(7);
  const std::vector<RunReport> history(nights.begin(), nights.end() - 1);
  const std::string html = html_report(nights.back(), history);
  EXPECT_EQ(count(html, "<tr data-run=\""), 7u);
  std::size_t regressed = 0;
  for (std::size_t i = 1; i < nights.size(); ++i) {
    const DiffResult d = diff_reports(nights[i - 1], nights[i]);
    if (d.has_regressions()) ++regressed;
    const std::string cell = "data-col=\"regressions\" data-sort=\"" +
                             std::to_string(d.regressions.size() + d.stage_changes.size()) + "\"";
    const auto row = html.find("<tr data-run=\"" + std::to_string(i) + "\"");
    ASSERT_NE(row, std::string::npos);
    EXPECT_NE(html.substr(row, html.find("</tr>", row) - row).find(cell), std::string::npos) << "night " << i + 1;
  }
  EXPECT_GE(regressed, 2u) << "the fixture regresses on night 4 and the last night";
  EXPECT_EQ(count(html, "<g class=\"point regression\""), regressed);
  EXPECT_EQ(count(html, "<details class=\"reg\""), regressed);
  EXPECT_EQ(count(html, "<details class=\"reg\" data-run=\"6\" open>"), 1u) << "the newest regressions are unfolded";
}

TEST(HtmlReport, AHistoryRunDiffCannotReadIsShownNotFatal) {
  RunReport broken = testing::sample_report();
  broken.cases.push_back(broken.cases.front());  // the same id twice: diff_reports refuses it
  const std::string html = html_report(testing::sample_report(), {broken});
  EXPECT_NE(html.find("not compared: "), std::string::npos);
  EXPECT_NE(html.find("twice"), std::string::npos);
}

TEST(HtmlReport, HugeStderrIsCutWithANote) {
  RunReport run = testing::sample_report();
  run.cases[2].result.captured_stderr = std::string(200000, 'x') + "\xc3\xa9";
  const std::string html = html_report(run, {});
  EXPECT_NE(html.find("more bytes in the metrics file"), std::string::npos);
  EXPECT_LT(html.size(), 120000u);
}

TEST(HtmlReport, EmptyAndInterruptedRunsRender) {
  const std::string empty = html_report(RunReport{}, {});
  EXPECT_NE(empty.find("No cases ran."), std::string::npos);
  EXPECT_NE(empty.find("<div class=\"kpi-value\">n/a</div>"), std::string::npos);
  EXPECT_NE(empty.find("</html>"), std::string::npos);

  RunReport run = testing::sample_report();
  run.info.interrupted = true;
  run.info.stop_reason = "--maxfail=2 reached";
  const std::string html = html_report(run, {});
  EXPECT_NE(html.find("id=\"interrupted\"><b>The run stopped early</b>: --maxfail=2 reached"), std::string::npos);
}

TEST(HtmlReport, AModelWithNothingCountedShowsNaAndNoBar) {
  RunReport run;
  CaseRecord c;
  c.id = "m::skipped";
  c.model = "m";
  c.op = "torch.add";
  c.outcome = Outcome::Skipped;
  c.result.stage = Stage::SKIPPED;
  run.cases.push_back(c);
  const std::string html = html_report(run, {});
  EXPECT_NE(html.find("<g class=\"bar\" data-model=\"m\">"), std::string::npos);
  EXPECT_EQ(html.find("rect class=\"rate\""), std::string::npos);
  EXPECT_NE(html.find("data-col=\"pass_rate\" data-sort=\"\">n/a</td>"), std::string::npos);
}

TEST(HtmlReport, WriteIsAtomicAndReportsABadPath) {
  TempDir tmp;
  const auto path = (tmp.path / "r.html").string();
  write_html_report(testing::sample_report(), {}, path);
  EXPECT_EQ(read_file_bytes(path), html_report(testing::sample_report(), {}));
  EXPECT_THROW(write_html_report(testing::sample_report(), {}, (tmp.path / "missing" / "r.html").string()), ReportError);
}

TEST(MetricsHistory, OldestFirstByStartTimeSkippingTheCurrentFileAndOtherFiles) {
  TempDir tmp;
  const auto nights = testing::fleet_nights(3);
  // File names deliberately out of time order.
  write_metrics_json(nights[2], (tmp.path / "a.json").string());
  write_metrics_json(nights[0], (tmp.path / "b.json").string());
  write_metrics_json(nights[1], (tmp.path / "c.json").string());
  std::ofstream(tmp.path / "junit.xml") << "<testsuites/>";
  fs::create_directories(tmp.path / "sub.json");  // a folder, not a file

  auto runs = read_metrics_history(tmp.path.string());
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].info.started_at, nights[0].info.started_at);
  EXPECT_EQ(runs[1].info.started_at, nights[1].info.started_at);
  EXPECT_EQ(runs[2].info.started_at, nights[2].info.started_at);

  // The current run's own file, named through another spelling of its path, is left out.
  runs = read_metrics_history(tmp.path.string(), (tmp.path / "." / "a.json").string());
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].info.started_at, nights[1].info.started_at);
}

TEST(MetricsHistory, AMissingFolderIsALocatedErrorAndABadFileIsSkippedWithItsReason) {
  TempDir tmp;
  try {
    read_metrics_history((tmp.path / "nope").string());
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("nope: error: not a folder"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("Fix:"), std::string::npos);
  }
  std::ofstream(tmp.path / "broken.json") << "{\"format\": \"opcheck-metrics\", \"version\": 1";
  std::vector<std::string> skipped;
  EXPECT_TRUE(read_metrics_history(tmp.path.string(), {}, nullptr, &skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("broken.json"), std::string::npos) << skipped[0];
  EXPECT_EQ(skipped[0].find("opcheck-metrics"), std::string::npos) << "never quotes the file's bytes: " << skipped[0];
}

}  // namespace
}  // namespace opcheck
