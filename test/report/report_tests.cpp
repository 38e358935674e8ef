// Unit tests of the report stage: JUnit shape and escaping, metrics figures and round trip, merge, diff,
// console summary and the journal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <sstream>
#include <pugixml.hpp>
#include <nlohmann/json.hpp>

#include "common/text_escape.h"
#include "report/atomic_file.h"
#include "report/diff.h"
#include "report/journal.h"
#include "report/json_writer.h"
#include "report/junit.h"
#include "report/merge.h"
#include "report/metrics.h"
#include "report/record_json.h"
#include "report/report_error.h"
#include "report/stats.h"
#include "report/console.h"
#include "sample_report.h"

namespace fs = std::filesystem;
using namespace opcheck;
using opcheck::testing::sample_report;
using opcheck::testing::written_junit_xml;
using opcheck::testing::written_metrics_json;

namespace {

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "opcheck-report-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string slurp(const std::string& path) { return read_file_bytes(path); }

pugi::xml_node suite_named(const pugi::xml_document& doc, const char* name) {
  return doc.child("testsuites").find_child_by_attribute("testsuite", "name", name);
}

pugi::xml_node case_named(pugi::xml_node suite, const char* name) {
  return suite.find_child_by_attribute("testcase", "name", name);
}

std::string property(pugi::xml_node node, const char* name) {
  return node.child("properties").find_child_by_attribute("property", "name", name).attribute("value").value();
}

const CaseRecord& find_case(const RunReport& r, const std::string& id) {
  for (const auto& c : r.cases)
    if (c.id == id) return c;
  throw std::runtime_error("no case " + id);
}

CaseRecord& find_case(RunReport& r, const std::string& id) {
  for (auto& c : r.cases)
    if (c.id == id) return c;
  throw std::runtime_error("no case " + id);
}

}  // namespace

// ---------------------------------------------------------------- JUnit XML

TEST(JUnit, OneSuiteForTheRunWithPytestCounts) {
  pugi::xml_document doc;
  const std::string xml = written_junit_xml(sample_report());
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  auto suites = doc.child("testsuites");
  std::vector<std::string> names;
  for (auto s : suites.children("testsuite")) names.push_back(s.attribute("name").value());
  // One suite, as pytest writes: torch-spyre's ingest reads only the first.
  EXPECT_EQ(names, (std::vector<std::string>{"opcheck"}));

  auto suite = suite_named(doc, "opcheck");
  EXPECT_STREQ(suite.attribute("tests").value(), "10");
  EXPECT_STREQ(suite.attribute("failures").value(), "3");  // failed + xpassed (strict), as pytest counts
  EXPECT_STREQ(suite.attribute("errors").value(), "1");
  EXPECT_STREQ(suite.attribute("skipped").value(), "2");   // skipped + xfailed
  EXPECT_STREQ(suite.attribute("timestamp").value(), "2026-01-02T03:04:05Z");
  EXPECT_STREQ(suite.attribute("time").value(), "30.000");  // the run's wall time, as pytest's suite time
  EXPECT_STREQ(suite.attribute("hostname").value(), "ci-runner-1");
  EXPECT_EQ(property(suite, "device_name"), "loopback");
  EXPECT_EQ(property(suite, "torch_version"), "1.13.1");
  // Models are classnames, in selection order.
  std::vector<std::string> classes;
  for (auto tc : suite.children("testcase")) classes.push_back(tc.attribute("classname").value());
  EXPECT_EQ(classes, (std::vector<std::string>{"llama", "llama", "llama", "llama", "llama", "llama", "llama", "granite",
                                               "granite", "granite"}));
  auto llama = suite;
  auto granite = suite;

  auto tc = case_named(llama, "mul");
  EXPECT_STREQ(tc.attribute("classname").value(), "llama");
  EXPECT_STREQ(tc.attribute("time").value(), "0.012");
  auto failure = tc.child("failure");
  ASSERT_TRUE(failure);
  // The message: the error's first line, then how to rerun the case (the sample records no call).
  EXPECT_STREQ(failure.attribute("message").value(), "Tensor-likes are not close!\nrepro: opcheck repro llama::mul");
  EXPECT_STREQ(failure.attribute("type").value(), "INCORRECT_RESULT");
  EXPECT_NE(std::string(failure.text().get()).find("Mismatched elements: 3 / 6"), std::string::npos);
  EXPECT_EQ(property(tc, "op"), "torch.mul");
  EXPECT_EQ(property(tc, "resolved_op"), "aten::mul.Tensor");
  EXPECT_EQ(property(tc, "stage"), "INCORRECT_RESULT");
  EXPECT_EQ(property(tc, "max_abs_diff"), "0.5");
  EXPECT_EQ(property(tc, "max_rel_diff"), "inf");
  EXPECT_EQ(property(tc, "pcc"), "nan");
  EXPECT_EQ(property(tc, "device_ms"), "8");
  EXPECT_EQ(property(tc, "location"), "manifests/llama.yaml:24");

  auto err = case_named(llama, "softmax").child("error");
  ASSERT_TRUE(err);
  EXPECT_STREQ(err.attribute("type").value(), "FAILED_INPUT");

  auto skip = case_named(llama, "sdpa").child("skipped");
  EXPECT_STREQ(skip.attribute("type").value(), "pytest.skip");
  EXPECT_STREQ(skip.attribute("message").value(), "not supported on this device");
  EXPECT_EQ(property(case_named(llama, "sdpa"), "status"), "skip");

  auto xfail = case_named(llama, "silu").child("skipped");
  EXPECT_STREQ(xfail.attribute("type").value(), "pytest.xfail");
  EXPECT_STREQ(xfail.attribute("message").value(), "known silu rounding bug");

  auto xpass = case_named(llama, "neg").child("failure");
  ASSERT_TRUE(xpass);
  EXPECT_STREQ(xpass.attribute("message").value(), "[XPASS(strict)] flaky neg");

  auto passed = case_named(llama, "add_f16");
  EXPECT_FALSE(passed.child("failure") || passed.child("error") || passed.child("skipped"));
  EXPECT_EQ(property(passed, "marks"), "smoke,elementwise");
  auto dup = case_named(llama, "add_f16_again");
  EXPECT_STREQ(dup.attribute("classname").value(), "llama");
  EXPECT_EQ(property(dup, "deduplicated_from"), "llama::add_f16");
  EXPECT_STREQ(dup.attribute("time").value(), "0.000");
  EXPECT_EQ(property(case_named(granite, "linear"), "decomposed"), "true");
  EXPECT_EQ(property(case_named(granite, "linear"), "reference_upcast"), "true");
}

TEST(JUnit, CapturedStderrGoesToSystemErrWithControlCharsVisible) {
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(written_junit_xml(sample_report()).c_str()));
  auto tc = case_named(suite_named(doc, "opcheck"), "mul");
  EXPECT_STREQ(tc.child("system-err").text().get(), "warning: <fallback> & \"slow\" path \\x1b[31mred\\x1b[0m\n");
  EXPECT_FALSE(case_named(suite_named(doc, "opcheck"), "add_f16").child("system-err"));
}

TEST(JUnit, EscapesMarkupControlCharsAndInvalidUtf8WithoutDroppingAnything) {
  RunReport rep = sample_report();
  CaseRecord& c = find_case(rep, "llama::mul");
  c.name = "a<b & c\"d'e\x01" "f\xff" "g caf\xc3\xa9 \xe2\x9c\x93 \xef\xbf\xbe \x7f";
  c.id = "llama::" + c.name;  // the testcase name is the id after the model
  c.result.message = "first <line> & \"quote\"\x02\nsecond\tline";
  const std::string xml = written_junit_xml(rep);
  // The raw bytes XML 1.0 cannot hold must not reach the file at all.
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_EQ(xml.find('\x02'), std::string::npos);
  EXPECT_EQ(xml.find('\xff'), std::string::npos);
  EXPECT_EQ(xml.find("&#1;"), std::string::npos);
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  auto tc = suite_named(doc, "opcheck").find_child([](pugi::xml_node n) {
    return std::string(n.attribute("name").value()).rfind("a<b", 0) == 0;
  });
  ASSERT_TRUE(tc);
  EXPECT_STREQ(tc.attribute("name").value(), "a<b & c\"d'e\\x01f\\xffg caf\xc3\xa9 \xe2\x9c\x93 \\ufffe \\x7f");
  // The message's first line, then the repro command with the id quoted for a shell: with a control character in
  // it, as bash's $'...', every non-ASCII byte a \xNN escape, so the command stays one printable line.
  EXPECT_STREQ(tc.child("failure").attribute("message").value(),
               "first <line> & \"quote\"\\x02\nrepro: opcheck repro $'llama::a<b & c\"d\\'e\\x01f\\xffg "
               "caf\\xc3\\xa9 \\xe2\\x9c\\x93 \\xef\\xbf\\xbe \\x7f'");
  EXPECT_STREQ(tc.child("failure").text().get(), "first <line> & \"quote\"\\x02\nsecond\tline");
}

TEST(JUnit, EmptyRunStillHasOneSuite) {
  RunReport rep;
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(written_junit_xml(rep).c_str()));
  auto suite = doc.child("testsuites").child("testsuite");
  ASSERT_TRUE(suite);
  EXPECT_STREQ(suite.attribute("tests").value(), "0");
}

TEST(JUnit, WriteIsAtomicAndLeavesNoTemporaryFiles) {
  TempDir dir;
  const auto path = dir.file("junit.xml");
  { std::ofstream(path) << "old"; }
  write_junit_xml(sample_report(), path);
  EXPECT_EQ(slurp(path), written_junit_xml(sample_report()));
  std::size_t files = 0;
  for (auto& e : fs::directory_iterator(dir.path())) { (void)e; ++files; }
  EXPECT_EQ(files, 1u);
  try {
    write_junit_xml(sample_report(), dir.file("missing-dir/junit.xml"));
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("missing-dir/junit.xml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Fix:"), std::string::npos) << e.what();
  }
}

TEST(JUnit, LayoutIsWhatPugixmlWritesForTheSameDocument) {
  // The writer streams text; reading it with pugixml and saving it again must give the same bytes: it is
  // well-formed and laid out as pugixml's default format (which the parity and node consumer tests also read).
  RunReport rep = sample_report();
  find_case(rep, "llama::mul").result.message = "first <line> & \"quote\"\nsecond\tline";
  const std::string xml = written_junit_xml(rep);
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str(), pugi::parse_default | pugi::parse_declaration)) << xml;
  std::ostringstream again;
  doc.save(again, "  ", pugi::format_default, pugi::encoding_utf8);
  EXPECT_EQ(again.str(), xml);
}

TEST(JUnit, AttributeValuesKeepTabsLineBreaksAndQuotes) {
  RunReport rep = sample_report();
  CaseRecord& c = find_case(rep, "llama::sdpa");
  c.status_reason = "tab\there\nnext line\r\n\"quoted\" <a & b>";
  pugi::xml_document doc;
  const std::string xml = written_junit_xml(rep);
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  auto tc = case_named(suite_named(doc, "opcheck"), "sdpa");
  EXPECT_EQ(property(tc, "status_reason"), c.status_reason);
  EXPECT_EQ(std::string(tc.child("skipped").attribute("message").value()), c.status_reason);
}

// The tag properties torch-spyre's ingest takes op_name, dtype and model from.
std::vector<std::string> tags(pugi::xml_node tc) {
  std::vector<std::string> out;
  for (auto p : tc.child("properties").children("property"))
    if (std::string(p.attribute("name").value()) == "tag") out.push_back(p.attribute("value").value());
  return out;
}

TEST(JUnit, EveryTestcaseCarriesOpDtypeAndModelTags) {
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(written_junit_xml(sample_report()).c_str()));
  std::size_t n = 0;
  for (auto tc : suite_named(doc, "opcheck").children("testcase")) {
    ++n;
    const auto t = tags(tc);
    ASSERT_EQ(t.size(), 3u) << tc.attribute("name").value();
    EXPECT_EQ(t[0].rfind("op__", 0), 0u);
    EXPECT_EQ(t[1].rfind("dtype__", 0), 0u);
    EXPECT_EQ(t[2], "model__" + std::string(tc.attribute("classname").value()));
  }
  EXPECT_EQ(n, 10u);
  auto linear = case_named(suite_named(doc, "opcheck"), "linear");
  EXPECT_EQ(tags(linear), (std::vector<std::string>{"op__torch_nn_functional_linear", "dtype__float32", "model__granite"}));
  EXPECT_EQ(tags(case_named(suite_named(doc, "opcheck"), "add_f16"))[1], "dtype__float16");
}

TEST(JUnit, TestcaseNamesAreTheIdsAfterTheModelSoTheyStayUnique) {
  RunReport rep = sample_report();
  // A v1 manifest and a v2 config of one model that share a case name: their ids are qualified with the file.
  CaseRecord& a = find_case(rep, "granite::linear");
  a.id = "granite::torch-spyre/granite/linear";
  CaseRecord& b = find_case(rep, "granite::cat");
  b.name = "linear";
  b.id = "granite::torch-spyre-v2/granite/linear";
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(written_junit_xml(rep).c_str()));
  auto suite = suite_named(doc, "opcheck");
  EXPECT_TRUE(case_named(suite, "torch-spyre/granite/linear"));
  EXPECT_TRUE(case_named(suite, "torch-spyre-v2/granite/linear"));
  EXPECT_TRUE(case_named(suite, "mul"));  // unqualified ids: the case name
}

TEST(JUnit, NonStrictXpassIsABareTestcaseFirstAndCountedForTheIngest) {
  RunReport rep = sample_report();
  // silu (xfailed) and add_f16 become XPASSes of a non-strict xfail; neg stays a strict XPASS.
  for (const char* id : {"llama::add_f16", "granite::linear"}) {
    CaseRecord& c = find_case(rep, id);
    c.outcome = Outcome::XPassed;
    c.xfail_strictness = XfailStrictness::NonStrict;
    c.labels.push_back(
        {find_case_field("upstream_test"), std::string("test_model_ops_db_") + c.name + "__0_spyre_float16"});
  }
  EXPECT_FALSE(fails_run(find_case(rep, "llama::add_f16"), rep.info));
  EXPECT_TRUE(fails_run(find_case(rep, "llama::neg"), rep.info));
  pugi::xml_document doc;
  const std::string xml = written_junit_xml(rep);
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  auto suite = suite_named(doc, "opcheck");
  // pytest's failures (2 failed + 1 strict XPASS) plus the errors (1) and the non-strict XPASSes (2).
  EXPECT_STREQ(suite.attribute("failures").value(), "6");
  EXPECT_STREQ(suite.attribute("errors").value(), "1");
  EXPECT_EQ(property(suite, "nonstrict_xpassed"), "2");
  std::vector<std::string> order;
  for (auto tc : suite.children("testcase")) order.push_back(tc.attribute("name").value());
  ASSERT_GE(order.size(), 3u);
  EXPECT_EQ(order[0], "add_f16");
  EXPECT_EQ(order[1], "linear");
  for (const char* name : {"add_f16", "linear"}) {
    auto tc = case_named(suite, name);
    EXPECT_FALSE(tc.child("failure") || tc.child("error") || tc.child("skipped")) << name;
    EXPECT_EQ(property(tc, "outcome"), "xpassed");
    EXPECT_EQ(property(tc, "xfail_strict"), "false");
    EXPECT_EQ(property(tc, "upstream_test"), std::string("test_model_ops_db_") + name + "__0_spyre_float16");
  }
  auto strict = case_named(suite, "neg").child("failure");
  ASSERT_TRUE(strict);
  EXPECT_NE(std::string(strict.attribute("type").value()).find("xfail"), std::string::npos);
  EXPECT_EQ(property(case_named(suite, "neg"), "xfail_strict"), "true");
  // The console lists the strict XPASS among the failures, not the non-strict ones.
  const std::string failures = short_summary(rep, "fE");
  EXPECT_NE(failures.find("XPASS llama::neg"), std::string::npos) << failures;
  EXPECT_EQ(failures.find("llama::add_f16 "), std::string::npos) << failures;
  EXPECT_EQ(failures.find("granite::linear"), std::string::npos) << failures;
}

TEST(JUnit, JunitDirWritesOneSuitePerModelFile) {
  TempDir dir;
  const std::string out = dir.file("per-model");
  write_junit_dir(sample_report(), out);
  std::vector<std::string> files;
  for (auto& e : fs::directory_iterator(out)) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"granite.xml", "llama.xml"}));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_file((fs::path(out) / "llama.xml").c_str()));
  std::size_t suites = 0;
  for (auto s : doc.child("testsuites").children("testsuite")) {
    (void)s;
    ++suites;
  }
  EXPECT_EQ(suites, 1u);
  auto llama = suite_named(doc, "llama");
  EXPECT_STREQ(llama.attribute("tests").value(), "7");
  EXPECT_STREQ(llama.attribute("failures").value(), "2");
  EXPECT_STREQ(llama.attribute("errors").value(), "1");
  EXPECT_STREQ(llama.attribute("skipped").value(), "2");
  for (auto tc : llama.children("testcase")) EXPECT_STREQ(tc.attribute("classname").value(), "llama");
  // A file that is not a folder: a ReportError naming it.
  { std::ofstream(dir.file("plain")) << "x"; }
  EXPECT_THROW(write_junit_dir(sample_report(), dir.file("plain")), ReportError);
}

// ---------------------------------------------------------------- streaming writers

TEST(JsonWriter, PrettyAndCompactLayoutsWithEveryKindOfValue) {
  std::string out;
  JsonWriter w(out, 2);
  w.begin_object();
  w.field("s", std::string("q\"b\\c\n\t\x01 caf\xc3\xa9 \xff"));
  w.field("i", -3).field("u", std::size_t{7}).field("d", 1.0).field("f", 0.1).field("e", 1e-05);
  w.field("nan", std::nan("")).field("inf", -HUGE_VAL).field("none", std::optional<double>{}).field("yes", true);
  w.key("list").strings(std::vector<std::string>{"a", "b"}, /*compact=*/true);
  w.key("row").begin_object(/*compact=*/true).field("x", 1).key("nested").begin_array().value(2).end_array().end_object();
  w.key("empty").begin_array().end_array();
  w.key("lines").begin_array().value("x").begin_object().end_object().end_array();
  w.end_object();
  EXPECT_TRUE(w.done());
  EXPECT_EQ(out, R"({
  "s": "q\"b\\c\n\t\u0001 caf)" "\xc3\xa9" R"( \\xff",
  "i": -3,
  "u": 7,
  "d": 1.0,
  "f": 0.1,
  "e": 1e-05,
  "nan": "NaN",
  "inf": "-Infinity",
  "none": null,
  "yes": true,
  "list": ["a","b"],
  "row": {"x":1,"nested":[2]},
  "empty": [],
  "lines": [
    "x",
    {}
  ]
})");
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["s"], "q\"b\\c\n\t\x01 caf\xc3\xa9 \\xff");  // the invalid byte is shown, not dropped
  EXPECT_TRUE(j["d"].is_number_float());
  EXPECT_EQ(j["e"].get<double>(), 1e-05);
}

TEST(JsonWriter, CaseRecordLineReadsBackAsTheSameRecord) {
  const RunReport rep = sample_report();
  for (const auto& rec : rep.cases) {
    const std::string line = case_record_json_line(rec);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    const CaseRecord back = case_record_from_json(nlohmann::json::parse(line), {"t", ""});
    EXPECT_EQ(case_record_json_line(back), line);
  }
}

TEST(JsonWriter, CompileTimeAndStageTravelThroughEveryReport) {
  RunReport rep = sample_report();
  CaseRecord& rec = rep.cases.front();
  rec.result.stage = Stage::FAILED_COMPILE;
  rec.result.compile_ms = 2500.25;
  rep.info.compile_backend = "inductor";
  rep.info.python_modules = {"torch 2.13.0", "opcheck_pyloop 0.1.0"};
  rep.info.torch_path = "/venv/torch";
  const CaseRecord back = case_record_from_json(nlohmann::json::parse(case_record_json_line(rec)), {"t", ""});
  EXPECT_EQ(back.result.stage, Stage::FAILED_COMPILE);
  EXPECT_EQ(back.result.compile_ms, 2500.25);
  pugi::xml_document doc;
  const std::string xml = written_junit_xml(rep);
  ASSERT_TRUE(doc.load_string(xml.c_str())) << xml;
  EXPECT_NE(xml.find("<property name=\"compile_ms\" value=\"2500.25\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<property name=\"compile_backend\" value=\"inductor\""), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"python_modules\" value=\"torch 2.13.0, opcheck_pyloop 0.1.0\""),
            std::string::npos);
  const auto j = nlohmann::json::parse(written_metrics_json(rep));
  EXPECT_EQ(j["stages"]["FAILED_COMPILE"], 1);
  EXPECT_EQ(j["run"]["compile_backend"], "inductor");
  EXPECT_EQ(j["run"]["torch_path"], "/venv/torch");
  EXPECT_DOUBLE_EQ(j["time"]["totals"]["compile_ms"].get<double>(), 2500.25);
}

TEST(AtomicFile, StreamedWriteSpillsInChunksAndAFailureLeavesTheOldFile) {
  TempDir dir;
  const auto path = dir.file("report.txt");
  std::size_t spilled_chunks = 0;
  write_file_atomically(path, [&](TextOut& out) {
    out.chunk = 64;
    auto sink = out.sink;
    out.sink = [&, sink](std::string_view bytes) {
      ++spilled_chunks;
      sink(bytes);
    };
    for (int i = 0; i < 100; ++i) {
      out.buf += "line " + std::to_string(i) + "\n";
      out.spill();
    }
  });
  std::string expected;
  for (int i = 0; i < 100; ++i) expected += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(slurp(path), expected);
  EXPECT_GT(spilled_chunks, 5u);  // it went out in pieces, not as one string at the end
  EXPECT_THROW(write_file_atomically(path, [](TextOut& out) {
                 out.chunk = 1;
                 out.buf = "half a report";
                 out.spill();
                 throw std::runtime_error("producer failed");
               }),
               std::runtime_error);
  EXPECT_EQ(slurp(path), expected);
  std::size_t files = 0;
  for (auto& e : fs::directory_iterator(dir.path())) { (void)e; ++files; }
  EXPECT_EQ(files, 1u);
}

// ---------------------------------------------------------------- text escaping

TEST(TextEscape, VisibleUtf8KeepsValidTextAndShowsBadBytes) {
  EXPECT_EQ(visible_utf8("caf\xc3\xa9 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(visible_utf8("a\xc3"), "a\\xc3");                   // cut short
  EXPECT_EQ(visible_utf8("\xc0\xaf"), "\\xc0\\xaf");            // overlong '/'
  EXPECT_EQ(visible_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");   // a surrogate
  EXPECT_EQ(visible_utf8("\x1b[0m"), "\x1b[0m");                // JSON can hold it
  EXPECT_EQ(xml_visible("\x1b[0m\t\r\n"), "\\x1b[0m\t\r\n");
  std::string html;
  append_escaped(html, "<a href=\"x\">'&'\x01\xff\n", EscapeMode::Html);
  EXPECT_EQ(html, "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;\\x01\\xff\n");
}

// ---------------------------------------------------------------- metrics

TEST(Metrics, TotalsStagesAndPassRates) {
  const auto j = nlohmann::json::parse(written_metrics_json(sample_report()));
  EXPECT_EQ(j["format"], "opcheck-metrics");
  const auto& t = j["totals"];
  EXPECT_EQ(t["passed"], 4);
  EXPECT_EQ(t["failed"], 2);
  EXPECT_EQ(t["errors"], 1);
  EXPECT_EQ(t["skipped"], 1);
  EXPECT_EQ(t["xfailed"], 1);
  EXPECT_EQ(t["xpassed"], 1);
  EXPECT_EQ(t["total"], 10);
  EXPECT_EQ(j["stages"]["PASSED"], 5);
  EXPECT_EQ(j["stages"]["INCORRECT_RESULT"], 2);
  EXPECT_EQ(j["stages"]["FAILED_INPUT"], 1);
  EXPECT_EQ(j["stages"]["CRASHED"], 1);
  EXPECT_EQ(j["stages"]["SKIPPED"], 1);
  EXPECT_EQ(j["stages"]["TIMEOUT"], 0);  // every stage is listed
  EXPECT_EQ(j["stages"]["FAILED_COMPILE"], 0);
  EXPECT_EQ(j["stages"]["FAILED_SETUP"], 0);
  EXPECT_EQ(j["stages"]["NO_DEVICE_OP"], 0);
  EXPECT_EQ(j["stages"].size(), static_cast<std::size_t>(kLastStage) + 1);

  const auto& pr = j["pass_rate"];
  EXPECT_DOUBLE_EQ(pr["overall"].get<double>(), 0.5);  // 4 / (4 + 2 failed + 1 error + 1 xpassed)
  EXPECT_DOUBLE_EQ(pr["per_model"]["llama"]["pass_rate"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(pr["per_model"]["granite"]["pass_rate"].get<double>(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(pr["per_op"]["torch.add"]["pass_rate"].get<double>(), 1.0);
  EXPECT_EQ(pr["per_op"]["torch.add"]["passed"], 3);
  EXPECT_TRUE(pr["per_op"]["torch.nn.functional.silu"]["pass_rate"].is_null());  // only an xfail
  EXPECT_DOUBLE_EQ(pr["per_dtype"]["fp16"]["pass_rate"].get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(pr["per_dtype"]["fp32"]["pass_rate"].get<double>(), 1.0 / 3.0);
  EXPECT_TRUE(pr["per_dtype"]["bf16"]["pass_rate"].is_null());
}

// An enabled op that only ran inside other cases' calls (a decomposition's inner op, the copies every case makes)
// is exercised: what reached the device counts, not only the op a case names.
TEST(Metrics, EnabledOpsReachedOnTheDeviceAreExercised) {
  RunReport report = sample_report();
  for (auto& rec : report.cases)
    if (rec.id == "llama::mul") rec.result.device_ops.push_back({"aten::sin", DeviceOpVia::Fallback, 1, true});
  const auto e = nlohmann::json::parse(written_metrics_json(report))["coverage"]["enabled_ops"];
  EXPECT_EQ(e["exercised"], 6);
  EXPECT_EQ(e["untouched_ops"], (nlohmann::json{"aten::cos"}));
}

// Each exercised enabled op lists the occurrences that reached it by source, with their pass rate; an occurrence
// counts for every enabled op it reached (linear's t and addmm), a served duplicate as its own occurrence, and a
// case's source is its `opinfo`/`trace` mark, else a v2 entry (upstream_test), else a manifest.
TEST(Metrics, EnabledOpsGiveCasesBySourceAndPassRate) {
  RunReport report = sample_report();
  for (auto& rec : report.cases)
    if (rec.id == "llama::mul") rec.labels.push_back({find_case_field("upstream_test"), "test_mul_0_float32"});  // v2
  const auto j = nlohmann::json::parse(written_metrics_json(report));
  const auto& per_op = j["coverage"]["enabled_ops"]["per_op"];
  const auto sources = [](int manifests, int v2, int traces, int opinfo) {
    return nlohmann::json{{"manifests", manifests}, {"v2_configs", v2}, {"traces", traces}, {"opinfo", opinfo}};
  };
  ASSERT_EQ(per_op.size(), 5u);  // the exercised ones; sin and cos are untouched
  EXPECT_EQ(per_op["aten::add.Tensor"]["cases"], 3);
  EXPECT_EQ(per_op["aten::add.Tensor"]["sources"], sources(3, 0, 0, 0));
  EXPECT_DOUBLE_EQ(per_op["aten::add.Tensor"]["pass_rate"].get<double>(), 1.0);
  EXPECT_EQ(per_op["aten::mul.Tensor"]["sources"], sources(0, 1, 0, 0));
  EXPECT_DOUBLE_EQ(per_op["aten::mul.Tensor"]["pass_rate"].get<double>(), 0.0);
  EXPECT_EQ(per_op["aten::mul.Tensor"]["outcomes"]["failed"], 1);
  for (const char* op : {"aten::t", "aten::addmm"}) {
    EXPECT_EQ(per_op[op]["cases"], 1) << op;
    EXPECT_EQ(per_op[op]["sources"], sources(0, 0, 0, 1)) << op;
    EXPECT_DOUBLE_EQ(per_op[op]["pass_rate"].get<double>(), 1.0) << op;
  }
  EXPECT_EQ(per_op["neg"]["sources"], sources(0, 0, 1, 0));
  EXPECT_DOUBLE_EQ(per_op["neg"]["pass_rate"].get<double>(), 0.0);  // a strict xpass counts against the rate
  EXPECT_EQ(j["coverage"]["sources"], sources(7, 1, 1, 1));
  EXPECT_EQ(j["totals"]["total"], 10);
}

TEST(Metrics, DedupeCoverageAndTime) {
  const auto j = nlohmann::json::parse(written_metrics_json(sample_report()));
  const auto& d = j["dedupe"];
  EXPECT_EQ(d["occurrences"], 10);
  EXPECT_EQ(d["unique"], 8);
  EXPECT_EQ(d["duplicates_served"], 2);
  EXPECT_DOUBLE_EQ(d["ratio"].get<double>(), 1.25);
  EXPECT_EQ(d["per_model"]["llama"]["occurrences"], 7);
  EXPECT_EQ(d["per_model"]["llama"]["duplicates_served"], 1);
  EXPECT_EQ(d["per_model"]["granite"]["unique"], 2);

  const auto& c = j["coverage"];
  EXPECT_EQ(c["ops"], 8);
  EXPECT_EQ(c["signatures"], 8);
  EXPECT_EQ(c["per_model"]["llama"]["ops"], 6);
  EXPECT_EQ(c["per_model"]["llama"]["signatures"], 6);
  EXPECT_EQ(c["per_model"]["granite"]["ops"], 3);
  EXPECT_EQ(c["resolved_ops"].size(), 7u);
  const auto& e = c["enabled_ops"];
  EXPECT_EQ(e["enabled"], 7);
  EXPECT_EQ(e["exercised"], 5);
  EXPECT_NEAR(e["percent"].get<double>(), 500.0 / 7.0, 1e-9);
  EXPECT_EQ(e["untouched_ops"], (nlohmann::json{"aten::cos", "aten::sin"}));
  EXPECT_EQ(e["exercised_ops"], (nlohmann::json{"aten::add.Tensor", "aten::addmm", "aten::mul.Tensor", "aten::t", "neg"}));

  EXPECT_EQ(c["device_ops"], (nlohmann::json{"aten::_copy_from", "aten::copy_", "aten::mul.Tensor"}));

  const auto& t = j["time"];
  EXPECT_DOUBLE_EQ(t["totals"]["materialize_ms"].get<double>(), 7.5);
  EXPECT_DOUBLE_EQ(t["totals"]["reference_ms"].get<double>(), 18);
  EXPECT_DOUBLE_EQ(t["totals"]["device_ms"].get<double>(), 17);
  EXPECT_DOUBLE_EQ(t["totals"]["compare_ms"].get<double>(), 6);
  std::vector<std::string> slow;
  for (const auto& s : t["slowest"]) slow.push_back(s["id"]);
  EXPECT_EQ(slow, (std::vector<std::string>{"granite::linear", "llama::mul", "llama::add_f16", "llama::silu", "llama::neg",
                                            "granite::cat", "llama::softmax", "llama::sdpa"}));
  EXPECT_DOUBLE_EQ(t["slowest"][0]["total_ms"].get<double>(), 20);
  // reference/device: add 2, mul 0.25, silu 1, linear 2 -> geometric mean 1
  EXPECT_NEAR(t["device_vs_reference"]["speedup_geomean"].get<double>(), 1.0, 1e-12);
  EXPECT_EQ(t["device_vs_reference"]["cases"], 4);
}

TEST(Metrics, SlowestListStopsAtTwenty) {
  RunReport rep;
  for (int i = 0; i < 30; ++i) {
    CaseRecord r;
    r.id = "m::c" + std::to_string(i);
    r.model = "m";
    r.result.device_ms = i;
    rep.cases.push_back(r);
  }
  const auto st = compute_stats(rep);
  ASSERT_EQ(st.time.slowest.size(), 20u);
  EXPECT_EQ(rep.cases[st.time.slowest.front()].id, "m::c29");
  EXPECT_EQ(rep.cases[st.time.slowest.back()].id, "m::c10");
}

TEST(Metrics, RoundTripsThroughReadMetrics) {
  TempDir dir;
  const auto path = dir.file("metrics.json");
  const RunReport orig = sample_report();
  write_metrics_json(orig, path);
  const RunReport back = read_metrics(path);
  EXPECT_EQ(written_metrics_json(back), written_metrics_json(orig));
  ASSERT_EQ(back.cases.size(), orig.cases.size());
  const auto& mul = find_case(back, "llama::mul");
  EXPECT_EQ(mul.result.message, find_case(orig, "llama::mul").result.message);
  EXPECT_EQ(mul.result.captured_stderr, find_case(orig, "llama::mul").result.captured_stderr);  // ESC kept exactly
  EXPECT_TRUE(std::isinf(*mul.result.figures.max_rel_diff));
  EXPECT_TRUE(std::isnan(*mul.result.figures.pcc));
  EXPECT_EQ(mul.result.figures.mismatched, 3);
  EXPECT_EQ(mul.result.input_digests.size(), 2u);
  EXPECT_EQ(find_case(back, "llama::add_f16").marks, (std::vector<std::string>{"smoke", "elementwise"}));
  EXPECT_EQ(find_case(back, "granite::add").deduplicated_from, "llama::add_f16");
  EXPECT_FALSE(find_case(back, "llama::softmax").result.figures.pcc.has_value());
  EXPECT_EQ(find_case(back, "llama::neg").outcome, Outcome::XPassed);
  EXPECT_EQ(back.info.manifests, orig.info.manifests);
  EXPECT_EQ(back.info.enabled_ops, orig.info.enabled_ops);
  EXPECT_EQ(back.info.argv, orig.info.argv);
  EXPECT_EQ(back.info.duration_s, orig.info.duration_s);
}

TEST(Metrics, WorkerStartsAndTheCasesWallTimeRoundTrip) {
  TempDir dir;
  const auto path = dir.file("metrics.json");
  RunReport orig = sample_report();
  note_worker_starts(orig.info, {0.5, 1.5});
  orig.info.cases_wall_s = 12.25;
  write_metrics_json(orig, path);
  const RunReport back = read_metrics(path);
  EXPECT_EQ(back.info.workers_started, 2);
  EXPECT_DOUBLE_EQ(back.info.worker_start_mean_s, 1.0);
  EXPECT_DOUBLE_EQ(back.info.worker_start_max_s, 1.5);
  EXPECT_DOUBLE_EQ(back.info.cases_wall_s, 12.25);
}

TEST(Metrics, TheDeviceChoiceRoundTrips) {
  TempDir dir;
  const auto path = dir.file("metrics.json");
  RunReport orig = sample_report();
  orig.info.device_choice = {"auto", "loopback", "opcheck's stand-in, as no backend was found", true,
                             {"device library (--device-lib, OPCHECK_DEVICE_LIB): none"}};
  write_metrics_json(orig, path);
  const RunReport back = read_metrics(path);
  EXPECT_EQ(back.info.device_choice.asked, "auto");
  EXPECT_EQ(back.info.device_choice.chosen, "loopback");
  EXPECT_EQ(back.info.device_choice.why, orig.info.device_choice.why);
  EXPECT_TRUE(back.info.device_choice.stand_in);
  EXPECT_EQ(back.info.device_choice.searched, orig.info.device_choice.searched);
}

TEST(Metrics, InvalidUtf8IsShownNotDropped) {
  RunReport rep = sample_report();
  find_case(rep, "llama::mul").result.captured_stderr = "bad \xff\xfe bytes";
  const auto back = parse_metrics(written_metrics_json(rep), "m.json");
  EXPECT_EQ(find_case(back, "llama::mul").result.captured_stderr, "bad \\xff\\xfe bytes");
}

TEST(Metrics, ReadErrorsAreLocated) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    try {
      parse_metrics(text, "shard1.json");
      ADD_FAILURE() << "expected ReportError for " << needle;
    } catch (const ReportError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("shard1.json: error: ", 0), 0u) << e.what();
    }
  };
  expect_error("{\"format\": ", "not a valid JSON file");
  expect_error("{\"cases\": []}", "not an opcheck metrics file");
  auto j = nlohmann::json::parse(written_metrics_json(sample_report()));
  j["cases"][2]["outcome"] = "pased";
  expect_error(j.dump(), "/cases/2/outcome: unknown outcome \"pased\"");
  j = nlohmann::json::parse(written_metrics_json(sample_report()));
  j["cases"][4].erase("stage");
  expect_error(j.dump(), "/cases/4: missing field \"stage\"");
  j = nlohmann::json::parse(written_metrics_json(sample_report()));
  j["cases"][1]["index"] = 1LL << 40;
  expect_error(j.dump(), "/cases/1/index: value 1099511627776 is out of range");
  j = nlohmann::json::parse(written_metrics_json(sample_report()));
  j["cases"][0]["figures"]["pcc"] = "high";
  expect_error(j.dump(), "/cases/0/figures/pcc: expected a number");
  j = nlohmann::json::parse(written_metrics_json(sample_report()));
  j["run"]["manifests"]["a/b.yaml"] = 3;
  expect_error(j.dump(), "/run/manifests/a~1b.yaml: expected a sha256 string");
  j = nlohmann::json::parse(written_metrics_json(sample_report()));
  j["version"] = 99;
  expect_error(j.dump(), "layout version 99 is not supported");
  try {
    read_metrics("/nonexistent/metrics.json");
    ADD_FAILURE();
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/metrics.json: error: cannot read"), std::string::npos);
  }
}

// ---------------------------------------------------------------- merge

namespace {
// Splits the sample run the way `--shard I/3` would: round robin over the selection.
std::vector<RunReport> shard_sample(const RunReport& whole) {
  const char* starts[] = {"2026-01-02T03:04:05Z", "2026-01-02T03:04:10Z", "2026-01-02T03:04:06Z"};
  const double durations[] = {10, 25, 5};  // the last shard ends 30 s after the first one starts
  std::vector<RunReport> shards(3);
  for (int s = 0; s < 3; ++s) {
    shards[s].info = whole.info;
    shards[s].info.shard = std::to_string(s) + "/3";  // 0-based, as --shard takes it
    shards[s].info.argv.push_back("--shard");
    shards[s].info.argv.push_back(shards[s].info.shard);
    // Each shard writes its own reports; the merged run's arguments name none of them (not the first shard's).
    shards[s].info.argv.push_back("--metrics-json");
    shards[s].info.argv.push_back("shard-" + std::to_string(s) + ".json");
    shards[s].info.argv.push_back("--junit-xml=shard-" + std::to_string(s) + ".xml");
    shards[s].info.started_at = starts[s];
    shards[s].info.duration_s = durations[s];
  }
  for (const auto& c : whole.cases) shards[static_cast<std::size_t>(c.index) % 3].cases.push_back(c);
  return shards;
}
}  // namespace

TEST(Merge, ThreeShardsMakeTheWholeRun) {
  const RunReport whole = sample_report();
  // Shards passed in any order give the same result.
  auto shards = shard_sample(whole);
  std::swap(shards[0], shards[2]);
  const RunReport merged = merge_reports(shards);
  EXPECT_EQ(merged.info.shard, "");
  EXPECT_EQ(merged.info.started_at, "2026-01-02T03:04:05Z");
  EXPECT_DOUBLE_EQ(merged.info.duration_s, 30);
  EXPECT_DOUBLE_EQ(merged.info.shard_longest_s, 25);  // the split's wall time when the shards run side by side
  EXPECT_DOUBLE_EQ(merged.info.shard_sum_s, 40);      // and its machine time
  EXPECT_EQ(merged.info.shard_count, 3);
  EXPECT_EQ(merged.info.argv, whole.info.argv);
  RunReport same = merged;
  same.info.shard_count = 0;  // what only a merge records
  EXPECT_EQ(written_metrics_json(same), written_metrics_json(whole));
  EXPECT_EQ(written_junit_xml(merged), written_junit_xml(whole));
  // The enabled ops' cases by source and pass rate add up over the shards.
  const auto per_op = [](const RunReport& r) {
    return nlohmann::json::parse(written_metrics_json(r))["coverage"]["enabled_ops"]["per_op"];
  };
  EXPECT_EQ(per_op(merged).size(), 5u);
  EXPECT_EQ(per_op(merged), per_op(whole));
  EXPECT_NE(written_metrics_json(merged).find("\"shard_longest_s\": 25"), std::string::npos);
}

TEST(Merge, PartialShardSetIsRefusedUnlessAllowedAndThenSaysWhichShards) {
  auto shards = shard_sample(sample_report());
  shards.pop_back();
  try {
    merge_reports(shards);
    FAIL();
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("incomplete shard set: 2 of 3 shards (0/3, 1/3); missing 2/3"),
              std::string::npos)
        << e.what();
  }
  std::string partial;
  const RunReport merged = merge_reports(shards, /*allow_partial=*/true, &partial);
  EXPECT_EQ(merged.info.shard, "0/3,1/3");
  EXPECT_EQ(partial, "partial merge: 2 of 3 shards (0/3, 1/3); missing 2/3, whose occurrences are not in these reports");
  ASSERT_FALSE(merged.info.warnings.empty());
  EXPECT_EQ(merged.info.warnings.front(), partial);  // the files say it, not only the console
  EXPECT_EQ(merged.cases.size(), 7u);  // indexes 0,1,3,4,6,7,9
}

TEST(Merge, MixedSplitsAndRepeatedShardsAreRefused) {
  auto shards = shard_sample(sample_report());
  auto mixed = shards;
  mixed[2].info.shard = "1/2";
  EXPECT_THROW(merge_reports(mixed, true), ReportError);
  auto twice = shards;
  twice[2].info.shard = "0/3";
  twice[2].cases.clear();
  EXPECT_THROW(merge_reports(twice, true), ReportError);
  auto whole_and_shard = shards;
  whole_and_shard[2].info.shard = "";
  EXPECT_THROW(merge_reports(whole_and_shard, true), ReportError);
}

TEST(Merge, WithoutIndexesOrdersByFileAndLine) {
  auto shards = shard_sample(sample_report());
  for (auto& s : shards)
    for (auto& c : s.cases) c.index = -1;
  const RunReport merged = merge_reports(shards);
  ASSERT_EQ(merged.cases.size(), 10u);
  EXPECT_EQ(merged.cases.front().id, "granite::add");  // manifests/granite.yaml sorts first
  EXPECT_EQ(merged.cases.back().id, "llama::neg");
}

TEST(Merge, RejectsDuplicateIdsAndMismatchedRuns) {
  auto shards = shard_sample(sample_report());
  auto dup = shards;
  dup[2].cases.push_back(dup[0].cases[0]);
  try {
    merge_reports(dup);
    FAIL();
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("case llama::add_f16 is in shard 1 and in shard 3"), std::string::npos) << e.what();
  }
  auto other_device = shards;
  for (auto& s : other_device) s.info.identity = {{"device name", "loopback"}};
  other_device[1].info.identity = {{"device name", "spyre"}};
  try {
    merge_reports(other_device);
    FAIL();
  } catch (const ReportError& e) {  // the runner's identity comparison, naming the part
    EXPECT_NE(std::string(e.what()).find("shard 2 ran with device name \"spyre\" but shard 1 with \"loopback\""),
              std::string::npos)
        << e.what();
  }
  auto other_manifest = shards;
  other_manifest[2].info.manifests["manifests/llama.yaml"] = std::string(64, 'f');
  try {
    merge_reports(other_manifest);
    FAIL();
  } catch (const ReportError& e) {
    // Named by the shard (its file, when the files are given) and the manifest whose digest differs.
    EXPECT_EQ(std::string(e.what()).rfind("shard 3: error: /run/manifests: shard 3 read manifests/llama.yaml with sha256 "
                                          "ffff", 0),
              0u)
        << e.what();
  }
}

// ---------------------------------------------------------------- diff

TEST(Diff, CategoriesAndExitCode) {
  const RunReport old_run = sample_report();
  RunReport new_run = sample_report();
  auto& add = find_case(new_run, "llama::add_f16");  // passed -> failed: regression
  add.outcome = Outcome::Failed;
  add.result.stage = Stage::INCORRECT_RESULT;
  add.result.message = "Tensor-likes are not close!\nmore";
  auto& mul = find_case(new_run, "llama::mul");  // failing at another stage
  mul.result.stage = Stage::CRASHED;
  auto& sdpa = find_case(new_run, "llama::sdpa");  // skipped -> error: regression
  sdpa.outcome = Outcome::Error;
  sdpa.result.stage = Stage::FAILED_INPUT;
  find_case(new_run, "granite::cat").outcome = Outcome::Passed;  // fixed
  find_case(new_run, "granite::cat").result.stage = Stage::PASSED;
  find_case(new_run, "llama::silu").outcome = Outcome::XPassed;  // xfail now passes: fixed, as the run forgave it
  new_run.info.policy.xpass_ok = true;
  find_case(new_run, "llama::neg").outcome = Outcome::Skipped;   // other change
  new_run.cases.erase(new_run.cases.begin() + 8);                // granite::linear removed
  CaseRecord mm = old_run.cases[8];
  mm.id = "granite::mm";
  mm.name = "mm";
  mm.op = "torch.mm";
  new_run.cases.push_back(mm);  // added

  const DiffResult d = diff_reports(old_run, new_run);
  auto ids = [](const std::vector<CaseChange>& v) {
    std::vector<std::string> out;
    for (const auto& c : v) out.push_back(c.id);
    return out;
  };
  EXPECT_EQ(ids(d.regressions), (std::vector<std::string>{"llama::add_f16", "llama::sdpa"}));
  EXPECT_EQ(ids(d.stage_changes), (std::vector<std::string>{"llama::mul"}));
  EXPECT_EQ(ids(d.fixed), (std::vector<std::string>{"llama::silu", "granite::cat"}));
  EXPECT_EQ(ids(d.added), (std::vector<std::string>{"granite::mm"}));
  EXPECT_EQ(ids(d.removed), (std::vector<std::string>{"granite::linear"}));
  EXPECT_EQ(ids(d.other), (std::vector<std::string>{"llama::neg"}));
  EXPECT_EQ(d.regressions[0].message, "Tensor-likes are not close!");
  EXPECT_EQ(diff_exit_code(d), 2);  // an added and a removed case: different case sets
  EXPECT_EQ(diff_exit_code(d, DiffAllowed{/*different_cases=*/true}), 1);
  // Without --xpass-ok the unexpected pass failed the new run (strict xfail): diff calls it a regression, as the run's
  // exit code did.
  new_run.info.policy.xpass_ok = false;
  const DiffResult strict = diff_reports(old_run, new_run);
  EXPECT_EQ(ids(strict.regressions), (std::vector<std::string>{"llama::add_f16", "llama::sdpa", "llama::silu"}));
  EXPECT_EQ(ids(strict.fixed), (std::vector<std::string>{"granite::cat"}));

  const std::string text = render_diff(d);
  EXPECT_EQ(text.rfind("opcheck diff: the runs hold different case sets: 1 only in the old run, 1 only in the new, "
                       "9 in both",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("opcheck diff: 3 regressions, 2 fixed, 1 added, 1 removed, 1 other change (10 -> 10 cases)"),
            std::string::npos) << text;
  EXPECT_NE(text.find("  llama::add_f16: passed -> failed [INCORRECT_RESULT] - Tensor-likes are not close!\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("  llama::mul: failed [INCORRECT_RESULT] -> failed [CRASHED]"), std::string::npos) << text;
  EXPECT_NE(text.find("Pass rate: 50.0% -> "), std::string::npos) << text;
  EXPECT_NE(text.find("Pass rate by op:\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  torch.cat: 0.0% -> 100.0% (+100.0 points)\n"), std::string::npos) << text;

  // Per-model deltas: granite lost linear (passed) and gained mm (passed), and cat now passes.
  for (const auto& m : d.per_model)
    if (m.name == "granite") {
      ASSERT_TRUE(m.delta().has_value());
      EXPECT_NEAR(*m.delta(), 1.0 - 2.0 / 3.0, 1e-12);
    }
}

TEST(Diff, FixesOnlyExitZeroAndIdenticalRunsAreQuiet) {
  const RunReport old_run = sample_report();
  RunReport new_run = sample_report();
  find_case(new_run, "granite::cat").outcome = Outcome::Passed;
  find_case(new_run, "granite::cat").result.stage = Stage::PASSED;
  const DiffResult d = diff_reports(old_run, new_run);
  EXPECT_EQ(d.fixed.size(), 1u);
  EXPECT_EQ(diff_exit_code(d), 0);

  const DiffResult same = diff_reports(old_run, old_run);
  EXPECT_EQ(diff_exit_code(same), 0);
  EXPECT_TRUE(same.regressions.empty() && same.fixed.empty() && same.added.empty() && same.removed.empty() &&
              same.other.empty() && same.stage_changes.empty());
  EXPECT_EQ(render_diff(same).find("Pass rate by"), std::string::npos);
}

TEST(Diff, RemovedCasesAndLongMessagesAreOneShortLineEach) {
  RunReport old_run = sample_report();
  RunReport new_run = sample_report();
  const std::string wall = "Could not run 'aten::cos.out' with arguments from the 'opencl' backend. " +
                           std::string(400, 'x') + " for possible resolu";
  for (auto* run : {&old_run, &new_run}) {
    CaseRecord& gone = find_case(*run, "granite::linear");
    gone.outcome = Outcome::NotSupported;
    gone.result.stage = Stage::NOT_SUPPORTED;
    gone.result.message = wall + "\n\nthe dispatcher's account";
  }
  find_case(new_run, "granite::cat").result.message = wall;  // still failing, its line is cut
  find_case(new_run, "granite::cat").result.stage = Stage::CRASHED;
  new_run.cases.erase(std::find_if(new_run.cases.begin(), new_run.cases.end(),
                                   [](const CaseRecord& c) { return c.id == "granite::linear"; }));
  const std::string text = render_diff(diff_reports(old_run, new_run), DiffAllowed{true});
  EXPECT_NE(text.find("Removed (1):\n  granite::linear: not_supported -> absent\n"), std::string::npos) << text;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 220u) << line;
  EXPECT_EQ(text.find("possible resolu"), std::string::npos) << text;
}

TEST(Diff, DuplicateIdIsAnError) {
  RunReport r = sample_report();
  r.cases.push_back(r.cases[0]);
  EXPECT_THROW(diff_reports(sample_report(), r), ReportError);
}

// ---------------------------------------------------------------- console summary

namespace {
RunReport run_with(std::initializer_list<std::pair<Outcome, int>> counts, double seconds, std::int64_t deselected = 0) {
  RunReport r;
  r.info.duration_s = seconds;
  r.info.deselected = deselected;
  int n = 0;
  for (auto [o, k] : counts)
    for (int i = 0; i < k; ++i) {
      CaseRecord c;
      c.id = "m::c" + std::to_string(n++);
      c.outcome = o;
      r.cases.push_back(c);
    }
  return r;
}
}  // namespace

TEST(Summary, WordsOrderAndPluralsAsPytest) {
  // Each expected string is what pytest 7.2 prints for the same counts (see test/report/pytest_parity).
  EXPECT_EQ(summary_line(run_with({}, 0.004)), "no tests ran in 0.00s");
  EXPECT_EQ(summary_line(run_with({{Outcome::Passed, 1}}, 0.01)), "1 passed in 0.01s");
  EXPECT_EQ(summary_line(run_with({{Outcome::Passed, 1}, {Outcome::Failed, 2}, {Outcome::Skipped, 1}, {Outcome::XFailed, 1},
                                   {Outcome::XPassed, 1}, {Outcome::Error, 1}},
                                  0.02)),
            "2 failed, 1 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.02s");
  EXPECT_EQ(summary_line(run_with({{Outcome::Error, 2}}, 1.5)), "2 errors in 1.50s");
  EXPECT_EQ(summary_line(run_with({{Outcome::Passed, 3}}, 2, 4)), "3 passed, 4 deselected in 2.00s");
  EXPECT_EQ(summary_line(run_with({{Outcome::Passed, 3}}, 75.123)), "3 passed in 75.12s (0:01:15)");
  EXPECT_EQ(summary_line(run_with({{Outcome::Passed, 1}}, 90061.5)), "1 passed in 90061.50s (1 day, 1:01:01)");
}

TEST(Summary, ColoursAsPytestDoes) {
  // Copied from `pytest --color=yes` for the same counts (between its "=" rules).
  EXPECT_EQ(summary_line(run_with({{Outcome::Passed, 1}, {Outcome::Failed, 2}, {Outcome::Skipped, 1}, {Outcome::XFailed, 1},
                                   {Outcome::XPassed, 1}, {Outcome::Error, 1}},
                                  0.04),
                         true),
            "\x1b[31m\x1b[1m2 failed\x1b[0m, \x1b[32m1 passed\x1b[0m, \x1b[33m1 skipped\x1b[0m, \x1b[33m1 xfailed\x1b[0m, "
            "\x1b[33m1 xpassed\x1b[0m, \x1b[31m\x1b[1m1 error\x1b[0m\x1b[31m in 0.04s\x1b[0m");
  EXPECT_EQ(summary_line(run_with({{Outcome::Passed, 1}}, 0.001), true), "\x1b[32m\x1b[1m1 passed\x1b[0m\x1b[32m in 0.00s\x1b[0m");
  EXPECT_EQ(summary_line(run_with({}, 0.001, 1), true), "\x1b[33m\x1b[1m1 deselected\x1b[0m\x1b[33m in 0.00s\x1b[0m");
}

TEST(Summary, AutoNeverChoosesInSilence) {
  RunReport r = run_with({{Outcome::Passed, 3}}, 0.5);
  r.info.device_choice = {"auto", "loopback", "opcheck's stand-in, as no backend was found", true, {}};
  EXPECT_EQ(summary_line(r), "3 passed in 0.50s (--device auto chose loopback: opcheck's stand-in, as no backend was found)");
  r.info.device_choice = {"auto", "spyre", "the one installed torch.backends entry point x = s:_autoload", false, {}};
  EXPECT_EQ(summary_line(r), "3 passed in 0.50s (--device auto chose spyre: the one installed torch.backends entry "
                             "point x = s:_autoload)");
  // A device named by --device was no choice of opcheck's: the line is pytest's.
  r.info.device_choice = {"loopback", "loopback", "named by --device", false, {}};
  EXPECT_EQ(summary_line(r), "3 passed in 0.50s");
}

TEST(Summary, ADeviceThatDidNotStartListsItsCasesAsNotRun) {
  RunReport r = run_with({{Outcome::Error, 1}, {Outcome::Skipped, 74}}, 0);
  r.info.not_run = 74;
  r.info.stopped_by = "device";
  EXPECT_EQ(summary_line(r), "1 error, 74 not run (the device did not start) in 0.00s");
}

TEST(Summary, DurationsHeaderIsPytestsRule) {
  // pytest's TerminalWriter.sep("=", "slowest 3 durations") at fullwidth 80, and the same without a count.
  const RunReport rep = sample_report();
  const std::string three = durations_section(rep, 3);
  EXPECT_EQ(three.substr(0, three.find('\n')),
            "============================= slowest 3 durations ==============================");
  const std::string all = durations_section(rep, 0);
  EXPECT_EQ(all.substr(0, all.find('\n')),
            "============================== slowest durations ===============================");
}

TEST(Summary, ShortSummaryListsFailuresErrorsAndXpasses) {
  const std::string s = short_summary(sample_report(), "fE");
  EXPECT_EQ(s,
            "=========================== short test summary info ============================\n"
            "FAILED llama::mul [INCORRECT_RESULT] - Tensor-likes are not close!\n"
            "XPASS llama::neg [PASSED] - [XPASS(strict)] flaky neg\n"
            "FAILED granite::cat [CRASHED] - worker crashed (signal 11: Segmentation fault)\n"
            "ERROR llama::softmax [FAILED_INPUT] - input 0: cannot build tensor: shape [2, -1] has a negative size\n");
  EXPECT_EQ(short_summary(run_with({{Outcome::Passed, 2}}, 1), "fE"), "");
}

TEST(Summary, ReportCharsExpandAsPytestExpandsThem) {
  std::string out, error;
  ASSERT_TRUE(parse_report_chars("fE", out, error));
  EXPECT_EQ(out, "fE");
  ASSERT_TRUE(parse_report_chars("A", out, error));
  EXPECT_EQ(out, "PpsxXEf");
  ASSERT_TRUE(parse_report_chars("a", out, error));
  EXPECT_EQ(out, "sxXEf");
  ASSERT_TRUE(parse_report_chars("fEN", out, error));
  EXPECT_EQ(out, "");
  ASSERT_TRUE(parse_report_chars("Ffs", out, error));  // F and S are pytest's old spellings of f and s
  EXPECT_EQ(out, "fs");
  EXPECT_FALSE(parse_report_chars("fZ", out, error));
  EXPECT_NE(error.find("unknown report char 'Z'"), std::string::npos) << error;
  EXPECT_NE(error.find("Fix:"), std::string::npos) << error;
}

TEST(Summary, ShortSummaryForEveryChar) {
  const std::string s = short_summary(sample_report(), "sxXp");
  EXPECT_EQ(s,
            "=========================== short test summary info ============================\n"
            "SKIPPED llama::sdpa - not supported on this device\n"
            "XFAIL llama::silu - known silu rounding bug\n"
            "PASSED llama::add_f16\n"
            "PASSED llama::add_f16_again (same as llama::add_f16)\n"
            "PASSED granite::add (same as llama::add_f16)\n"
            "PASSED granite::linear\n");
}

TEST(Summary, ShortSummaryKeepsTheLinesAColonIntroduces) {
  RunReport rep = sample_report();
  rep.cases[2].result.message =
      "arguments (Tensor, dimm=int) do not bind to any overload of aten::softmax:\n"
      "  aten::softmax.int: got an unexpected keyword argument 'dimm'\n"
      "  aten::softmax.int_out: got an unexpected keyword argument 'dimm'\n";
  const std::string s = short_summary(rep, "f");
  EXPECT_NE(s.find("FAILED llama::mul [INCORRECT_RESULT] - arguments (Tensor, dimm=int) do not bind to any overload of "
                   "aten::softmax: aten::softmax.int: got an unexpected keyword argument 'dimm'; "
                   "aten::softmax.int_out: got an unexpected keyword argument 'dimm'\n"),
            std::string::npos)
      << s;
}

TEST(Summary, FailureDetailsShortLongAndNo) {
  RunReport rep = sample_report();
  rep.cases.push_back(rep.cases[2]);  // a second occurrence of the failing mul, served by the first
  rep.cases.back().id = "granite::mul";
  rep.cases.back().deduplicated_from = "llama::mul";
  FailureReportOptions o;
  o.repro_command = [](const CaseRecord& r) { return "opcheck repro " + r.id; };
  const std::string short_text = failure_details(rep, o);
  // Errors first, then failures, each titled with its id.
  const auto errors = short_text.find("==================================== ERRORS ====================================\n");
  const auto failures = short_text.find("=================================== FAILURES ===================================\n");
  ASSERT_NE(errors, std::string::npos) << short_text;
  ASSERT_NE(failures, std::string::npos) << short_text;
  EXPECT_LT(errors, failures);
  EXPECT_NE(short_text.find("__________________________________ llama::mul __________________________________\n"
                            "manifests/llama.yaml:24: torch.mul -> aten::mul.Tensor [INCORRECT_RESULT] fp32\n"
                            "Tensor-likes are not close!\n"
                            "Mismatched elements: 3 / 6 (50.0%)\n"
                            "Greatest absolute difference: 0.5\n"
                            "rerun: opcheck repro llama::mul\n"),
            std::string::npos)
      << short_text;
  EXPECT_NE(short_text.find("[XPASS(strict)] expected to fail (flaky neg), but passed\n"), std::string::npos);
  EXPECT_NE(short_text.find("the same call as llama::mul: its failure is shown above\n"), std::string::npos);
  EXPECT_EQ(short_text.find("captured stderr"), std::string::npos);
  EXPECT_EQ(short_text.find("llama::silu"), std::string::npos);  // an expected failure does not fail the run

  o.style = TracebackStyle::Long;
  const std::string long_text = failure_details(rep, o);
  EXPECT_NE(long_text.find("figures: mismatched 3 / 6, max abs diff 0.5, max rel diff inf, pcc nan\n"), std::string::npos)
      << long_text;
  EXPECT_NE(long_text.find("times: materialize 1.00 ms, reference 2.00 ms, device 8.00 ms, compare 1.00 ms\n"),
            std::string::npos);
  // Captured stderr is shown with its control characters made visible.
  EXPECT_NE(long_text.find("captured stderr"), std::string::npos);
  EXPECT_NE(long_text.find("\\x1b[31mred"), std::string::npos) << long_text;
  EXPECT_EQ(long_text.find('\x1b'), std::string::npos);

  o.style = TracebackStyle::No;
  EXPECT_EQ(failure_details(rep, o), "");
}

TEST(Summary, ShortStyleCutsLongMessagesAndSaysHowMuch) {
  RunReport rep = sample_report();
  std::string message = "first";
  for (int i = 0; i < 40; ++i) message += "\nline " + std::to_string(i);
  rep.cases[2].result.message = message;
  FailureReportOptions o;
  const std::string text = failure_details(rep, o);
  EXPECT_NE(text.find("line 13\n... 26 more lines (--tb=long shows them)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("line 14\n"), std::string::npos) << text;
  o.style = TracebackStyle::Long;
  EXPECT_NE(failure_details(rep, o).find("line 39\n"), std::string::npos);
}

// ---------------------------------------------------------------- journal

TEST(Journal, ToleratesTruncatedLastLineAndResumes) {
  TempDir dir;
  const auto path = dir.file("run.journal");
  const RunReport rep = sample_report();
  {
    JournalWriter w(path, &rep.info);
    for (int i = 0; i < 3; ++i) w.append(rep.cases[static_cast<std::size_t>(i)]);
  }
  // A SIGKILL in the middle of a write leaves half a line behind.
  const std::string half = case_record_json_line(rep.cases[3]).substr(0, 40);
  { std::ofstream(path, std::ios::app) << half; }

  Journal j = read_journal(path);
  EXPECT_TRUE(j.truncated_tail);
  EXPECT_FALSE(j.diagnostics.has_errors());
  ASSERT_TRUE(j.info.has_value());
  EXPECT_EQ(j.info->device_name, "loopback");
  ASSERT_EQ(j.records.size(), 3u);
  EXPECT_EQ(j.records[2].id, "llama::mul");
  EXPECT_EQ(j.records[2].result.captured_stderr, rep.cases[2].result.captured_stderr);

  // Resuming appends after the last complete line; the header is not written twice.
  {
    JournalWriter w(path, &rep.info);
    w.append(rep.cases[3]);
    w.append(rep.cases[4]);
    w.close();
  }
  j = read_journal(path);
  EXPECT_FALSE(j.truncated_tail);
  EXPECT_FALSE(j.diagnostics.has_errors());
  ASSERT_EQ(j.records.size(), 5u);
  EXPECT_EQ(j.records[3].id, "llama::softmax");
  EXPECT_EQ(j.records[4].id, "llama::sdpa");
  std::size_t headers = 0;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) headers += line.find("\"format\":\"opcheck-journal\"") != std::string::npos;
  EXPECT_EQ(headers, 1u);
}

TEST(Journal, CorruptMiddleLineIsReportedWithItsLineAndTheRestKept) {
  TempDir dir;
  const auto path = dir.file("run.journal");
  const RunReport rep = sample_report();
  { JournalWriter(path, &rep.info).append(rep.cases[0]); }
  { std::ofstream(path, std::ios::app) << "{not json\n{\"id\": \"x\"}\n"; }
  { JournalWriter(path, &rep.info).append(rep.cases[1]); }
  const Journal j = read_journal(path);
  EXPECT_FALSE(j.truncated_tail);
  ASSERT_TRUE(j.info.has_value());
  ASSERT_EQ(j.records.size(), 2u);
  EXPECT_EQ(j.records[1].id, rep.cases[1].id);
  EXPECT_TRUE(j.unbound_lines.empty());
  ASSERT_EQ(j.diagnostics.error_count(), 2u);
  EXPECT_EQ(j.diagnostics.items[0].loc.line, 3);
  EXPECT_EQ(j.diagnostics.items[1].loc.line, 4);
  EXPECT_NE(j.diagnostics.items[1].format().find(path + ":4: error: unreadable journal record: /: missing field \"index\""),
            std::string::npos)
      << j.diagnostics.items[1].format();
}

namespace {

// Each line of a file, without its newline.
std::vector<std::string> file_lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::trunc);
  for (const auto& l : lines) out << l << "\n";
}

}  // namespace

TEST(Journal, AnEditedRecordOrOneMovedFromAnotherJournalFailsItsBinding) {
  TempDir dir;
  const auto path = dir.file("run.journal");
  RunReport rep = sample_report();
  {
    JournalWriter w(path, &rep.info);
    for (int i = 0; i < 3; ++i) w.append(rep.cases[static_cast<std::size_t>(i)]);
  }
  std::vector<std::string> lines = file_lines(path);
  ASSERT_EQ(lines.size(), 4u);
  ASSERT_EQ(read_journal(path).records.size(), 3u);  // as written, every record proves itself
  // A hand edit of one record's verdict (line 2).
  const std::string outcome = std::string("\"outcome\":\"") + outcome_name(rep.cases[0].outcome) + "\"";
  ASSERT_NE(lines[1].find(outcome), std::string::npos) << lines[1];
  ASSERT_NE(rep.cases[0].outcome, Outcome::Failed);
  lines[1].replace(lines[1].find(outcome), outcome.size(), "\"outcome\":\"failed\"");
  // A record of the same case, moved from a journal of another run (another header).
  const auto other = dir.file("other.journal");
  rep.info.started_at = "2020-01-01T00:00:00Z";
  { JournalWriter(other, &rep.info).append(rep.cases[3]); }
  lines.push_back(file_lines(other)[1]);
  write_lines(path, lines);
  const Journal j = read_journal(path);
  EXPECT_FALSE(j.diagnostics.has_errors());
  ASSERT_EQ(j.records.size(), 2u);
  EXPECT_EQ(j.records[0].id, rep.cases[1].id);
  EXPECT_EQ(j.records[1].id, rep.cases[2].id);
  EXPECT_EQ(j.unbound_lines, (std::vector<int>{2, 5}));
  // A record without its binding (as an edit that drops it leaves it) is not served either.
  lines = file_lines(other);
  lines[1] = lines[1].substr(0, lines[1].rfind(",\"binding\":")) + "}";
  write_lines(other, lines);
  EXPECT_EQ(read_journal(other).unbound_lines, (std::vector<int>{2}));
  EXPECT_TRUE(read_journal(other).records.empty());
}

TEST(Journal, LinesReachTheFileAtFlushAndEveryLineAtClose) {
  TempDir dir;
  const auto path = dir.file("run.journal");
  const RunReport rep = sample_report();
  JournalWriter w(path, &rep.info);
  EXPECT_TRUE(read_journal(path).info.has_value());  // the header is written at once
  w.append(rep.cases[0]);
  w.append(rep.cases[1]);
  EXPECT_EQ(read_journal(path).records.size(), 0u);  // collected, not yet written
  w.flush();
  EXPECT_EQ(read_journal(path).records.size(), 2u);
  w.append(rep.cases[2]);
  w.close();
  const Journal j = read_journal(path);
  ASSERT_EQ(j.records.size(), 3u);
  EXPECT_EQ(j.records[2].id, rep.cases[2].id);
  EXPECT_THROW(w.append(rep.cases[3]), ReportError);
}

TEST(Journal, MissingFileIsAReportError) { EXPECT_THROW(read_journal("/nonexistent/run.journal"), ReportError); }
