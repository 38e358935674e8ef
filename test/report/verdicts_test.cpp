// Verdicts a device team can act on (issue 22): not_supported apart in every report, the pass rate that counts a
// non-strict xpass as a correct result, the call and the worst element in every failure, warnings counted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "common/call_signature.h"
#include "report/console.h"
#include "report/diff.h"
#include "report/html.h"
#include "report/junit.h"
#include "report/metrics.h"
#include "report/record_json.h"
#include "report/stats.h"
#include "sample_report.h"

namespace opcheck {
namespace {

using testing::written_junit_xml;
using testing::written_metrics_json;

CaseRecord record(const std::string& name, Outcome outcome, Stage stage) {
  CaseRecord r;
  r.id = "m::" + name;
  r.model = "m";
  r.name = name;
  r.op = "torch.mul";
  r.dtype = "bf16";
  r.file = "m.yaml";
  r.line = 3;
  r.key = "k-" + name;
  r.outcome = outcome;
  r.result.case_id = r.id;
  r.result.stage = stage;
  r.result.outcome = stage_outcome(stage);
  return r;
}

const char* kDispatcher =
    "NotImplementedError: Could not run 'aten::mul.Tensor' with arguments from the 'PrivateUse1' backend.\n"
    "'aten::mul.Tensor' is only available for these backends: [CPU, Meta, ...].\n"
    "CPU: registered at aten/src/ATen/RegisterCPU.cpp:1234\n"
    "Meta: registered at aten/src/ATen/RegisterMeta.cpp:42";

RunReport unsupported_run(bool ok) {
  RunReport r;
  r.info.duration_s = 2.1;
  r.info.policy.not_supported_ok = ok;
  for (int i = 0; i < 12; ++i) r.cases.push_back(record("p" + std::to_string(i), Outcome::Passed, Stage::PASSED));
  auto bad = record("wrong", Outcome::Failed, Stage::INCORRECT_RESULT);
  bad.result.message = "output: Tensor-likes are not close!\n\nMismatched elements: 1 / 4 (25.0%)";
  r.cases.push_back(bad);
  for (int i = 0; i < 3; ++i) {
    auto ns = record("ns" + std::to_string(i), Outcome::NotSupported, Stage::NOT_SUPPORTED);
    ns.call = "torch.mul(bf16[1,32,64], bf16[1,32,64])";
    ns.result.message = kDispatcher;
    r.cases.push_back(ns);
  }
  return r;
}

TEST(NotSupported, IsItsOwnOutcomeInTheVocabulary) {
  EXPECT_EQ(stage_outcome(Stage::NOT_SUPPORTED), Outcome::NotSupported);
  EXPECT_STREQ(outcome_name(Outcome::NotSupported), "not_supported");
  Outcome o;
  ASSERT_TRUE(parse_outcome("not_supported", o));
  EXPECT_EQ(o, Outcome::NotSupported);
  // It fails the run unless the run forgives it.
  EXPECT_TRUE(fails_run(Outcome::NotSupported, XfailStrictness::Strict, RunPolicy{}));
  RunPolicy ok;
  ok.not_supported_ok = true;
  EXPECT_FALSE(fails_run(Outcome::NotSupported, XfailStrictness::Strict, ok));
  EXPECT_TRUE(fails_run(Outcome::Failed, XfailStrictness::Strict, ok));
}

TEST(NotSupported, SummaryLineCountsItAfterFailed) {
  EXPECT_EQ(summary_line(unsupported_run(false)), "1 failed, 3 not supported, 12 passed in 2.10s");
  // Red when it fails the run; yellow as a skip when --not-supported-ok forgives it.
  EXPECT_NE(summary_line(unsupported_run(false), true).find("\x1b[31m\x1b[1m3 not supported"), std::string::npos);
  RunReport only = unsupported_run(true);
  only.cases.erase(only.cases.begin() + 12);  // the wrong result
  const std::string colored = summary_line(only, true);
  EXPECT_NE(colored.find("\x1b[33m\x1b[1m3 not supported"), std::string::npos) << colored;
}

TEST(NotSupported, TbShortShowsTheFirstLineAndTbLongAll) {
  FailureReportOptions o;
  const RunReport run = unsupported_run(false);
  const std::string short_text = failure_details(run, o);
  EXPECT_NE(short_text.find("call: torch.mul(bf16[1,32,64], bf16[1,32,64])\n"
                            "NotImplementedError: Could not run 'aten::mul.Tensor' with arguments from the "
                            "'PrivateUse1' backend.\n... 3 more lines (--tb=long shows them)\n"),
            std::string::npos)
      << short_text;
  EXPECT_EQ(short_text.find("RegisterCPU"), std::string::npos);
  o.style = TracebackStyle::Long;
  EXPECT_NE(failure_details(run, o).find("Meta: registered at aten/src/ATen/RegisterMeta.cpp:42\n"), std::string::npos);
  const std::string summary = short_summary(run, "fE");
  EXPECT_NE(summary.find("NOT_SUPPORTED m::ns0 - NotImplementedError: Could not run 'aten::mul.Tensor' with "
                         "arguments from the 'PrivateUse1' backend.\n"),
            std::string::npos)
      << summary;
  // Forgiven, it is no failure: listed with the skips.
  const RunReport ok = unsupported_run(true);
  EXPECT_EQ(failure_details(ok, FailureReportOptions{}).find("m::ns0"), std::string::npos);
  EXPECT_EQ(short_summary(ok, "fE").find("m::ns0"), std::string::npos);
  EXPECT_NE(short_summary(ok, "s").find("NOT_SUPPORTED m::ns0 - NotImplementedError"), std::string::npos);
}

TEST(NotSupported, JunitFailureByDefaultSkippedWhenForgiven) {
  for (bool ok : {false, true}) {
    pugi::xml_document doc;
    ASSERT_TRUE(doc.load_string(written_junit_xml(unsupported_run(ok)).c_str()));
    auto suite = doc.child("testsuites").child("testsuite");
    EXPECT_EQ(suite.attribute("failures").as_int(), ok ? 1 : 4);
    EXPECT_EQ(suite.attribute("skipped").as_int(), ok ? 3 : 0);
    int seen = 0;
    for (auto tc : suite.children("testcase")) {
      if (std::string(tc.attribute("name").value()).rfind("ns", 0) != 0) continue;
      ++seen;
      auto outcome = tc.child("properties").find_child_by_attribute("property", "name", "outcome");
      EXPECT_STREQ(outcome.attribute("value").value(), "not_supported");
      auto el = tc.child(ok ? "skipped" : "failure");
      ASSERT_TRUE(el) << ok;
      EXPECT_STREQ(el.attribute("type").value(), "NOT_SUPPORTED");
      const std::string msg = el.attribute("message").value();
      if (ok) {
        EXPECT_EQ(msg, "not supported: NotImplementedError: Could not run 'aten::mul.Tensor' with arguments from "
                       "the 'PrivateUse1' backend.");
      } else {
        EXPECT_EQ(msg, "NotImplementedError: Could not run 'aten::mul.Tensor' with arguments from the 'PrivateUse1' "
                       "backend.\ncall: torch.mul(bf16[1,32,64], bf16[1,32,64])\nrepro: opcheck repro m::" +
                           std::string(tc.attribute("name").value()));
      }
      EXPECT_EQ(std::string(el.text().get()), kDispatcher);  // the whole text stays in the element
    }
    EXPECT_EQ(seen, 3);
  }
}

TEST(NotSupported, MetricsCountItEverywhereAndRecordThePolicy) {
  const auto j = nlohmann::json::parse(written_metrics_json(unsupported_run(true)));
  EXPECT_EQ(j["totals"]["not_supported"], 3);
  EXPECT_EQ(j["totals"]["failed"], 1);
  EXPECT_EQ(j["totals"]["total"], 16);
  EXPECT_EQ(j["pass_rate"]["per_model"]["m"]["not_supported"], 3);
  EXPECT_EQ(j["pass_rate"]["per_op"]["torch.mul"]["not_supported"], 3);
  EXPECT_EQ(j["pass_rate"]["per_dtype"]["bf16"]["not_supported"], 3);
  EXPECT_EQ(j["run"]["not_supported_ok"], true);
  // In the denominator, not the numerator: 12 correct of 16 counted.
  EXPECT_DOUBLE_EQ(j["pass_rate"]["overall"].template get<double>(), 12.0 / 16.0);
  const RunReport back = parse_metrics(written_metrics_json(unsupported_run(true)), "m.json");
  EXPECT_TRUE(back.info.policy.not_supported_ok);
  EXPECT_EQ(back.cases.back().outcome, Outcome::NotSupported);
}

TEST(NotSupported, DiffCallsPassedToNotSupportedARegression) {
  RunReport old_run, new_run;
  old_run.cases.push_back(record("a", Outcome::Passed, Stage::PASSED));
  new_run.cases.push_back(record("a", Outcome::NotSupported, Stage::NOT_SUPPORTED));
  new_run.info.policy.not_supported_ok = true;  // even when the new run forgave it
  DiffResult d = diff_reports(old_run, new_run);
  ASSERT_EQ(d.regressions.size(), 1u);
  EXPECT_EQ(diff_exit_code(d), 1);
  d = diff_reports(new_run, old_run);
  EXPECT_EQ(d.fixed.size(), 1u);
}

TEST(PassRate, ANonStrictXpassIsACorrectResultAStrictOneIsNot) {
  OutcomeCounts c;
  c.add(Outcome::XPassed, XfailStrictness::NonStrict);
  c.add(Outcome::XPassed, XfailStrictness::NonStrict);
  EXPECT_DOUBLE_EQ(*c.pass_rate(), 1.0);
  c.add(Outcome::XPassed, XfailStrictness::Strict);
  c.add(Outcome::Passed);
  EXPECT_DOUBLE_EQ(*c.pass_rate(), 3.0 / 4.0);
  c.add(Outcome::XFailed);  // says nothing about the device
  c.add(Outcome::NotSupported);
  EXPECT_DOUBLE_EQ(*c.pass_rate(), 3.0 / 5.0);
}

TEST(NoDeviceOp, IsItsOwnOutcomeInNoPassRateAndFailsNoRun) {
  EXPECT_EQ(stage_outcome(Stage::NO_DEVICE_OP), Outcome::NoDeviceOp);
  Outcome o;
  ASSERT_TRUE(parse_outcome("no_device_op", o));
  EXPECT_EQ(o, Outcome::NoDeviceOp);
  EXPECT_FALSE(fails_run(Outcome::NoDeviceOp, XfailStrictness::Strict, RunPolicy{}));
  OutcomeCounts c;
  c.add(Outcome::Passed);
  c.add(Outcome::Failed);
  c.add(Outcome::NoDeviceOp);
  c.add(Outcome::NoDeviceOp);
  EXPECT_EQ(c.no_device_op, 2);
  EXPECT_EQ(c.total(), 4);
  EXPECT_EQ(c.counted(), 2);
  EXPECT_DOUBLE_EQ(*c.pass_rate(), 1.0 / 2.0);
  RunReport run;
  run.cases.push_back(record("a", Outcome::Passed, Stage::PASSED));
  run.cases.push_back(record("b", Outcome::NoDeviceOp, Stage::NO_DEVICE_OP));
  run.info.duration_s = 1.5;
  EXPECT_EQ(summary_line(run), "1 passed, 1 passed without the device in 1.50s");
  run.cases.back().result.message = "passed without the device: no op of the call ran on loopback (nothing reached it)";
  const std::string listed = short_summary(run, "s");
  EXPECT_NE(listed.find("NO_DEVICE m::b - passed without the device: no op of the call ran on loopback"),
            std::string::npos)
      << listed;
  EXPECT_EQ(short_summary(run, "fE").find("NO_DEVICE"), std::string::npos);  // neither a failure nor an error
}

TEST(NoDeviceOp, ExercisesInCoverageOnlyTheOpsThatRanOnTheDevice) {
  RunReport run;
  run.info.enabled_ops = {"aten::neg", "aten::add.Tensor", "aten::_copy_from"};
  auto on_device = record("a", Outcome::Passed, Stage::PASSED);
  on_device.result.resolved_op = "aten::neg";
  auto host_only = record("b", Outcome::NoDeviceOp, Stage::NO_DEVICE_OP);
  host_only.result.resolved_op = "aten::add.Tensor";  // what it resolved to ran on the host
  host_only.result.device_ops = {DeviceOp{"aten::_copy_from", DeviceOpVia::Kernel, 1, false, false}};  // moved there
  run.cases = {on_device, host_only};
  const RunStats st = compute_stats(run);
  EXPECT_EQ(st.enabled.exercised, (std::vector<std::string>{"aten::_copy_from", "aten::neg"}));
  EXPECT_EQ(st.enabled.untouched, std::vector<std::string>{"aten::add.Tensor"});
  EXPECT_EQ(st.enabled.per_op.at("aten::_copy_from").outcomes.no_device_op, 1);
  EXPECT_FALSE(st.enabled.per_op.at("aten::_copy_from").outcomes.pass_rate().has_value());
}

TEST(PassRate, AnAllNonStrictXpassRunHeadlinesItsRateInGreen) {
  RunReport run;
  for (int i = 0; i < 4; ++i) {
    auto r = record("x" + std::to_string(i), Outcome::XPassed, Stage::PASSED);
    r.xfail_strictness = XfailStrictness::NonStrict;
    run.cases.push_back(r);
  }
  const std::string page = html_report(run, {});
  EXPECT_NE(page.find("<div class=\"kpi good\" data-kpi=\"pass-rate\" data-value=\"1\">"), std::string::npos);
  EXPECT_NE(page.find("<div class=\"kpi-value\">100.0%</div><div class=\"kpi-sub\">4 correct of 4 counted"),
            std::string::npos);
}

TEST(Failures, TheConsoleBlockShowsTheCallAndTheWorstElement) {
  RunReport run;
  auto r = record("w", Outcome::Failed, Stage::INCORRECT_RESULT);
  r.call = "torch.mul(bf16[1,32,64], 2.0)";
  r.result.message = "output: Tensor-likes are not close!";
  r.result.figures.worst_index = {0, 3, 7};
  r.result.figures.worst_device = 1.5;
  r.result.figures.worst_reference = 1.25;
  r.result.figures.max_abs_diff = 0.25;
  run.cases.push_back(r);
  const std::string text = failure_details(run, FailureReportOptions{});
  EXPECT_NE(text.find("m.yaml:3: torch.mul [INCORRECT_RESULT] bf16\ncall: torch.mul(bf16[1,32,64], 2.0)\n"
                      "output: Tensor-likes are not close!\nworst element at [0, 3, 7]: device 1.5, reference 1.25\n"),
            std::string::npos)
      << text;
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(written_junit_xml(run).c_str()));
  EXPECT_STREQ(doc.select_node("//failure").node().attribute("message").value(),
               "output: Tensor-likes are not close!\ncall: torch.mul(bf16[1,32,64], 2.0)\n"
               "worst element at [0, 3, 7]: device 1.5, reference 1.25\nrepro: opcheck repro m::w");
  const std::string page = html_report(run, {});
  EXPECT_NE(page.find("worst element at [0, 3, 7]: device 1.5, reference 1.25"), std::string::npos);
  EXPECT_NE(page.find("torch.mul(bf16[1,32,64], 2.0)"), std::string::npos);
  // The record keeps them (journal, metrics, merge, diff and report read it back).
  const CaseRecord back = case_record_from_json(nlohmann::json::parse(case_record_json_line(r)), {"j", ""});
  EXPECT_EQ(back.call, r.call);
  EXPECT_EQ(back.result.figures.worst_index, (std::vector<std::int64_t>{0, 3, 7}));
  EXPECT_EQ(back.result.figures.worst_device, 1.5);
  EXPECT_EQ(back.result.figures.worst_reference, 1.25);
}

TEST(Failures, CallSignatureShowsLayoutsValuesAndElidesLongLists) {
  Case c;
  c.op = "torch.add";
  Input a;
  a.kind = Input::Kind::Tensor;
  a.tensor.shape = {4, 8};
  a.tensor.stride = {1, 4};
  a.tensor.dtype = DType::Float32;
  Input b = a;
  b.tensor.stride = {8, 1};
  b.tensor.storage_offset = 3;
  b.tensor.dtype = DType::BFloat16;
  Input v;
  v.kind = Input::Kind::Value;
  v.value = PyValue::real(0.5);
  c.inputs = {a, b, v};
  c.kwargs = {{"alpha", PyValue::integer(2)}};
  EXPECT_EQ(call_signature(c), "torch.add(fp32[4,8]{stride 1,4}, bf16[4,8]{offset 3}, 0.5, alpha=2)");
  Input list;
  list.kind = Input::Kind::TensorList;
  Input plain = b;
  plain.tensor.storage_offset = 0;
  list.list.assign(10, plain.tensor);
  c.inputs = {list};
  c.kwargs.clear();
  c.op = "torch.cat";
  EXPECT_EQ(call_signature(c), "torch.cat([bf16[4,8], bf16[4,8], bf16[4,8], bf16[4,8], bf16[4,8], bf16[4,8], ... "
                               "(10 tensors)])");
}

TEST(Warnings, CountedBeforeTheSummaryLineWithTheFirstFew) {
  RunInfo info;
  EXPECT_EQ(warnings_summary(info), "");
  info.warnings = {"a.yaml: warning: one\n  Fix: x", "b.yaml: warning: two", "c.yaml: warning: three",
                   "d.yaml: warning: four"};
  EXPECT_EQ(warnings_summary(info), "4 warnings (opcheck validate lists them):\n  a.yaml: warning: one\n"
                                    "  b.yaml: warning: two\n  c.yaml: warning: three\n  ... and 1 more\n");
  // A warning about the command line, not a file, is listed without "opcheck: warning: " under the heading that
  // already says "warning".
  RunInfo cli;
  cli.warnings = {"opcheck: warning: -m names mark 'dtype__flaot16', which no case has\n  Fix: check the spelling"};
  EXPECT_EQ(warnings_summary(cli), "1 warning (opcheck validate lists them):\n"
                                   "  -m names mark 'dtype__flaot16', which no case has\n");
  RunReport run;
  run.info = info;
  const auto j = nlohmann::json::parse(written_metrics_json(run));
  EXPECT_EQ(j["run"]["warning_count"], 4);
  EXPECT_NE(html_report(run, {}).find("<details id=\"warnings\" open><summary>4 warnings</summary>"),
            std::string::npos);
}

}  // namespace
}  // namespace opcheck
