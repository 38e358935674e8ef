// The reader of one v2 test_suite_config file, shared by its two halves: v2_config.cpp walks the suite (global
// settings, files, tests), v2_entry.cpp turns one edits.ops.include entry into a Case.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "manifest/input_reader.h"

namespace opcheck::v2 {

using yaml::NodeRef;

// The tolerance test_model_ops_db uses for a dtype that global.supported_dtypes gives no precision.
constexpr double kDefaultTolerance = 5e-3;

enum class Mode { MandatorySuccess, Xfail, XfailStrict, Skip };

struct DtypeRule {
  double atol = kDefaultTolerance, rtol = kDefaultTolerance;
  bool force_xfail = false;
};

struct Global {
  bool have_dtypes = false;  // supported_dtypes given: dtypes outside it are not run
  std::map<DType, DtypeRule> dtypes;
  bool have_ops = false;
  std::map<std::string, bool> ops;  // op -> force_xfail
  std::int64_t seed = 0;
};

// What a test gives each of its entries.
struct TestScope {
  std::string model, variant;
  Mode mode = Mode::MandatorySuccess;
  std::vector<std::string> marks;         // the test's tags that are marker names
  std::vector<std::string> excluded_ops;  // edits.ops.exclude
  std::vector<DType> dtype_include, dtype_exclude;
  std::string not_run;  // the test is not test_model_ops_db: its entries are reported skipped, with this reason
  std::string upstream;  // a module test: the first of its names, which the cases' upstream_test names
};

/// Whether a v2 test name is one of torch-spyre's module tests (TestModule::test_forward, TestModuleCustom::...),
/// whose edits.modules.include entries are module cases.
bool is_module_test_name(std::string_view name);

class V2Reader {
 public:
  V2Reader(const std::string& path, DiagnosticList& diags) : path_(path), diags_(diags), r_(path, diags) {
    r_.use_v2_file_paths();
  }
  bool run(const yaml::Tree& tree, std::vector<Manifest>& out);

 private:
  bool want_list(NodeRef n, std::string_view key, const std::string& example);
  bool read_strings(NodeRef n, std::string_view key, std::vector<std::string>& out);
  bool read_mode(NodeRef n, Mode& out);
  std::optional<DType> read_dtype_name(NodeRef n, std::string_view key, bool allow_torch_only);
  bool read_dtype_list(NodeRef n, std::string_view key, std::vector<DType>& out);
  void read_global(NodeRef g);
  void read_file(NodeRef f);
  void read_test(NodeRef t);
  // One test of a file, in steps.
  /// True when the test is test_model_ops_db; `not_run` says why its entries do not run when another test is named.
  bool read_test_names(NodeRef t, std::vector<std::string>& names, std::string& not_run);
  bool read_test_model(NodeRef t, TestScope& test, bool& spyre);
  /// The edits.ops.include list, or null; `modules` gets edits.modules.include, or null.
  NodeRef read_edits(NodeRef t, TestScope& test, NodeRef& modules);
  Manifest& manifest_for(const TestScope& test, bool spyre);  // the model's manifest, made on first use
  void read_entries(NodeRef include, TestScope& test, bool spyre);
  // One edits.ops.include entry, in steps.
  bool read_entry(NodeRef e, const TestScope& test, Case& out);
  bool read_op(NodeRef e, Case& out);
  void name_entry(NodeRef e, const TestScope& test, Case& out);
  void read_arguments(NodeRef e, Case& out);
  void add_conditions(NodeRef e, const TestScope& test, Case& out);
  bool precheck_tensor(NodeRef t);
  bool precheck_args(NodeRef args);
  Condition always(std::string reason, NodeRef where, bool strict);
  // The edits.modules.include entries of a module test (v2_module.cpp).
  void read_module_entries(NodeRef include, TestScope& test, bool spyre);
  void read_module_ctor(NodeRef e, ModuleSpec& m);
  void read_module_options(NodeRef e, ModuleSpec& m);
  void read_module_invocation(NodeRef inv, Case& c);
  void warn_unreal_rotary(NodeRef at, const Input& in);

  const std::string& path_;
  DiagnosticList& diags_;
  InputReader r_;  // typed reads and the call's arguments, as v1 manifests read them; names the entry being read
  std::string stem_;
  std::string test_file_;  // the files entry's `path` being read (upstream's test file)
  /// The entries of `include` that name an OpInfo entry (`{name: add}`, no sample_inputs_func): a test of PyTorch's
  /// own test files. Said once with the import-opinfo command that gives their samples; the others are returned.
  bool name_opinfo_entries(NodeRef t, NodeRef include, const std::vector<std::string>& names);
  Global global_;
  std::size_t entry_index_ = 0;  // entries through the file, as torch-spyre's runner counts them
  std::vector<Manifest> manifests_;
  std::unordered_map<std::string, std::size_t> manifest_of_;  // model -> index into manifests_
  struct Listed {
    Mode mode;
    int line;
    int listings;
    bool runs = true;  // listed under test_model_ops_db (else reported skipped: its mode says nothing)
  };
  std::unordered_map<std::string, Listed> listed_;  // case id -> first listing
  std::unordered_map<std::string, int> op_counts_;  // op -> entries without a v1 name so far
  std::set<std::string> modules_listed_;  // model::name of the module entries read (one listing makes the cases)
};

}  // namespace opcheck::v2
