#include "exec/op_error.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <new>
#include <regex>
#include <stdexcept>

#include "exec/pch.h"
#include "common/text.h"
#include "exec/python_host.h"

namespace opcheck::exec {
namespace {

std::string last_part(const std::string& s) {
  const auto dot = s.rfind('.');
  return dot == std::string::npos ? s : s.substr(dot + 1);
}

/// The parent of each exception class ops can raise (Python's builtin hierarchy plus torch's subclasses).
const std::map<std::string, std::string>& python_parents() {
  static const std::map<std::string, std::string> parents = {
      {"NotImplementedError", "RuntimeError"},
      {"LinAlgError", "RuntimeError"},
      {"_LinAlgError", "RuntimeError"},
      {"OutOfMemoryError", "RuntimeError"},
      {"RuntimeError", "Exception"},
      {"IndexError", "LookupError"},
      {"KeyError", "LookupError"},
      {"LookupError", "Exception"},
      {"ValueError", "Exception"},
      {"TypeError", "Exception"},
      {"AssertionError", "Exception"},
      {"ArithmeticError", "Exception"},
      {"ZeroDivisionError", "ArithmeticError"},
      {"OverflowError", "ArithmeticError"},
      {"Exception", "BaseException"},
  };
  return parents;
}

std::string strip_trailing_space(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

OpError op_error_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const c10::IndexError& x) {
    return {"IndexError", strip_trailing_space(x.what_without_backtrace())};
  } catch (const c10::ValueError& x) {
    return {"ValueError", strip_trailing_space(x.what_without_backtrace())};
  } catch (const c10::TypeError& x) {
    return {"TypeError", strip_trailing_space(x.what_without_backtrace())};
  } catch (const c10::NotImplementedError& x) {
    return {"NotImplementedError", strip_trailing_space(x.what_without_backtrace())};
  } catch (const c10::LinAlgError& x) {
    return {"LinAlgError", strip_trailing_space(x.what_without_backtrace())};
  } catch (const c10::OutOfMemoryError& x) {
    return {"OutOfMemoryError", strip_trailing_space(x.what_without_backtrace())};
  } catch (const c10::Error& x) {
    return {"RuntimeError", strip_trailing_space(x.what_without_backtrace())};
  } catch (const PythonError& x) {
    return {x.type, strip_trailing_space(x.what())};
  } catch (const CompileError& x) {
    return {"CompileError", strip_trailing_space(x.what()), true};
  } catch (const std::invalid_argument& x) {
    return {"ValueError", x.what()};
  } catch (const std::out_of_range& x) {
    return {"IndexError", x.what()};
  } catch (const std::exception& x) {
    return {"RuntimeError", x.what()};
  } catch (...) {
    return {"RuntimeError", "unknown C++ exception"};
  }
}

bool is_allocation_failure(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const c10::OutOfMemoryError&) {
    return true;
  } catch (const std::bad_alloc&) {
    return true;
  } catch (const c10::Error& x) {
    const std::string m = x.what_without_backtrace();
    return m.find("DefaultCPUAllocator: can't allocate memory") != std::string::npos ||
           m.find("DefaultCPUAllocator: not enough memory") != std::string::npos;
  } catch (...) {
    return false;
  }
}

std::string own_allocation_failure(const Case& c, CasePhase phase, const std::string& error) {
  const char* doing = phase == CasePhase::Inputs      ? "build the case's inputs"
                      : phase == CasePhase::Reference ? "compute the case's CPU reference"
                      : phase == CasePhase::Device    ? "take the device's outputs"
                                                      : "copy and compare the case's outputs";
  return (c.loc.file.empty() ? std::string() : c.loc.file + ":" + std::to_string(c.loc.line) + ": ") +
         "opcheck cannot allocate the memory to " + doing + " (" + error.substr(0, error.find('\n')) +
         "): the case is too large for this machine, whatever the device does. Fix: make its sizes smaller";
}

bool is_python_subclass(const std::string& type, const std::string& base) {
  const std::string want = last_part(base);
  std::string t = last_part(type);
  for (int depth = 0; depth < 10; ++depth) {
    if (t == want) return true;
    auto it = python_parents().find(t);
    if (it == python_parents().end()) return want == "BaseException" || want == "Exception";
    t = it->second;
  }
  return false;
}

bool error_matches(const OpError& e, const ExpectedError& expected, std::string& why) {
  if (!expected.type.empty() && !is_python_subclass(e.type, expected.type)) {
    why = "raised " + e.text() + " (not a " + expected.type + ")";
    return false;
  }
  if (!expected.match.empty()) {
    try {
      if (!std::regex_search(e.message, std::regex(expected.match, std::regex::ECMAScript))) {
        why = "raised " + e.text() + " (message does not match '" + expected.match + "')";
        return false;
      }
    } catch (const std::regex_error& x) {
      why = "expects_error.match '" + expected.match + "' is not a valid regex: " + x.what();
      return false;
    }
  }
  return true;
}

bool is_not_supported(const OpError& e) {
  static const std::regex could_not_run("Could not run '[^']*' with arguments from the '[^']*' backend");
  // A device without a pinned-memory allocator cannot honour pin_memory=True: a capability it lacks, not a wrong
  // result.
  return e.type == "NotImplementedError" || e.message.find("not implemented for") != std::string::npos ||
         std::regex_search(e.message, could_not_run) ||
         e.message.find("no pinned memory allocator is available") != std::string::npos;
}

std::vector<std::string> backends_with_kernel(const std::string& message) {
  static const std::regex available("is only available for these backends: \\[([^\\]]*)\\]");
  // Dispatch keys the dispatcher lists beside the backends that are none: autograd, tracing, functorch's layers.
  static const char* const not_backends[] = {"Autograd", "Autocast", "Functionalize", "FuncTorch", "Python",
                                             "BackendSelect", "Named", "Conjugate", "Negative", "ZeroTensor",
                                             "ADInplaceOrView", "Tracer", "Batched", "VmapMode", "PreDispatch",
                                             "Fake", "Undefined"};
  std::smatch m;
  if (!std::regex_search(message, m, available)) return {};
  std::vector<std::string> out;
  for (auto& key : split_list(m[1].str(), ','))
    if (std::none_of(std::begin(not_backends), std::end(not_backends),
                     [&key](const char* prefix) { return key.rfind(prefix, 0) == 0; }))
      out.push_back(std::move(key));
  return out;
}

std::string not_supported_headline(const OpError& e, const std::string& op, const std::string& raised_op,
                                   const std::string& dispatch_key) {
  static const std::regex could_not_run("Could not run '([^']+)'");
  static const std::regex for_dtype("not implemented for '([A-Za-z0-9_]+)'");
  std::smatch m;
  const bool dispatcher = std::regex_search(e.message, m, could_not_run);
  const std::string missing = dispatcher ? m[1].str() : !raised_op.empty() ? raised_op : op;
  const std::string dtype = std::regex_search(e.message, m, for_dtype) ? " for " + m[1].str() : std::string();
  const std::string head = missing + dtype + " has no kernel for " + dispatch_key;
  // The dispatcher's account (why it could not run the op, a URL, every key with a kernel) is kilobytes: the line
  // keeps the backends that have one, and the whole text follows in the record.
  if (dispatcher) {
    constexpr std::size_t kShown = 8;
    const std::vector<std::string> backends = backends_with_kernel(e.message);
    if (backends.empty()) return head + " (the dispatcher names no backend that has one)";
    std::string list;
    for (std::size_t i = 0; i < backends.size() && i < kShown; ++i) list += (i ? ", " : "") + backends[i];
    if (backends.size() > kShown) list += " and " + std::to_string(backends.size() - kShown) + " more";
    return head + "; kernels for: " + list;
  }
  return head + ": " + e.message.substr(0, e.message.find('\n'));
}

bool is_dtype_gap(const OpError& e) {
  static const std::regex gap("not implemented for '(Half|BFloat16|ComplexHalf)'");
  return std::regex_search(e.message, gap);
}

std::string describe_expected(const ExpectedError& expected) {
  std::string out = expected.type.empty() ? "an error" : expected.type;
  if (!expected.match.empty()) out += " matching '" + expected.match + "'";
  return out;
}

}  // namespace opcheck::exec
