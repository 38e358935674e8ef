// load_manifests: discovery of files, file-level facts (variant, template, digest) and case ids across files.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/sha256.h"
#include "opcheck/case.h"

namespace fs = std::filesystem;
using namespace opcheck;

namespace {

// A fresh folder, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "opcheck-manifest-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    EXPECT_TRUE(made);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string write(const std::string& rel, const std::string& text) const {
    fs::path p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  fs::path path_;
};

std::string all_diags(const ManifestSet& s) {
  std::string out;
  for (const auto& d : s.diagnostics.items) out += d.format() + "\n";
  return out;
}

std::string manifest(const std::string& model, const std::vector<std::string>& names) {
  std::string out = "model: " + model + "\ncases:\n";
  for (const auto& n : names) out += "  - {name: " + n + ", op: torch.add, inputs: [{value: 1}]}\n";
  return out;
}

std::vector<std::string> file_names(const ManifestSet& s) {
  std::vector<std::string> out;
  for (const auto& m : s.manifests) out.push_back(fs::path(m.path).filename().string());
  return out;
}

}  // namespace

TEST(LoadManifests, FoldersAreSearchedRecursivelyInSortedOrder) {
  TempDir dir;
  dir.write("b.yaml", manifest("mb", {"x"}));
  dir.write("a.yml", manifest("ma", {"x"}));
  dir.write("sub/c.yaml", manifest("mc", {"x"}));
  dir.write("sub/deeper/d.yaml", manifest("md", {"x"}));
  dir.write("markers.yaml", "markers:\n  slow: takes long\n");
  dir.write("sub/opcheck.yaml", "status: {}\n");
  dir.write("notes.txt", "model: not a manifest\n");
  dir.write("e.yaml.bak", "garbage: [\n");
  ManifestSet s = load_manifests({dir.path().string()});
  EXPECT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  EXPECT_EQ(file_names(s), (std::vector<std::string>{"a.yml", "b.yaml", "c.yaml", "d.yaml"}));
}

TEST(LoadManifests, ExplicitFilesAreLoadedOnceWhateverTheirName) {
  TempDir dir;
  std::string a = dir.write("a.yaml", manifest("ma", {"x"}));
  std::string txt = dir.write("odd.txt", manifest("mo", {"x"}));
  ManifestSet s = load_manifests({a, txt, dir.path().string(), (dir.path() / "." / "a.yaml").string()});
  EXPECT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  EXPECT_EQ(file_names(s), (std::vector<std::string>{"a.yaml", "odd.txt"}));
  EXPECT_EQ(s.manifests[0].path, a) << "the path as given";
}

TEST(LoadManifests, MissingPathsAndEmptyFolders) {
  TempDir dir;
  fs::create_directories(dir.path() / "empty");
  std::string good = dir.write("g.yaml", manifest("m", {"x"}));
  ManifestSet s = load_manifests({(dir.path() / "nope.yaml").string(), (dir.path() / "empty").string(), good});
  ASSERT_EQ(s.diagnostics.error_count(), 1u) << all_diags(s);
  EXPECT_NE(all_diags(s).find("nope.yaml: error: no such manifest file or folder"), std::string::npos) << all_diags(s);
  EXPECT_NE(all_diags(s).find("warning: no manifests (*.yaml, *.yml) in this folder"), std::string::npos);
  EXPECT_EQ(s.manifests.size(), 1u);
}

TEST(LoadManifests, ABadFileDoesNotStopTheOthers) {
  TempDir dir;
  dir.write("1_good.yaml", manifest("m1", {"a", "b"}));
  dir.write("2_broken.yaml", "model: m2\ncases: [\n");
  dir.write("3_empty.yaml", "");
  dir.write("4_binary.yaml", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  dir.write("5_half_good.yaml",
            manifest("m5", {"a"}) + "  - {name: b, op: torch.add, inputs: [{tensor: {shape: [-2]}}]}\n");
  dir.write("6_good.yaml", manifest("m6", {"a"}));
  ManifestSet s = load_manifests({dir.path().string()});
  EXPECT_EQ(file_names(s), (std::vector<std::string>{"1_good.yaml", "5_half_good.yaml", "6_good.yaml"}));
  EXPECT_EQ(s.manifests[0].cases.size(), 2u);
  EXPECT_EQ(s.manifests[1].cases.size(), 1u);
  EXPECT_EQ(s.diagnostics.error_count(), 4u) << all_diags(s);
  for (const auto& d : s.diagnostics.items) {
    if (d.message == "empty manifest") continue;
    EXPECT_GT(d.loc.line, 0) << d.format();
  }
}

TEST(LoadManifests, VariantTemplateAndDigest) {
  TempDir dir;
  std::string text = manifest("m", {"a"});
  dir.write("m.yaml", text);
  dir.write("m_spyre.yaml", manifest("m", {"a_spyre"}));
  dir.write("m-spyre.yml", manifest("m", {"b_spyre"}));
  dir.write("spyre.yaml", manifest("n", {"a"}));
  dir.write("my-template.yaml", manifest("t", {"a"}));
  ManifestSet s = load_manifests({dir.path().string()});
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  for (const auto& m : s.manifests) {
    std::string name = fs::path(m.path).filename().string();
    bool spyre = name == "m_spyre.yaml" || name == "m-spyre.yml";
    EXPECT_EQ(m.variant, spyre ? "spyre" : "") << name;
    EXPECT_EQ(m.is_template, name == "my-template.yaml") << name;
    for (const auto& c : m.cases) EXPECT_EQ(c.variant, m.variant);
    EXPECT_EQ(m.sha256.size(), 64u);
    if (name == "m.yaml") {
      EXPECT_EQ(m.sha256, sha256_hex(text));
    }
  }
  ManifestSet t = load_manifest_text("x/foo-template.yml", manifest("t", {"a"}));
  ASSERT_EQ(t.manifests.size(), 1u);
  EXPECT_TRUE(t.manifests[0].is_template);
  EXPECT_EQ(t.manifests[0].path, "x/foo-template.yml");
}

TEST(LoadManifests, CollidingIdsAreQualifiedByFileStem) {
  TempDir dir;
  dir.write("one.yaml", manifest("m", {"shared", "only_one"}));
  dir.write("two.yaml", manifest("m", {"shared", "only_two"}));
  dir.write("other.yaml", manifest("other", {"shared"}));
  ManifestSet s = load_manifests({dir.path().string()});
  EXPECT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  std::vector<std::string> ids;
  for (const auto& m : s.manifests)
    for (const auto& c : m.cases) ids.push_back(c.id);
  EXPECT_EQ(
      ids, (std::vector<std::string>{"m::one/shared", "m::only_one", "other::shared", "m::two/shared", "m::only_two"}));
  ASSERT_EQ(s.diagnostics.items.size(), 2u) << all_diags(s);
  const Diagnostic& w = s.diagnostics.items[0];
  EXPECT_EQ(w.severity, Diagnostic::Severity::Warning);
  EXPECT_EQ(w.case_id, "m::one/shared");
  EXPECT_EQ(w.loc.line, 3);
  EXPECT_NE(w.message.find("case id 'm::shared' is declared in 2 files (one.yaml, two.yaml)"), std::string::npos)
      << w.message;
  EXPECT_EQ(s.manifests[0].cases[0].name, "shared") << "the name itself is untouched";
}

TEST(LoadManifests, SameStemInTwoFoldersIsQualifiedWithTheFolder) {
  // A v1 manifest and a v2 config of one model are both <model>.yaml, in different folders.
  TempDir dir;
  dir.write("a/m.yaml", manifest("m", {"x", "y"}));
  dir.write("b/m.yaml", manifest("m", {"x"}));
  ManifestSet s = load_manifests({dir.path().string()});
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  std::vector<std::string> ids;
  for (const auto& m : s.manifests)
    for (const auto& c : m.cases) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"m::a/m/x", "m::y", "m::b/m/x"}));
}

TEST(LoadManifests, ManyClashesBetweenTheSameFilesAreCountedInOneWarning) {
  TempDir dir;
  dir.write("v1/m.yaml", manifest("m", {"a", "b", "c"}));
  dir.write("v2/m.yaml", manifest("m", {"a", "b", "c"}));
  ManifestSet s = load_manifests({dir.path().string()});
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  ASSERT_EQ(s.diagnostics.items.size(), 4u) << all_diags(s);
  EXPECT_NE(s.diagnostics.items[0].message.find("case id 'm::a' is declared in 2 files"), std::string::npos);
  EXPECT_NE(s.diagnostics.items[3].message.find("3 more cases have ids that are also declared in m.yaml, m.yaml"),
            std::string::npos)
      << all_diags(s);
  EXPECT_EQ(s.diagnostics.items[3].severity, Diagnostic::Severity::Warning);
  EXPECT_EQ(s.manifests.at(1).cases.at(2).id, "m::v2/m/c");
}

TEST(LoadManifests, SameFolderAndStemStillClashes) {
  TempDir dir;
  dir.write("a/sub/m.yaml", manifest("m", {"x", "y"}));
  dir.write("b/sub/m.yaml", manifest("m", {"x"}));
  ManifestSet s = load_manifests({dir.path().string()});
  ASSERT_EQ(s.diagnostics.error_count(), 1u) << all_diags(s);
  EXPECT_NE(all_diags(s).find("case id 'm::sub/m/x' is still not unique"), std::string::npos) << all_diags(s);
  ASSERT_EQ(s.manifests.size(), 2u);
  EXPECT_EQ(s.manifests[0].cases.size(), 2u);
  EXPECT_TRUE(s.manifests[1].cases.empty());
}

TEST(LoadManifests, FileInputsMayNotEscapeThroughSymlinks) {
  TempDir dir;
  TempDir outside;
  // Real tensor files: the load stage reads what a `file:` names (see pt_file.h).
  std::ifstream saved(std::string(OPCHECK_TEST_DIR) + "/good/arange_2x3.pt", std::ios::binary);
  const std::string tensor((std::istreambuf_iterator<char>(saved)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(tensor.empty());
  outside.write("secret.pt", tensor);
  dir.write("inside/t.pt", tensor);
  fs::create_symlink(outside.path() / "secret.pt", dir.path() / "link_out.pt");
  fs::create_symlink(dir.path() / "inside" / "t.pt", dir.path() / "link_in.pt");
  dir.write("m.yaml",
            "model: m\ncases:\n"
            "  - {name: out, op: torch.add, inputs: [{file: link_out.pt}]}\n"
            "  - {name: in, op: torch.add, inputs: [{file: link_in.pt}, {file: inside/t.pt}]}\n");
  ManifestSet s = load_manifests({(dir.path() / "m.yaml").string()});
  ASSERT_EQ(s.diagnostics.error_count(), 1u) << all_diags(s);
  const Diagnostic& d = s.diagnostics.items[0];
  EXPECT_NE(d.message.find("resolves through a symlink"), std::string::npos) << d.message;
  EXPECT_EQ(d.loc.line, 3);
  EXPECT_EQ(d.case_id, "m::out");
  ASSERT_EQ(s.manifests.at(0).cases.size(), 1u);
  const Case& c = s.manifests[0].cases[0];
  const std::string real = fs::canonical(dir.path() / "inside" / "t.pt").string();
  EXPECT_EQ(c.inputs[0].tensor.file, real);
  EXPECT_EQ(c.inputs[1].tensor.file, real);
  EXPECT_TRUE(fs::path(c.inputs[0].tensor.file).is_absolute());
}

TEST(LoadManifests, ManyCopiesOfATorchSpyreManifestLoadAsManyModels) {
  // How fast they load is scripts/bench.sh's job ("load + plan of 10.4 MB of real manifests"), not a unit test's.
  TempDir dir;
  const std::string fixture = std::string(OPCHECK_TEST_FIXTURES) + "/torch-spyre/tiny-gpt.yaml";
  std::ifstream in(fixture, std::ios::binary);
  ASSERT_TRUE(in) << fixture;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (int i = 0; i < 14; ++i) {
    std::string copy = text;
    const std::size_t model = copy.find("model: tiny-gpt");
    copy.replace(model, copy.find('\n', model) - model, "model: copy" + std::to_string(i));
    dir.write("copy" + std::to_string(i) + ".yaml", copy);
  }
  ManifestSet s = load_manifests({dir.path().string()});
  EXPECT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  std::size_t cases = 0;
  for (const auto& m : s.manifests) cases += m.cases.size();
  EXPECT_EQ(cases, 14u * 34u);
  EXPECT_EQ(s.manifests.size(), 14u);
}
