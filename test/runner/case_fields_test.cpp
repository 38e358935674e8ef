// The case field table (opcheck/case_fields.h), walked entry by entry: every field crosses the worker wire, the case
// record (journal, metrics), a written manifest, the status config and the repro script as its entry says, and is
// in the dedupe key exactly when its entry says so. A field whose codec is broken in any of them fails here by name.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/status_config.h"
#include "manifest/manifest_writer.h"
#include "opcheck/case.h"
#include "plan/plan.h"
#include "repro/script.h"
#include "report/record_json.h"
#include "runner/plan_execution.h"
#include "runner/result_wire.h"

namespace opcheck {
namespace {

// A case every reader accepts, its settings at their defaults except a comparator that reads pcc_min (so the manifest
// writer writes every field it can).
Case base_case() {
  Case c;
  c.model = "m";
  c.name = "c.1";
  c.id = "m::c.1";
  c.op = "torch.add";
  c.loc = {"m.yaml", 3, 5};
  c.compare = Comparator::Pcc;
  return c;
}

// `c` with field `f` set to a value other than base_case's, one every reader accepts (a mark is an identifier, a
// tolerance a finite number >= 0, a correlation within [-1, 1]).
Case with_field_changed(const CaseField& f) {
  Case c = base_case();
  std::visit(
      [&](auto m) {
        using T = std::decay_t<decltype(c.*m)>;
        T& v = c.*m;
        if constexpr (std::is_same_v<T, bool>) v = !v;
        else if constexpr (std::is_same_v<T, std::int64_t>) v = 7;
        else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::optional<double>>) v = 0.5;
        else if constexpr (std::is_same_v<T, std::string>) v = "https://tracker.example/a'b\"c 7";
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) v = {"slow", "bf16_only"};
        else if constexpr (std::is_same_v<T, Comparator>) v = Comparator::Exact;
        else if constexpr (std::is_same_v<T, std::optional<ExpectedError>>) v = ExpectedError{"ValueError", "bad .*"};
        else ADD_FAILURE() << f.name << ": no sample value for its type";
      },
      f.member);
  EXPECT_FALSE(field_equal<CaseSettings>(c, base_case(), f)) << f.name << ": the sample value is the default";
  return c;
}

Case through_the_wire(const Case& c) {
  std::vector<std::uint8_t> bytes;
  encode_case(c, bytes);
  Case back;
  std::string error;
  EXPECT_TRUE(decode_case(bytes.data(), bytes.size(), back, error)) << error;
  return back;
}

TEST(CaseFields, EveryFieldCrossesTheWorkerWire) {
  for (const CaseField& f : kCaseFields) {
    const Case c = with_field_changed(f);
    const Case back = through_the_wire(c);
    for (const CaseField& g : kCaseFields)
      EXPECT_TRUE(field_equal<CaseSettings>(back, c, g)) << "changed " << f.name << ", " << g.name << " differs";
  }
}

TEST(CaseFields, EveryDedupeKeyFieldChangesTheKeyAndNoOtherDoes) {
  const std::string base = dedupe_key(base_case());
  for (const CaseField& f : kCaseFields) {
    const std::string key = dedupe_key(with_field_changed(f));
    if (f.key == KeyPlace::None)
      EXPECT_EQ(key, base) << f.name << " is not in the key, yet changes it";
    else
      EXPECT_NE(key, base) << f.name << " is in the key, yet leaves it alone";
  }
}

// Key format k4, spelled out: the table's ranks and spellings keep every cached key and every report's key as it was.
TEST(CaseFields, TheCanonicalTextIsKeyFormatK4) {
  Case c = base_case();
  c.rtol = 0.01;
  c.expects_error = ExpectedError{"ValueError", "bad"};
  c.nondeterministic_ok = true;
  EXPECT_EQ(canonical_case_text(c),
            "k4|torch.add|seed=0|in=|kw={}|cmp=pcc|rtol=0.01|atol=default|pcc_min=0.999|nan=eq|err=ValueError/bad"
            "|nondet");
}

TEST(CaseFields, EveryRecordLabelReachesTheJournalAndComesBack) {
  std::size_t labels = 0;
  for (const CaseField& f : kCaseFields) {
    if (!f.record_label) continue;
    ++labels;
    const Case c = with_field_changed(f);
    const CaseRecord rec = record_for(c, "k4:0", "torch.add()");
    const std::string line = case_record_json_line(rec);
    const CaseRecord back = case_record_from_json(nlohmann::json::parse(line), JsonWhere{"journal.jsonl", ""});
    const auto& value = c.*std::get<std::string CaseSettings::*>(f.member);
    EXPECT_EQ(rec.label(f.record_label), value) << f.name;
    EXPECT_EQ(back.label(f.record_label), value) << f.name << "\n" << line;
    // An empty label is not written: the records of cases without one are as they were.
    EXPECT_EQ(case_record_json_line(record_for(base_case(), "k4:0", "torch.add()")).find(f.record_label),
              std::string::npos)
        << f.name;
  }
  EXPECT_GE(labels, 2u);  // upstream_test, issue
}

TEST(CaseFields, EveryWrittenFieldComesBackFromTheWrittenManifest) {
  for (const CaseField& f : kCaseFields) {
    if (f.written == Written::Never) continue;
    ASSERT_NE(f.manifest_key, nullptr) << f.name << ": written, but the loader has no key for it";
    const Case c = with_field_changed(f);
    const std::string text = manifest_text::case_manifest(c, {}, "");
    const ManifestSet set = load_manifest_text("written.yaml", text);
    ASSERT_EQ(set.diagnostics.error_count(), 0u) << f.name << "\n" << text;
    ASSERT_EQ(set.manifests.size(), 1u);
    ASSERT_EQ(set.manifests[0].cases.size(), 1u) << text;
    const Case& back = set.manifests[0].cases[0];
    for (const CaseField& g : kCaseFields) {
      if (g.written == Written::Never) continue;
      EXPECT_TRUE(field_equal<CaseSettings>(back, c, g)) << "changed " << f.name << ", " << g.name << " differs\n"
                                                         << text;
    }
  }
}

// The YAML of the sample value, as a status config writes it.
std::string yaml_of(const Case& c, const CaseField& f) {
  return std::visit(
      [&](auto m) -> std::string {
        using T = std::decay_t<decltype(c.*m)>;
        const T& v = c.*m;
        if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, double>) return std::to_string(v);
        else if constexpr (std::is_same_v<T, std::optional<double>>) return std::to_string(*v);
        else if constexpr (std::is_same_v<T, std::string>) return "'" + v + "'";
        else if constexpr (std::is_same_v<T, Comparator>) return comparator_name(v);
        else return "unsupported";
      },
      f.member);
}

TEST(CaseFields, EveryStatusConfigKeySetsItsField) {
  std::size_t keys = 0;
  for (const CaseField& f : kCaseFields) {
    if (!f.config_key) continue;
    ++keys;
    Case sample = with_field_changed(f);
    std::string value = yaml_of(sample, f);
    if (value.find('\'') == 0) {  // a string: YAML doubles the single quote inside
      std::string inner = value.substr(1, value.size() - 2), doubled;
      for (char ch : inner) doubled += ch == '\'' ? std::string("''") : std::string(1, ch);
      value = "'" + doubled + "'";
    }
    StatusConfig cfg;
    DiagnosticList diags;
    ASSERT_TRUE(load_status_config_text("opcheck.yaml", "rules:\n  - id: \"m::*\"\n    " + std::string(f.config_key) +
                                                            ": " + value + "\n",
                                        cfg, diags))
        << f.name << ": " << (diags.items.empty() ? "" : diags.items[0].message);
    Case c = base_case();
    apply_status_config(cfg, c, "loopback");
    for (const CaseField& g : kCaseFields)
      EXPECT_TRUE(field_equal<CaseSettings>(c, &g == &f ? sample : base_case(), g))
          << "config set " << f.name << "; " << g.name << " is not what it should be";
  }
  EXPECT_GE(keys, 7u);  // rtol, atol, compare, pcc_min, equal_nan, timeout, issue
}

TEST(CaseFields, EveryScriptFieldChangesTheReproScript) {
  const std::string base = repro::python_repro_script(base_case(), repro::ScriptDevice{}, repro::ScriptBundle{});
  for (const CaseField& f : kCaseFields) {
    if (!f.script_name) continue;
    EXPECT_EQ(base.find("@" + std::string(f.script_name) + "@"), std::string::npos) << f.name;
    const std::string script = repro::python_repro_script(with_field_changed(f), repro::ScriptDevice{},
                                                          repro::ScriptBundle{});
    EXPECT_NE(script, base) << f.name << " (" << f.script_name << ") does not reach the script";
  }
}

}  // namespace
}  // namespace opcheck
