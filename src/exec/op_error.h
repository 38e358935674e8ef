// Errors ops raise, named as Python names them, and the checks made on them (expects_error, unsupported kernels).
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "opcheck/case.h"
#include "opcheck/result.h"

namespace opcheck::exec {

/// An exception an op raised, as Python would show it.
struct OpError {
  std::string type;     // Python class: RuntimeError (c10::Error), IndexError, ValueError, TypeError, ...
  std::string message;  // the message without the C++ backtrace
  bool compile_failed = false;  // torch.compile failed (--compile-backend): stage FAILED_COMPILE

  std::string text() const { return type + ": " + message; }
};

/// Maps a caught exception to its Python class: c10::IndexError -> IndexError, c10::ValueError -> ValueError,
/// c10::TypeError -> TypeError, c10::NotImplementedError -> NotImplementedError, c10::LinAlgError -> LinAlgError,
/// c10::OutOfMemoryError -> OutOfMemoryError, other c10::Error -> RuntimeError, std::invalid_argument ->
/// ValueError, std::out_of_range -> IndexError, anything else -> RuntimeError.
OpError op_error_of(std::exception_ptr e);

/// Whether `e` says memory could not be allocated: c10::OutOfMemoryError, std::bad_alloc, or the CPU allocator's own
/// refusal ("DefaultCPUAllocator: can't allocate memory", which it raises as a plain c10::Error).
bool is_allocation_failure(std::exception_ptr e);

/// The INVALID_CASE message of a case whose handling by opcheck itself (its inputs, its outputs' host copies and
/// comparison) ran out of memory in `phase`: located at the case, saying it is too large, not that the device failed.
std::string own_allocation_failure(const Case& c, CasePhase phase, const std::string& error);

/// Python's issubclass over the exception classes ops raise (`NotImplementedError` is a `RuntimeError`, everything
/// is an `Exception`). Dotted names (torch.linalg.LinAlgError) compare by their last part.
bool is_python_subclass(const std::string& type, const std::string& base);

/// Whether `e` is what `expected` asks for (type by issubclass, `match` as a regex search on the message);
/// otherwise `why` says what differs.
bool error_matches(const OpError& e, const ExpectedError& expected, std::string& why);

/// The device has no kernel for this op or dtype ("not implemented for", "Could not run ... backend").
bool is_not_supported(const OpError& e);

/// The backends the dispatcher's "'aten::x' is only available for these backends: [...]" names, without the
/// dispatch keys that are no backend (Autograd*, Functionalize, Python, ...); none when the message has no list.
std::vector<std::string> backends_with_kernel(const std::string& message);

/// The first line of a NOT_SUPPORTED message: the op the dispatcher could not run (named by the error, else
/// `raised_op`, the op that raised it as the dispatcher saw it, else `op`), the dtype when the error names one
/// ("not implemented for 'Half'"), the dispatch key, and for the dispatcher's error the backends that have a kernel
/// (its whole text is kilobytes), else the error's first line: "aten::cos.out has no kernel for PrivateUse1
/// (pyloop); kernels for: CPU, Meta, QuantizedCPU", "aten::fill_.Scalar for Half has no kernel for PrivateUse1
/// (loopback): NotImplementedError: ...".
std::string not_supported_headline(const OpError& e, const std::string& op, const std::string& raised_op,
                                   const std::string& dispatch_key);

/// A CPU kernel lacks the dtype ("... not implemented for 'Half'"): the reference computes in float32 instead.
bool is_dtype_gap(const OpError& e);

/// "RuntimeError matching 'view'" for messages.
std::string describe_expected(const ExpectedError& expected);

}  // namespace opcheck::exec
