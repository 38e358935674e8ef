// Writing manifests: the one place that knows how values, strings, keys and whole cases are spelt so that the
// loader reads back exactly what was written. Used by failure bundles (a case alone) and by op-trace import. It
// needs no loader and no libtorch: only the loader's string rules (manifest/string_values.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opcheck/case.h"
#include "opcheck/value.h"

namespace opcheck::manifest_text {

/// A YAML double-quoted scalar: a string to every YAML reader, whatever the text (newlines, quotes, `#`, `: `, `yes`,
/// `null`, `1e3`, unicode and control characters all come back as written).
std::string quoted(std::string_view s);

/// A mapping key: plain when every YAML reader takes it for that very string (an identifier that is not a YAML
/// word such as null, true, yes or on), else quoted.
std::string key(std::string_view k);

/// A float that reads back as the same double: Python's shortest repr with a dot before any exponent (YAML 1.1
/// readers need it to see a float); nan and ±inf as the strings the loader reads as those floats.
std::string real(double v);

/// `[1, 2, 3]`.
std::string ints(const std::vector<std::int64_t>& v);

/// A value as the loader's `value:`/kwmap/init_args reading gives it back: a string it would reinterpret (None,
/// inf, `(1,)`, `cuda`, `torch.float16`, ...) is written as a parenthesized Python string literal, which stays
/// that string; tuples, lists, slices and Ellipsis as quoted Python literals.
std::string value(const PyValue& v);

/// A `data:` list: nested flow lists of numbers.
std::string data(const PyValue& v);

/// `{k: v, ...}` with every value as `value` writes it.
std::string kwargs_flow(const KwArgs& kw);

/// Where one tensor of a written case takes its values from.
struct TensorSource {
  std::string file;    // path relative to the manifest's folder; "" = none
  bool saved = false;  // true: `file` holds the exact tensor (written as init: file with the spec's layout);
                       // false: the spec's recipe as loaded, with `file` standing in for an init: file path
};

/// The case as a one-case manifest (model and case name kept, so a run of it has the same id, without the file stem
/// an id gets when two files of one model share a case name). `tensors[i][j]` is tensor j of input i (j = 0 for a
/// plain tensor input). Tolerances, comparator, expects_error, timeout and nondeterministic are written as resolved;
/// skip_if/xfail_if are left out. `header_comment` lines become `# ` comments at the top. Loading the text gives
/// back the same case (and dedupe key), save for saved tensors' files.
std::string case_manifest(const Case& c, const std::vector<std::vector<TensorSource>>& tensors,
                          const std::string& header_comment = {});

}  // namespace opcheck::manifest_text
