// The Case: one fully resolved op call. The contract between the front half (no libtorch) and the exec layer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opcheck/case_fields.h"
#include "opcheck/cond_expr.h"
#include "opcheck/diagnostic.h"
#include "opcheck/dtype.h"
#include "opcheck/result.h"
#include "opcheck/value.h"

namespace opcheck {

/// Where a tensor input lives when the op runs: on the device under test, or kept on the host (`device: cpu`).
enum class Placement { DeviceUnderTest, Host };

/// How a tensor's values are produced (see the init kinds in docs/manifests.md).
enum class InitKind { Rand, Randn, Zeros, Ones, Arange, Randint, Uniform, Data, Xavier, File, Eye, Full };

/// The manifest keyword of an init kind ("rand", "randint", ...).
const char* init_kind_name(InitKind k);

/// One tensor input, fully resolved: dtype defaults applied, stride always explicit (contiguous when the
/// manifest gave none), presets already turned into stride/storage_offset (the preset name is kept for display).
struct TensorSpec {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;  // same rank as shape; a 0 stride means an expanded (broadcast) dim
  std::int64_t storage_offset = 0;
  DType dtype = DType::Float32;
  std::string dtype_spelling;        // as written (or inherited), e.g. "torch.float16"
  Placement placement = Placement::DeviceUnderTest;
  InitKind init = InitKind::Rand;
  KwArgs init_args;                  // as written, sorted by key (low, high, gain, fill_value, file's key, ...)
  PyValue data;                      // init: data — nested lists of numbers/bools matching shape
  std::string file;                  // init: file — absolute path of a .pt, .npy or .safetensors file
  /// init: file — the descriptor the loader opened and checked (a regular file beneath the manifest's folder);
  /// workers inherit it. -1 when none was opened (the case was not loaded from a manifest).
  int file_fd = -1;
  bool shape_from_file = false;      // a file tensor written without `shape`: the saved tensor's shape is used
  std::string preset;                // "", "noncontig_slice", "transpose_view", "expand_view"
  KwArgs preset_args;
  SourceLoc loc;

  std::int64_t numel() const;
  /// Bytes of storage the layout needs (offset + max reachable index + 1) * element size.
  std::int64_t storage_bytes() const;
  bool is_contiguous() const;
  /// Where to read the file's bytes: "/proc/self/fd/N" for the descriptor checked at load (the same file, whatever
  /// the path names now), else `file`.
  std::string file_source() const;
};

/// One argument of the op call: positional, or, with `keyword`, a tensor passed by name (a keyword-only tensor
/// parameter, as searchsorted's `sorter`; other keyword arguments are values, in Case::kwargs).
struct Input {
  enum class Kind { Tensor, TensorList, Value };  // `value:` and `py:` both become Value
  Kind kind = Kind::Value;
  std::string keyword;            // "" = positional; else the keyword it is passed as (Tensor/TensorList only)
  TensorSpec tensor;              // Kind::Tensor
  std::vector<TensorSpec> list;   // Kind::TensorList
  PyValue value;                  // Kind::Value
  SourceLoc loc;
};

/// A conditional skip or expected failure.
struct Condition {
  std::string expr;
  std::string reason;
  SourceLoc loc;
  std::shared_ptr<const CondExpr> ast;  // never null in a loaded Case
  bool strict = true;  // xfail_if: a pass (XPASS) fails the run; false for a v2 `mode: xfail` (pytest's non-strict)
};

/// A module case's module: a class (a Hugging Face transformers layer, or any torch.nn.Module importable from the
/// installed packages) built from its constructor arguments; the case's call is one invocation of its forward, with
/// the case's inputs and kwargs. The invocations of one module share its build (`build_key`). See docs/modules.md.
struct ModuleSpec {
  std::string name;         // the entry's `name` (GraniteMLP_77d2613c): the case name without its invocation
  std::string module_path;  // transformers.models.granite.modeling_granite.GraniteMLP
  /// Constructor arguments; a string `<config:CLASS>` stands for an instance of that config class, built with the
  /// module's sizes (below).
  std::vector<PyValue> ctor_args;
  KwArgs ctor_kwargs;
  /// Sizes the config class is built with, as the user gave them: `sizes:` of opcheck's own dialect (attribute ->
  /// value), over which a size file's (`sizes_file`, a model's config.json) come first. The sizes the forward inputs
  /// fix (hidden size, head dimension) are derived when the module is built, and the case record says which came
  /// from where.
  KwArgs sizes;
  std::string sizes_file;                    // absolute path, or ""
  std::string attn_implementation = "eager";  // the config's _attn_implementation (eager, sdpa)
  std::int64_t invocation = 0;               // which forward invocation of the entry (0-based)
  std::int64_t invocations = 1;              // how many the entry has
  std::string build_key;                     // equal for the invocations of one module build (set by the reader)
};

/// The fields of ModuleSpec, declared once as the case's settings are (case_fields.h): their names (the wire, the
/// dedupe key, the case record and messages read them), and whether they decide what the case computes (part of the
/// dedupe key, after the case's own fields, in table order). Readers and writers loop over kModuleFields, so a field
/// added to ModuleSpec and to this table reaches all of them.
using ModuleField = Field<ModuleSpec>;
inline constexpr ModuleField kModuleFields[] = {
    // The entry's name labels the case; two entries that build the same module with the same inputs are one call.
    ModuleField("name", &ModuleSpec::name),
    ModuleField("module_path", &ModuleSpec::module_path).in_key(KeyPlace::AfterInputs, 100),
    ModuleField("constructor_args", &ModuleSpec::ctor_args).in_key(KeyPlace::AfterInputs, 101),
    ModuleField("constructor_kwargs", &ModuleSpec::ctor_kwargs).in_key(KeyPlace::AfterInputs, 102),
    ModuleField("sizes", &ModuleSpec::sizes).in_key(KeyPlace::AfterInputs, 103),
    ModuleField("sizes_file", &ModuleSpec::sizes_file).in_key(KeyPlace::AfterInputs, 104),
    ModuleField("attn_implementation", &ModuleSpec::attn_implementation).in_key(KeyPlace::AfterInputs, 105),
    ModuleField("invocation", &ModuleSpec::invocation),
    ModuleField("invocations", &ModuleSpec::invocations),
    ModuleField("build_key", &ModuleSpec::build_key),
};
static_assert(field_checks::names_unique(kModuleFields), "every module field has its own name");
static_assert(field_checks::keys_well_formed(kModuleFields), "module key ranks are distinct");

/// One op call from a manifest, normalized. Its settings (seed, tolerances, comparator, marks, ...) are CaseSettings,
/// declared in kCaseFields.
struct Case : CaseSettings {
  std::string model;    // as declared by `model:`
  std::string variant;  // "" or the backend variant ("spyre") from a <model>_spyre.yaml / -spyre.yaml file
  std::string name;     // case name as written (may contain dots)
  std::string id;       // "model::name", or "model::stem/name" when two files of one model share a name
  SourceLoc loc;        // the line of the case's first key
  std::string op;       // as written (torch.add, torch.ops.aten.view, aten::add.Tensor, ...)
  std::vector<Input> inputs;
  KwArgs kwargs;        // attrs, then kwmap merged over it
  DType dtype = DType::Float32;   // case dtype (case field, else manifest defaults, else fp32)
  std::string dtype_spelling;     // as written, for skip_if's dtype / dtype_str
  std::vector<Condition> skip_if;
  std::vector<Condition> xfail_if;
  /// Set for a module case (a second kind of case, with the same life: selected, deduped, run in a worker, judged by
  /// the same rule, reported): `op` is then the module's path, `inputs` and `kwargs` its forward's arguments.
  std::shared_ptr<const ModuleSpec> module;
  bool is_module() const { return module != nullptr; }
};

/// The marks torch-spyre derives for every test, which `-m` selects on for every case (never listed as its marks,
/// and registered by their prefix): op__<op, non-alphanumerics as _>, dtype__<torch dtype name of case_dtype>,
/// platform__<arch>.
std::string op_mark(std::string_view op);
std::string platform_mark();  // platform__ and the machine's architecture as uname -m names it (x86_64, aarch64)
std::vector<std::string> derived_marks(const Case& c);
bool is_derived_mark(std::string_view mark);  // op__..., dtype__..., platform__...

/// The dtype a case is about, as reports and listings name it: its first floating (or complex) tensor input's, else
/// its first tensor input's (an int64 index, a bool mask), else its `dtype=` keyword's (a factory: `full(...,
/// dtype=torch.bfloat16)` is bf16), else the manifest's `dtype:` (a case with neither).
DType case_dtype(const Case& c);

/// One manifest file after loading.
struct Manifest {
  std::string path;      // as given (absolute or relative to the working directory)
  std::string model;
  std::string variant;   // "" or "spyre"
  bool is_template = false;  // file name ends in template.yaml: validated, not run unless named
  std::string sha256;    // digest of the file bytes
  std::vector<Case> cases;
};

/// What the load stage hands on: every manifest that loaded (bad cases dropped) and every problem found.
struct ManifestSet {
  std::vector<Manifest> manifests;
  DiagnosticList diagnostics;
};

/// Loads every file in `paths` (files, or folders searched recursively for *.yaml / *.yml, sorted).
/// Never throws for bad input: problems become diagnostics and the other files still load.
ManifestSet load_manifests(const std::vector<std::string>& paths);

/// Loads one manifest from memory (used by tests and fuzzers); `path` is used for locations and file: roots.
ManifestSet load_manifest_text(const std::string& path, const std::string& text);

}  // namespace opcheck
