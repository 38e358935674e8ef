#include "report/failure_groups.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "common/call_signature.h"
#include "common/op_names.h"
#include "common/text.h"
#include "judge/op_categories.h"
#include "opcheck/dtype.h"

namespace opcheck {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

/// c10's ScalarType names as errors print them ("not implemented for 'Half'"), besides the spellings parse_dtype
/// accepts.
bool is_dtype_word(std::string_view w) {
  static const std::set<std::string_view> scalar_types = {
      "Half", "Float", "Double", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool",
      "ComplexHalf", "ComplexFloat", "ComplexDouble", "UInt16", "UInt32", "UInt64", "QInt8", "QUInt8", "QInt32"};
  if (scalar_types.count(w) || parse_dtype(w)) return true;
  for (std::string_view p : {"Float8_", "float8_", "torch.float8_"})
    if (w.substr(0, p.size()) == p) return true;
  return false;
}

/// A word of path characters that is a path: one holding a '/' and a letter that starts at a root ("/usr/lib",
/// "~/x", "./a", "../b"), is a URL ("https://..."), or has a segment with a dot or a colon (a file, "a/b.py:12").
/// Words joined by slashes ("CPU/CUDA/MKLDNN", "fp16/bf16", "and/or") are prose: their names stay.
bool is_path(std::string_view word) {
  if (word.find('/') == std::string_view::npos ||
      !std::any_of(word.begin(), word.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }))
    return false;
  if (word[0] == '/' || word[0] == '~' || word[0] == '.' || word.find("://") != std::string_view::npos) return true;
  return word.find_first_of(".:") != std::string_view::npos;
}

std::string mask_paths(std::string_view text) {
  auto path_char = [](char c) { return ident_char(c) || std::string_view("./-~+:@%=").find(c) != std::string_view::npos; };
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!path_char(text[i]) && text[i] != '/') {
      out += text[i++];
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && (path_char(text[j]) || text[j] == '/')) ++j;
    const std::string_view word = text.substr(i, j - i);
    out += is_path(word) ? std::string("PATH") : std::string(word);
    i = j;
  }
  return out;
}

/// Length of the number starting at text[i] (sign, digits, fraction, exponent), 0 when none starts there.
std::size_t number_length(std::string_view text, std::size_t i) {
  std::size_t j = i;
  if (j < text.size() && (text[j] == '-' || text[j] == '+')) ++j;
  const std::size_t digits_from = j;
  while (j < text.size() && digit(text[j])) ++j;
  if (j + 1 < text.size() && text[j] == '.' && digit(text[j + 1])) {
    ++j;
    while (j < text.size() && digit(text[j])) ++j;
  }
  if (j == digits_from) return 0;
  if (j < text.size() && (text[j] == 'e' || text[j] == 'E')) {
    std::size_t k = j + 1;
    if (k < text.size() && (text[k] == '-' || text[k] == '+')) ++k;
    if (k < text.size() && digit(text[k])) {
      while (k < text.size() && digit(text[k])) ++k;
      j = k;
    }
  }
  return j - i;
}

/// An identifier with its qualifiers: "aten::mul.Tensor", "torch.float32", "as_strided".
std::size_t identifier_length(std::string_view text, std::size_t i) {
  std::size_t j = i;
  while (j < text.size()) {
    while (j < text.size() && ident_char(text[j])) ++j;
    if (j + 2 < text.size() && text.compare(j, 2, "::") == 0 && ident_start(text[j + 2])) j += 2;
    else if (j + 1 < text.size() && text[j] == '.' && ident_char(text[j + 1])) j += 1;
    else break;
  }
  return j - i;
}

/// Numbers become N, addresses ADDR, dtype names DTYPE; identifiers stay (the digits inside "conv2d" or "bf16" are
/// part of a name, not a value).
std::string mask_values(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool after_word = !out.empty() && (ident_char(out.back()) || out.back() == ')' || out.back() == ']');
    if (ident_start(c)) {
      const std::size_t n = identifier_length(text, i);
      const std::string_view w = text.substr(i, n);
      out += is_dtype_word(w) ? "DTYPE" : (w == "inf" || w == "nan" || w == "NaN") ? "N" : std::string(w);
      i += n;
    } else if (c == '0' && i + 2 < text.size() && (text[i + 1] == 'x' || text[i + 1] == 'X') &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      i += 2;
      while (i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i]))) ++i;
      out += "ADDR";
    } else if (const std::size_t n = ((c == '-' || c == '+') && after_word) ? 0 : number_length(text, i)) {
      out += "N";
      i += n;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

/// "[N, N, N]" and "(N, N)" (shapes, strides, indices) become "[*]" and "(*)": the same bug at another rank is the
/// same bug.
std::string mask_shapes(const std::string& text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char open = text[i];
    const char close = open == '[' ? ']' : open == '(' ? ')' : 0;
    const std::size_t end = close ? text.find(close, i + 1) : std::string::npos;
    if (end != std::string::npos && end > i + 1) {
      const std::string inner = text.substr(i + 1, end - i - 1);
      std::string rest = inner;
      for (char ch : {',', ' ', 'N'}) rest.erase(std::remove(rest.begin(), rest.end(), ch), rest.end());
      const bool all_numbers = rest.empty() && inner.find('N') != std::string::npos;
      // "N" alone in parentheses is a count in prose ("(N)"); in brackets it is a 1-d shape or an index.
      if (all_numbers && (open == '[' || inner.find(',') != std::string::npos)) {
        out += open;
        out += '*';
        out += close;
        i = end + 1;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

void replace_all(std::string& s, const std::string& what, const std::string& with) {
  if (what.empty()) return;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + with.size()))
    s.replace(at, what.size(), with);
}

constexpr const char* kAlsoDiffers = " (also differs between runs)";

/// The message's first paragraph without the device-ops note (the ops are part of the signature on their own), its
/// own case id and manifest masked (crash messages name the case they ran, rejected cases their file), at most a
/// few lines.
std::string message_head(const CaseRecord& rec) {
  std::string msg = rec.result.message;
  // A traced module failure leads with where inside the module it was traced; the traced call's own failure, which
  // an op case of that call would report alike, follows: that is the bug's identity.
  if (!rec.result.traced_op.empty()) msg.erase(0, msg.find('\n') == std::string::npos ? 0 : msg.find('\n') + 1);
  replace_all(msg, rec.id, "CASE");
  if (!rec.deduplicated_from.empty()) replace_all(msg, rec.deduplicated_from, "CASE");
  replace_all(msg, rec.file, "PATH");  // a manifest named without a folder ("m.yaml:3: ...") has no '/' to find
  constexpr std::size_t kMaxLines = 8, kMaxChars = 400;
  std::string head;
  std::size_t lines = 0, from = 0;
  while (from <= msg.size() && lines < kMaxLines) {
    std::size_t eol = msg.find('\n', from);
    if (eol == std::string::npos) eol = msg.size();
    const std::string_view line = trim_blanks(std::string_view(msg).substr(from, eol - from), " \t\r");
    from = eol + 1;
    if (line.empty()) {
      if (lines) break;
      continue;
    }
    if (line.rfind("on the device: ", 0) == 0) continue;
    head += (lines++ ? "\n" : "") + std::string(line);
  }
  // Whether the runs also differed depends on what the memory held: a detail of the group, not the bug's identity.
  replace_all(head, kAlsoDiffers, "");
  if (head.size() > kMaxChars) {
    std::size_t cut = kMaxChars;  // at a character's first byte: the signature stays valid UTF-8 in every report
    while (cut > 0 && (static_cast<unsigned char>(head[cut]) & 0xC0) == 0x80) --cut;
    head.resize(cut);
  }
  return head;
}

bool wrong_result(Stage s) { return s == Stage::INCORRECT_RESULT || s == Stage::NONDETERMINISTIC; }

std::string op_namespace(const std::string& op) {
  const auto at = op.find("::");
  return at == std::string::npos ? std::string() : op.substr(0, at);
}

/// "as_strided" of "aten::as_strided", "fill_" of "aten::fill_.Scalar".
std::string base_name(const std::string& op) {
  const auto ns = op.find("::");
  const std::string name = ns == std::string::npos ? op : op.substr(ns + 2);
  return name.substr(0, name.find('.'));
}

/// The device op a kernel's own words name without its namespace ("as_strided: storage offset ...", "index_select():
/// ..."): an identifier right before ':' or '(', or one with an underscore, that is the base name of an op that
/// reached the device. A word of prose ("cannot add") is neither.
std::string device_op_named_in(const std::string& text, const CaseRecord& rec) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!ident_start(text[i]) || (i > 0 && ident_char(text[i - 1]))) continue;
    const std::size_t n = identifier_length(text, i);
    const std::string word = text.substr(i, n);
    const char next = i + n < text.size() ? text[i + n] : '\0';
    i += n ? n - 1 : 0;
    if (next != ':' && next != '(' && word.find('_') == std::string::npos) continue;
    for (const DeviceOp& d : rec.result.device_ops)
      if (base_name(d.op) == word) return d.op;
  }
  return {};
}

/// The first op the text names ("aten::rsqrt", "'aten::cos.out'"), in a namespace ops live in: aten, prims, or one of
/// the record's own ops (a backend's custom ops); C++ names such as c10::Error are not ops. Else a device op the text
/// names without its namespace.
std::string op_named_in(const std::string& text, const CaseRecord& rec) {
  std::set<std::string> namespaces = {"aten", "prims"};
  for (const std::string& op : split_list(rec.result.resolved_op)) namespaces.insert(op_namespace(op));
  for (const DeviceOp& d : rec.result.device_ops) namespaces.insert(op_namespace(d.op));
  namespaces.erase("");
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!ident_start(text[i]) || (i > 0 && ident_char(text[i - 1]))) continue;
    const std::size_t n = identifier_length(text, i);
    const std::string word = text.substr(i, n);
    if (namespaces.count(op_namespace(word)) && word.find("::") + 2 < word.size()) return word;
    i += n ? n - 1 : 0;
  }
  return device_op_named_in(text, rec);
}

std::string case_op(const CaseRecord& rec) { return rec.result.resolved_op.empty() ? rec.op : rec.result.resolved_op; }

bool is_case_op(const CaseRecord& rec, const std::string& op) {
  const std::vector<std::string> own = split_list(case_op(rec));
  return std::find(own.begin(), own.end(), op) != own.end();
}

/// The op a raised error happened in: named by the error; else the op that raised it, as the dispatcher saw it (the
/// innermost op active on the device when it was thrown); else, for a record without it, the last op of the call
/// that computed (not an allocation, view or copy around it); else the op the case calls.
std::string raising_op(const std::string& head, const CaseRecord& rec) {
  if (std::string op = op_named_in(head, rec); !op.empty()) return op;
  for (const DeviceOp& d : rec.result.device_ops)
    if (d.raised) return d.op;
  for (auto d = rec.result.device_ops.rbegin(); d != rec.result.device_ops.rend(); ++d)
    if (d->in_call && d->via != DeviceOpVia::Composite && !is_plumbing_op(d->op)) return d->op;
  return case_op(rec);
}

/// The ops a wrong result may have computed: those that ran on the device during its call, without the
/// allocations, views and copies around them unless the case calls one of them.
std::set<std::string> computing_ops(const CaseRecord& rec, bool composites) {
  std::set<std::string> out;
  for (const DeviceOp& d : rec.result.device_ops)
    if (d.in_call && (composites || d.via != DeviceOpVia::Composite) && (!is_plumbing_op(d.op) || is_case_op(rec, d.op)))
      out.insert(d.op);
  return out;
}

/// A wrong result's op: the case's resolved op and, sorted, the ops that computed on the device during its call (a
/// decomposition's inner ops among them), which is where the wrong value was computed.
std::string wrong_result_op(const CaseRecord& rec) {
  const std::set<std::string> ran = computing_ops(rec, true);
  std::string op = case_op(rec);
  if (!ran.empty()) op += " on " + join(ran);
  return op;
}

/// A wrong result the transfer itself explains (the runner's copy round trip differed): "the device's
/// aten::_copy_from changes values: a copy round trip differs" leads its message. The op it names, else "".
std::string transfer_suspect(const CaseRecord& rec) {
  static const std::string kLead = "the device's ", kTail = " changes values: a copy round trip differs";
  const std::string& m = rec.result.message;
  const std::string line = m.substr(0, m.find('\n'));
  if (line.rfind(kLead, 0) != 0 || line.size() <= kLead.size() + kTail.size() ||
      line.compare(line.size() - kTail.size(), kTail.size(), kTail) != 0)
    return {};
  return line.substr(kLead.size(), line.size() - kLead.size() - kTail.size());
}

/// A raised error's words without the runner's account of where it surfaced ("the device raised ", "moving inputs
/// to loopback:0 failed: "): a transfer that fails is one bug whether it moved an input, an output, or ran in the
/// call.
std::string error_itself(const std::string& head) {
  static const std::string kRaised = "the device raised ", kFailed = " failed: ";
  if (head.rfind(kRaised, 0) == 0) return head.substr(kRaised.size());
  for (const char* lead : {"moving inputs to ", "moving outputs from "}) {
    if (head.rfind(lead, 0) != 0) continue;
    const auto failed = head.find(kFailed);
    return failed == std::string::npos ? head : head.substr(failed + kFailed.size());
  }
  return head;
}

/// A failing record's signature in its parts.
struct SignatureParts {
  Stage stage;
  std::string op, text;
};

SignatureParts signature_parts(const CaseRecord& rec) {
  const std::string head = message_head(rec);
  if (wrong_result(rec.result.stage)) {
    if (std::string transfer = transfer_suspect(rec); !transfer.empty())
      return {rec.result.stage, transfer, masked_error_text(head.substr(0, head.find('\n')))};
    return {rec.result.stage, rec.result.traced_op.empty() ? wrong_result_op(rec) : rec.result.traced_op,
            masked_error_text(head)};
  }
  std::string op = raising_op(head, rec);
  // A missing kernel is named with its dtype where the headline has one ("aten::fill_.Scalar for Half has no kernel
  // for ..."): one group per kernel and dtype the device lacks.
  if (rec.result.stage == Stage::NOT_SUPPORTED && head.rfind(op + " for ", 0) == 0) {
    const std::size_t from = op.size() + 5, to = head.find(" has no kernel", from);
    if (to != std::string::npos && identifier_length(head, from) == to - from) op = head.substr(0, to);
  }
  // The stage is the case's own (the exec layer makes a transfer op's error FAILED_TRANSFER wherever it raised); a
  // failed transfer is one bug whether it moved an input, an output or ran in the call: its text is the error itself.
  if (rec.result.stage == Stage::FAILED_TRANSFER && is_transfer_op(op))
    return {rec.result.stage, op, masked_error_text(error_itself(head))};
  return {rec.result.stage, op, masked_error_text(head)};
}

std::string joined(const SignatureParts& p) { return std::string(stage_name(p.stage)) + " | " + p.op + " | " + p.text; }

/// The ops a wrong result may be blamed on: those that computed on the device during the call (not the
/// allocations, views and copies around them); a composite only dispatches to its inner ops, so it is a suspect only
/// when nothing else ran; with no device ops, the case's op.
std::set<std::string> suspects(const CaseRecord& rec) {
  if (!rec.result.traced_op.empty()) return {rec.result.traced_op};  // a module case's trace named the op
  if (std::set<std::string> computed = computing_ops(rec, false); !computed.empty()) return computed;
  if (std::set<std::string> any = computing_ops(rec, true); !any.empty()) return any;
  std::set<std::string> own;
  for (const std::string& op : split_list(case_op(rec))) own.insert(op);
  return own;
}

/// For each op, the unique wrong results whose suspects hold it and the unique passes whose calls ran it; and the ops
/// that failed as a case's own op, computed on the device (not a composite around others).
struct OpTally {
  std::map<std::string, std::int64_t> failed, passed;
  std::set<std::string> failed_alone;
};

OpTally tally_ops(const RunReport& report) {
  OpTally t;
  std::set<std::string> seen;
  for (const CaseRecord& rec : report.cases) {
    if (!rec.key.empty() && !seen.insert(rec.key).second) continue;  // a deduplicated call ran once
    const std::set<std::string> ran = suspects(rec);
    if (rec.result.stage == Stage::PASSED && rec.outcome == Outcome::Passed) {
      for (const std::string& op : ran) ++t.passed[op];
    } else if (in_failure_groups(rec) && wrong_result(rec.result.stage)) {
      for (const std::string& op : ran) ++t.failed[op];
      for (const std::string& op : split_list(case_op(rec)))
        if (ran.count(op)) t.failed_alone.insert(op);
    }
  }
  return t;
}

/// The op a wrong result is blamed on, among its suspects: an op that failed as a case's own op outranks the others
/// (the copies and allocations around every call tie with it on the score in a small run); then the highest Ochiai
/// score; then the case's own op; then the first by name.
std::string blamed_op(const CaseRecord& rec, const OpTally& t) {
  const std::vector<std::string> own = split_list(case_op(rec));
  std::string best;
  std::tuple<bool, double, bool> best_rank{false, -1.0, false};
  for (const std::string& op : suspects(rec)) {
    const auto f = t.failed.count(op) ? t.failed.at(op) : 0, p = t.passed.count(op) ? t.passed.at(op) : 0;
    // Rounded, so two equal scores computed apart compare equal.
    const double score = f + p > 0 ? std::round(1e9 * static_cast<double>(f) / std::sqrt(static_cast<double>(f + p))) : 0.0;
    const std::tuple<bool, double, bool> rank{t.failed_alone.count(op) > 0, score,
                                              std::find(own.begin(), own.end(), op) != own.end()};
    if (best.empty() || rank > best_rank) {
      best = op;
      best_rank = rank;
    }
  }
  return best;
}

/// Bytes of the tensors an input signature names ("op(bf16[4,8], fp32[], [i64[3]], 2)"): each DTYPE[DIMS].
std::int64_t input_bytes(const std::string& signature) {
  std::int64_t total = 0;
  for (std::size_t i = 0; i < signature.size(); ++i) {
    if (!ident_start(signature[i]) || (i > 0 && ident_char(signature[i - 1]))) continue;
    std::size_t j = i;
    while (j < signature.size() && ident_char(signature[j])) ++j;
    const std::optional<DType> t = parse_dtype(std::string_view(signature).substr(i, j - i));
    if (t && j < signature.size() && signature[j] == '[') {
      std::int64_t elements = 1;
      const std::size_t close = signature.find(']', j);
      for (const std::string& dim : split_list(signature.substr(j + 1, close - j - 1)))
        elements *= std::max<std::int64_t>(0, std::atoll(dim.c_str()));
      total += elements * dtype_size(*t);
    }
    i = j;
  }
  return total;
}

void add_sorted(std::vector<std::string>& v, const std::string& s) {
  const auto at = std::lower_bound(v.begin(), v.end(), s);
  if (s.empty() || (at != v.end() && *at == s)) return;
  v.insert(at, s);
}

}  // namespace

std::string record_dtype(const CaseRecord& rec) {
  std::string dtype = call_dtype(rec.call);
  return dtype.empty() ? rec.dtype : dtype;
}

std::string masked_error_text(std::string_view text) { return mask_shapes(mask_values(mask_paths(text))); }

bool in_failure_groups(const CaseRecord& rec) {
  return rec.outcome == Outcome::Failed || rec.outcome == Outcome::Error || rec.outcome == Outcome::NotSupported;
}

std::string failure_signature(const CaseRecord& rec) {
  if (!in_failure_groups(rec)) return {};
  return joined(signature_parts(rec));
}

std::vector<FailureGroup> group_failures(const RunReport& report) {
  const OpTally tally = tally_ops(report);
  std::map<std::string, FailureGroup> by_signature;
  std::map<std::string, std::set<std::string>> keys;  // per signature, the dedupe keys seen
  std::map<std::string, std::int64_t> example_bytes;
  for (const CaseRecord& rec : report.cases) {
    if (!in_failure_groups(rec)) continue;
    SignatureParts parts = signature_parts(rec);
    if (wrong_result(parts.stage) && transfer_suspect(rec).empty()) parts.op = blamed_op(rec, tally);
    const std::string sig = joined(parts);
    FailureGroup& g = by_signature[sig];
    if (g.count == 0) {
      g.signature = sig;
      g.stage = parts.stage;
      g.op = parts.op;
      g.text = parts.text;
    }
    ++g.count;
    if (rec.result.message.find(kAlsoDiffers) != std::string::npos) ++g.differs_between_runs;
    if (rec.key.empty() || keys[sig].insert(rec.key).second) ++g.unique;
    g.cases.push_back(rec.id);
    add_sorted(g.ops, rec.op);
    add_sorted(g.models, rec.model);
    add_sorted(g.dtypes, record_dtype(rec));
    const std::int64_t bytes = input_bytes(rec.signature.empty() ? rec.call : rec.signature);
    if (g.example.empty() || bytes < example_bytes[sig]) {
      g.example = rec.id;
      example_bytes[sig] = bytes;
    }
  }
  std::vector<FailureGroup> groups;
  for (auto& [sig, g] : by_signature) {
    // The example's own minimal call, else one shrunk from another member (merged shards each shrank their own).
    if (auto shrunk = report.info.shrunk.find(g.example); shrunk != report.info.shrunk.end()) g.minimal = shrunk->second;
    for (std::size_t i = 0; g.minimal.empty() && i < g.cases.size(); ++i)
      if (auto shrunk = report.info.shrunk.find(g.cases[i]); shrunk != report.info.shrunk.end()) g.minimal = shrunk->second;
    groups.push_back(std::move(g));
  }
  std::sort(groups.begin(), groups.end(), [](const FailureGroup& a, const FailureGroup& b) {
    return a.count != b.count ? a.count > b.count : a.signature < b.signature;
  });
  return groups;
}

}  // namespace opcheck
