// schemas/manifest.schema.json must name exactly the keys and dtype spellings the loader accepts, so that editors
// and opcheck agree on what a manifest may say.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/text.h"
#include "opcheck/case.h"
#include "opcheck/dtype.h"

namespace opcheck {
namespace {

nlohmann::json schema() {
  std::ifstream in(std::string(OPCHECK_TEST_DIR) + "/../../schemas/manifest.schema.json");
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in);
}

std::set<std::string> keys_of(const nlohmann::json& object_schema) {
  std::set<std::string> out;
  for (const auto& [k, v] : object_schema.at("properties").items()) out.insert(k);
  return out;
}

// The keys the loader accepts where `manifest` writes the key `qqqqqqqq`, as its unknown-key error lists them.
std::set<std::string> loader_keys(const std::string& manifest) {
  const ManifestSet set = load_manifest_text("schema_probe.yaml", manifest);
  const std::string listed = "allowed keys here: ";
  for (const auto& d : set.diagnostics.items)
    if (d.message.find("unknown key 'qqqqqqqq'") != std::string::npos && d.fix.find(listed) != std::string::npos) {
      const auto keys = split_list(d.fix.substr(d.fix.find(listed) + listed.size()));
      return {keys.begin(), keys.end()};
    }
  ADD_FAILURE() << "no unknown-key error listing the allowed keys for:\n" << manifest;
  return {};
}

TEST(ManifestSchema, KeysMatchTheLoader) {
  const auto s = schema();
  const std::string head = "model: m\ncases:\n  - {name: a, op: torch.add, ";
  EXPECT_EQ(keys_of(s), loader_keys("model: m\nqqqqqqqq: 1\ncases: []\n"));
  EXPECT_EQ(keys_of(s["$defs"]["case"]), loader_keys(head + "qqqqqqqq: 1}\n"));
  EXPECT_EQ(keys_of(s["$defs"]["tensor"]), loader_keys(head + "inputs: [{tensor: {shape: [2], qqqqqqqq: 1}}]}\n"));
  EXPECT_EQ(s.at("additionalProperties"), false);
  EXPECT_EQ(s["$defs"]["case"].at("additionalProperties"), false);
  EXPECT_EQ(s["$defs"]["tensor"].at("additionalProperties"), false);
  EXPECT_EQ(s["$defs"]["input"].at("additionalProperties"), false);
}

// A comparator lives in kComparators (opcheck/comparators.h); the schema's `compare` is generated from it, so a
// comparator added to the table and not to the schema (or the other way round) fails here.
TEST(ManifestSchema, CompareEnumIsEveryComparatorOfTheTable) {
  const auto s = schema();
  std::vector<std::string> in_schema, in_table;
  for (const auto& v : s["$defs"]["compare"]["enum"]) in_schema.push_back(v.get<std::string>());
  for (const ComparatorSpec& c : kComparators) in_table.push_back(c.name);
  EXPECT_EQ(in_schema, in_table);
  const std::string description = s["$defs"]["compare"]["description"];
  for (const ComparatorSpec& c : kComparators) {
    EXPECT_NE(description.find(c.name), std::string::npos) << c.name;
    EXPECT_NE(description.find(c.rule), std::string::npos) << c.name;
  }
}

TEST(ManifestSchema, DtypeEnumIsEverySpelling) {
  const auto s = schema();
  std::set<std::string> in_schema;
  for (const auto& v : s["$defs"]["dtype"]["enum"]) in_schema.insert(v.get<std::string>());
  const auto& names = all_dtype_names();
  EXPECT_EQ(in_schema, std::set<std::string>(names.begin(), names.end()));
  for (const auto& spelling : in_schema) EXPECT_TRUE(parse_dtype(spelling).has_value()) << spelling;
}

TEST(ManifestSchema, EveryObjectHasADescriptionForEditors) {
  const auto s = schema();
  for (const auto& [name, def] : s["$defs"].items()) {
    if (name == "settings") continue;  // a holder for shared property schemas, never used as a whole
    EXPECT_TRUE(def.contains("description")) << name;
    EXPECT_TRUE(def.contains("title")) << name;
  }
}

}  // namespace
}  // namespace opcheck
