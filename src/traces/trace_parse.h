// Op-trace files (PyTorch's operator benchmark logs, BackendBench model traces): lines parsed into values.
// No libtorch: a trace holds shapes, dtypes and Python literals, nothing that needs the dispatcher.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opcheck/diagnostic.h"
#include "opcheck/dtype.h"

namespace opcheck::traces {

/// `T([sizes], dtype)` or `T([sizes], dtype, stride=(...))`: a tensor described by its layout only.
struct TraceTensor {
  std::vector<std::int64_t> shape;
  std::optional<std::vector<std::int64_t>> stride;  // absent = contiguous
  DType dtype = DType::Float32;
  std::string dtype_text;  // as written: "f16", "torch.bool"
};

/// One argument (or part of one) of a traced call.
struct TraceValue {
  /// Symbol: a torch name that is not a dtype (`torch.strided`, `torch.contiguous_format`); Device: a device
  /// written as a call (`torch.device('cpu')`, `device(type='cuda', index=0)`), kept as its spelling.
  enum class Kind { None, Bool, Int, Float, String, DType, Symbol, Device, Tensor, List, Tuple, Dict };

  Kind kind = Kind::None;
  bool b = false;
  std::int64_t i = 0;
  double f = 0.0;
  std::string text;  // String contents; Symbol/Device spelling; DType spelling as written
  DType dtype = DType::Float32;
  TraceTensor tensor;
  std::vector<TraceValue> items;                            // List, Tuple
  std::vector<std::pair<std::string, TraceValue>> entries;  // Dict, in written order
  int col = 0;  // 1-based column where the value starts

  /// Python-like rendering for messages (`T([4, 8], f16)`, `[1, 2]`, `'cuda'`).
  std::string describe() const;
};

/// One `cnt: N, ((args...), {kwargs})` line.
struct TraceCall {
  std::int64_t count = 0;
  std::vector<TraceValue> args;
  std::vector<std::pair<std::string, TraceValue>> kwargs;
};

/// Why a line did not parse, and where (1-based column).
struct TraceSyntaxError {
  int col = 0;
  std::string message;
};

/// Parses the whole text of one call line (starting with `cnt:`). Returns false and fills `err` on any syntax
/// problem; never throws.
bool parse_call_line(std::string_view line, TraceCall& out, TraceSyntaxError& err);

/// One parsed call together with the operator header it belongs to.
struct TraceEntry {
  int line = 0;         // 1-based line of the `cnt:` line
  std::string op;       // as written in the header: "aten.add.Tensor"
  int op_line = 0;      // line of that header
  TraceCall call;
};

/// A whole trace file: every call line that parsed, and one located warning per line that did not.
struct TraceFile {
  std::string path;
  int line_count = 0;         // lines in the file
  int call_lines = 0;         // lines that are calls (parsed or not)
  std::vector<TraceEntry> entries;
  DiagnosticList problems;    // warnings: lines that are reported instead of converted
};

/// Splits `text` into lines and parses each: `Operator: <name>` headers, `cnt:` calls, blank lines. Anything else
/// (and a call before any header) becomes a located warning; the other lines still parse.
TraceFile parse_trace_text(const std::string& path, std::string_view text);

}  // namespace opcheck::traces
