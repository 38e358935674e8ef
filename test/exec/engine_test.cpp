// The Executor on device cpu (and on loopback where placement must show): stages, expects_error, in-place
// comparison, reference upcast, size limits.
#include <gtest/gtest.h>

#include <mutex>
#include <regex>

#include <ATen/record_function.h>

#include "exec/engine.h"
#include "exec/op_error.h"
#include "test_support.h"

namespace opcheck::exec {
namespace {

using opcheck::test::ints;
using opcheck::test::make_case;
using opcheck::test::make_executor;
using opcheck::test::slice;
using opcheck::test::tensor_input;
using opcheck::test::tensor_spec;
using opcheck::test::value_input;

Executor& cpu() {
  static std::unique_ptr<Executor> e = make_executor();
  return *e;
}

Input f32(std::vector<std::int64_t> shape) { return tensor_input(tensor_spec(std::move(shape))); }

/// A [rows, cols] tensor laid out column-major (stride [1, rows]): not viewable as one flat dimension.
Input transposed(std::int64_t rows, std::int64_t cols) {
  TensorSpec t = tensor_spec({rows, cols});
  t.stride = {1, rows};
  return tensor_input(t);
}

/// The calls of one op the dispatcher sees while this lives (the reference's and the device runs'), each as the
/// devices of its arguments ("-" for an argument that is not a tensor): what opcheck ran where, seen from outside.
class ObservedCalls {
 public:
  explicit ObservedCalls(std::string op) {
    std::lock_guard<std::mutex> lock(mutex_);
    op_ = std::move(op);
    calls_.clear();
    handle_ = at::addGlobalCallback(
        at::RecordFunctionCallback(&ObservedCalls::on_call).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
  }
  ~ObservedCalls() { at::removeCallback(handle_); }
  ObservedCalls(const ObservedCalls&) = delete;
  ObservedCalls& operator=(const ObservedCalls&) = delete;

  std::vector<std::vector<std::string>> calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }

 private:
  static std::unique_ptr<at::ObserverContext> on_call(const at::RecordFunction& fn) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (op_ != fn.name()) return nullptr;
    std::vector<std::string> devices;
    for (const c10::IValue& v : fn.inputs())
      devices.push_back(v.isTensor() && v.toTensor().defined() ? v.toTensor().device().str() : "-");
    calls_.push_back(std::move(devices));
    return nullptr;
  }

  static inline std::mutex mutex_;
  static inline std::string op_;
  static inline std::vector<std::vector<std::string>> calls_;
  at::CallbackHandle handle_;
};

TEST(Engine, ReportsWhatItRan) {
  const Result r = cpu().run(make_case("torch.add", {f32({4, 8}), f32({4, 8})}));
  EXPECT_EQ(r.stage, Stage::PASSED) << r.message;
  EXPECT_EQ(r.outcome, Outcome::Passed);
  EXPECT_EQ(r.case_id, "test::torch.add");
  EXPECT_EQ(r.resolved_op, "aten::add.Tensor");
  EXPECT_FALSE(r.decomposed);
  EXPECT_FALSE(r.reference_upcast);
  ASSERT_EQ(r.input_digests.size(), 2u);
  EXPECT_TRUE(std::regex_match(r.input_digests[0], std::regex("[0-9a-f]{64}"))) << r.input_digests[0];
  EXPECT_NE(r.input_digests[0], r.input_digests[1]);  // per-input seeds
  EXPECT_EQ(r.figures.total, 32);
  EXPECT_EQ(r.figures.mismatched, 0);
  // Every phase that ran was timed (a phase left untimed stays at 0); nothing was compiled.
  EXPECT_GT(r.materialize_ms, 0.0);
  EXPECT_GT(r.reference_ms, 0.0);
  EXPECT_GT(r.device_ms, 0.0);
  EXPECT_GT(r.compare_ms, 0.0);
  EXPECT_EQ(r.compile_ms, 0.0);
  EXPECT_EQ(cpu().info().device, "cpu");
}

TEST(Engine, UnresolvableCasesAreErrorsAndTheRunGoesOn) {
  const Result bad = cpu().run(make_case("torch.flor", {f32({3})}));
  EXPECT_EQ(bad.stage, Stage::INVALID_CASE);
  EXPECT_EQ(bad.outcome, Outcome::Error);
  EXPECT_EQ(bad.message, "unknown op 'torch.flor' (did you mean torch.floor?)");
  const Result unbound = cpu().run(make_case("torch.ops.aten.view", {f32({1, 64}), value_input(PyValue::string("x"))}));
  EXPECT_EQ(unbound.stage, Stage::INVALID_CASE);
  EXPECT_NE(unbound.message.find("do not bind"), std::string::npos) << unbound.message;
  EXPECT_EQ(cpu().run(make_case("torch.floor", {f32({3})})).stage, Stage::PASSED);
  // Each says its kind, as a run and as validate --ops's check of the call alike; a case that passes has none.
  EXPECT_EQ(bad.kind, VerdictKind::UnknownOp);
  EXPECT_EQ(unbound.kind, VerdictKind::ArgumentsDoNotBind);
  EXPECT_EQ(cpu().check_call(make_case("torch.flor", {f32({3})})).kind, VerdictKind::UnknownOp);
  EXPECT_EQ(cpu().check_call(make_case("torch.ops.aten.view", {f32({1, 64}), value_input(PyValue::string("x"))})).kind,
            VerdictKind::ArgumentsDoNotBind);
  EXPECT_EQ(cpu().run(make_case("torch.floor", {f32({3})})).kind, VerdictKind::None);
}

TEST(Engine, InputsThatCannotBeBuiltAreFailedInput) {
  TensorSpec t = tensor_spec({2, 2}, DType::Float32, InitKind::Data);
  t.data = ints({1, 2, 3});  // 3 values for a 2x2 tensor
  const Result r = cpu().run(make_case("torch.neg", {tensor_input(t)}));
  EXPECT_EQ(r.stage, Stage::FAILED_INPUT);
  EXPECT_EQ(r.outcome, Outcome::Error);
  EXPECT_EQ(r.message.rfind("input 0: ", 0), 0u) << r.message;
}

TEST(Engine, NotATensorOpIsSkipped) {
  const Result r = cpu().run(make_case("torch._C._log_api_usage_once", {value_input(PyValue::string("python.nn_module"))}));
  EXPECT_EQ(r.stage, Stage::SKIPPED);
  EXPECT_EQ(r.outcome, Outcome::Skipped);
  EXPECT_NE(r.message.find("not a tensor op"), std::string::npos);
}

TEST(Engine, CasesOverTheSizeLimitAreSkipped) {
  ExecOptions opts;
  opts.max_case_bytes = 1000;
  auto e = make_executor(opts);
  const Result r = e->run(make_case("torch.neg", {f32({32, 32})}));
  EXPECT_EQ(r.stage, Stage::SKIPPED);
  EXPECT_NE(r.message.find("4096 bytes, more than --max-case-bytes (1000 bytes)"), std::string::npos) << r.message;
  EXPECT_EQ(e->run(make_case("torch.neg", {f32({4})})).stage, Stage::PASSED);
}

// ----------------------------------------------------------------------------------------------------------------
// expects_error

Case expecting(Case c, std::string type, std::string match) {
  c.expects_error = ExpectedError{std::move(type), std::move(match)};
  return c;
}

TEST(ExpectsError, BothRunsRaiseTheExpectedError) {
  const Case view = make_case("torch.Tensor.view", {transposed(4, 6), value_input(ints({24}))});
  const Result ok = cpu().run(expecting(view, "RuntimeError", "view size is not compatible"));
  EXPECT_EQ(ok.stage, Stage::PASSED) << ok.message;
  EXPECT_NE(ok.message.find("RuntimeError: view size is not compatible"), std::string::npos) << ok.message;
  // The regex is a search, not a full match.
  EXPECT_EQ(cpu().run(expecting(view, "RuntimeError", "^view.*stride")).stage, Stage::PASSED);
  EXPECT_EQ(cpu().run(expecting(view, "Exception", "")).stage, Stage::PASSED);
}

TEST(ExpectsError, WrongTypeOrMessageIsAnErrorOfTheCase) {
  const Case view = make_case("torch.Tensor.view", {transposed(4, 6), value_input(ints({24}))});
  const Result type = cpu().run(expecting(view, "IndexError", ""));
  EXPECT_EQ(type.stage, Stage::FAILED_REFERENCE);
  EXPECT_NE(type.message.find("not a IndexError"), std::string::npos) << type.message;
  const Result msg = cpu().run(expecting(view, "RuntimeError", "out of memory"));
  EXPECT_EQ(msg.stage, Stage::FAILED_REFERENCE);
  EXPECT_NE(msg.message.find("does not match 'out of memory'"), std::string::npos) << msg.message;
  const Result none = cpu().run(expecting(make_case("torch.neg", {f32({3})}), "RuntimeError", ""));
  EXPECT_EQ(none.stage, Stage::FAILED_REFERENCE);
  EXPECT_NE(none.message.find("did not raise"), std::string::npos) << none.message;
}

TEST(ExpectsError, C10ClassesMapToPythonClasses) {
  // index_select with a dim out of range raises c10::IndexError.
  const Case c = make_case("torch.index_select", {f32({3, 4}), value_input(PyValue::integer(5)),
                                                  tensor_input(tensor_spec({2}, DType::Int64, InitKind::Zeros))});
  EXPECT_EQ(cpu().run(expecting(c, "IndexError", "Dimension out of range")).stage, Stage::PASSED);
  EXPECT_EQ(cpu().run(expecting(c, "LookupError", "")).stage, Stage::PASSED);
  EXPECT_EQ(cpu().run(expecting(c, "RuntimeError", "")).stage, Stage::FAILED_REFERENCE);

  auto type_of = [](auto&& thrower) {
    try {
      thrower();
    } catch (...) {
      return op_error_of(std::current_exception()).type;
    }
    return std::string("nothing");
  };
  const c10::SourceLocation here{"f", "file", 1};
  EXPECT_EQ(type_of([&] { throw c10::Error(here, "x"); }), "RuntimeError");
  EXPECT_EQ(type_of([&] { throw c10::ValueError(here, "x"); }), "ValueError");
  EXPECT_EQ(type_of([&] { throw c10::TypeError(here, "x"); }), "TypeError");
  EXPECT_EQ(type_of([&] { throw c10::IndexError(here, "x"); }), "IndexError");
  EXPECT_EQ(type_of([&] { throw c10::NotImplementedError(here, "x"); }), "NotImplementedError");
  EXPECT_EQ(type_of([&] { throw c10::LinAlgError(here, "x"); }), "LinAlgError");
  EXPECT_EQ(type_of([&] { throw std::invalid_argument("x"); }), "ValueError");

  EXPECT_TRUE(is_python_subclass("NotImplementedError", "RuntimeError"));
  EXPECT_TRUE(is_python_subclass("LinAlgError", "torch.linalg.LinAlgError"));
  EXPECT_TRUE(is_python_subclass("LinAlgError", "RuntimeError"));
  EXPECT_TRUE(is_python_subclass("IndexError", "Exception"));
  EXPECT_FALSE(is_python_subclass("RuntimeError", "NotImplementedError"));
  EXPECT_FALSE(is_python_subclass("ValueError", "TypeError"));

  std::string why;
  EXPECT_FALSE(error_matches({"RuntimeError", "x"}, {"RuntimeError", "(unclosed"}, why));
  EXPECT_NE(why.find("not a valid regex"), std::string::npos) << why;
}

TEST(ErrorKinds, MissingKernelsAreNotSupported) {
  EXPECT_TRUE(is_not_supported({"RuntimeError", "\"exp_vml_cpu\" not implemented for 'Half'"}));
  EXPECT_TRUE(is_not_supported({"NotImplementedError",
                                "Could not run 'aten::exp.out' with arguments from the 'PrivateUse1' backend."}));
  EXPECT_TRUE(is_not_supported({"RuntimeError",
                                "Could not run 'aten::add.out' with arguments from the 'QuantizedCPU' backend. This..."}));
  EXPECT_TRUE(is_not_supported({"RuntimeError", "pin_memory=True requires a CUDA or other accelerator backend; no pinned "
                                                "memory allocator is available on this system."}));
  EXPECT_FALSE(is_not_supported({"RuntimeError", "shape '[2, 3]' is invalid for input of size 5"}));
  EXPECT_TRUE(is_dtype_gap({"RuntimeError", "\"addmm_impl_cpu_\" not implemented for 'Half'"}));
  EXPECT_FALSE(is_dtype_gap({"RuntimeError", "\"bitwise_and_cpu\" not implemented for 'Float'"}));
}

TEST(ErrorKinds, ANotSupportedHeadlineIsTheKernelTheDeviceAndTheBackendsThatHaveIt) {
  // The dispatcher's own account (kilobytes): exp of a quantized tensor, which has no QuantizedCPU kernel.
  const at::Tensor q = at::quantize_per_tensor(at::ones({2}), 0.1, 0, at::kQInt8);
  std::string message;
  try {
    (void)at::exp(q);
  } catch (const c10::Error& e) {
    message = e.what_without_backtrace();
  }
  ASSERT_NE(message.find("Could not run 'aten::exp.out'"), std::string::npos) << message;
  ASSERT_GT(message.size(), 2000u);
  const std::string head = not_supported_headline({"NotImplementedError", message}, "aten::exp", "", "QuantizedCPU (q)");
  // The backends are the dispatcher's list (CPU and Meta; PrivateUse1 too once a test binary loaded the loopback).
  const std::vector<std::string> have = backends_with_kernel(message);
  EXPECT_NE(std::find(have.begin(), have.end(), "CPU"), have.end()) << message;
  EXPECT_NE(std::find(have.begin(), have.end(), "Meta"), have.end()) << message;
  std::string listed;
  for (const auto& b : have) listed += (listed.empty() ? "" : ", ") + b;
  EXPECT_EQ(head, "aten::exp.out has no kernel for QuantizedCPU (q); kernels for: " + listed) << head;
  EXPECT_EQ(backends_with_kernel("no list here"), std::vector<std::string>{});
  // Not the dispatcher's: the error's first line, as it is.
  EXPECT_EQ(not_supported_headline({"RuntimeError", "\"exp_vml_cpu\" not implemented for 'Half'\nmore"}, "aten::exp", "",
                                   "PrivateUse1 (opencl)"),
            "aten::exp for Half has no kernel for PrivateUse1 (opencl): \"exp_vml_cpu\" not implemented for 'Half'");
}

// ----------------------------------------------------------------------------------------------------------------
// In-place ops: the mutated argument is compared as well as the output

TEST(InPlace, MutatedArgumentsAreCompared) {
  auto idx = tensor_spec({2}, DType::Int64, InitKind::Data);
  idx.data = ints({3, 0});
  const Result r = cpu().run(make_case("torch.index_copy_", {f32({1, 2, 5, 3}), value_input(PyValue::integer(2)),
                                                             tensor_input(idx), f32({1, 2, 2, 3})}));
  EXPECT_EQ(r.stage, Stage::PASSED) << r.message;
  EXPECT_EQ(r.resolved_op, "aten::index_copy_");

  // setitem returns None: the figures come from the tensor it wrote.
  const Result s = cpu().run(make_case("torch.setitem", {f32({3, 4}),
                                                         value_input(PyValue::sequence(PyValue::Kind::Tuple, {PyValue::integer(0), slice(PyValue::none(), PyValue::none(), PyValue::none())})),
                                                         value_input(PyValue::real(5.0))}));
  EXPECT_EQ(s.stage, Stage::PASSED) << s.message;
  EXPECT_EQ(s.figures.total, 12);
}

TEST(InPlace, ADifferenceInTheMutatedArgumentFailsTheCase) {
  // A float64 reference of an in-place float32 matrix product differs from the float32 run in the last bits: with
  // an exact comparison both the returned alias and the mutated argument are reported.
  ExecOptions opts;
  opts.reference_dtype = ReferenceDtype::Float64;
  auto e = make_executor(opts);
  Case c = make_case("aten::addmm_", {f32({16, 16}), f32({16, 512}), f32({512, 16})});
  c.compare = Comparator::Exact;
  const Result r = e->run(c);
  EXPECT_EQ(r.stage, Stage::INCORRECT_RESULT) << r.message;
  EXPECT_TRUE(r.reference_upcast);
  EXPECT_NE(r.message.find("mutated argument (input 0)"), std::string::npos) << r.message;
  EXPECT_GT(r.figures.mismatched, 0);
  // The float32 tolerance accepts it.
  c.compare = Comparator::AllClose;
  c.rtol = 1e-5;
  c.atol = 1e-4;
  const Result ok = e->run(c);
  EXPECT_EQ(ok.stage, Stage::PASSED) << ok.message;
}

// ----------------------------------------------------------------------------------------------------------------
// The reference's own dtype gaps

TEST(Reference, MissingHalfKernelsComputeInFloat32) {
  // cdist has no Half CPU kernel: the reference computes in float32 and casts back, while the cpu "device", which
  // runs the same kernel as is, reports the gap as its own verdict.
  const Case c = make_case("torch.cdist", {tensor_input(tensor_spec({5, 3}, DType::Float16)),
                                           tensor_input(tensor_spec({4, 3}, DType::Float16))});
  const Result r = cpu().run(c);
  EXPECT_TRUE(r.reference_upcast);
  EXPECT_EQ(r.stage, Stage::NOT_SUPPORTED) << stage_name(r.stage) << " " << r.message;
  EXPECT_NE(r.message.find("not implemented for 'Half'"), std::string::npos) << r.message;
  ExecOptions same;
  same.reference_dtype = ReferenceDtype::Same;
  const Result strict = make_executor(same)->run(c);
  EXPECT_EQ(strict.stage, Stage::FAILED_REFERENCE) << stage_name(strict.stage) << " " << strict.message;
  EXPECT_NE(strict.message.find("not implemented for 'Half'"), std::string::npos) << strict.message;
}

TEST(Reference, HalfKernelsRunAsThemselves) {
  // Where the CPU has a Half kernel (exp, since torch 2.x) the reference is that kernel, never an upcast.
  const Result r = cpu().run(make_case("torch.exp", {tensor_input(tensor_spec({8, 8}, DType::Float16))}));
  EXPECT_FALSE(r.reference_upcast);
  EXPECT_EQ(r.stage, Stage::PASSED) << stage_name(r.stage) << " " << r.message;
}

TEST(Reference, ForcedReferenceDtypesCastBack) {
  ExecOptions f32opts;
  f32opts.reference_dtype = ReferenceDtype::Float32;
  const Case add = make_case("torch.add", {tensor_input(tensor_spec({16}, DType::Float16)), tensor_input(tensor_spec({16}, DType::Float16))});
  const Result r = make_executor(f32opts)->run(add);
  EXPECT_EQ(r.stage, Stage::PASSED) << r.message;  // the output dtype is fp16 again, or compare would fail on dtype
  EXPECT_TRUE(r.reference_upcast);

  ExecOptions f64opts;
  f64opts.reference_dtype = ReferenceDtype::Float64;
  auto e = make_executor(f64opts);
  // torch.float's fixed dtype follows the upcast and is cast back to float32.
  const Result conv = e->run(make_case("torch.float", {tensor_input(tensor_spec({16}, DType::Float16))}));
  EXPECT_EQ(conv.stage, Stage::PASSED) << conv.message;
  EXPECT_TRUE(conv.reference_upcast);
  // An integer op has nothing to upcast.
  const Result ints_only = e->run(make_case("torch.neg", {tensor_input(tensor_spec({16}, DType::Int64, InitKind::Randint))}));
  EXPECT_EQ(ints_only.stage, Stage::PASSED);
  EXPECT_FALSE(ints_only.reference_upcast);
  // Multi-output ops cast every floating leaf back (values) and leave the indices alone.
  Case topk = make_case("torch.topk", {tensor_input(tensor_spec({4, 32}, DType::BFloat16)), value_input(PyValue::integer(4))},
                        {{"dim", PyValue::integer(-1)}});
  const Result t = e->run(topk);
  EXPECT_EQ(t.stage, Stage::PASSED) << t.message;
}

// ----------------------------------------------------------------------------------------------------------------
// Helpers the engine is built from

TEST(Layout, CopiesKeepStridesAndOffsets) {
  const at::Tensor base = at::arange(40, at::kFloat);
  const at::Tensor odd = base.as_strided({3, 4}, {1, 3}, 5);
  const at::Tensor copy = copy_with_layout(odd, at::kCPU);
  EXPECT_EQ(copy.strides(), odd.strides());
  EXPECT_EQ(copy.storage_offset(), 5);
  EXPECT_TRUE(at::equal(copy, odd));
  EXPECT_NE(copy.data_ptr(), odd.data_ptr());
  const at::Tensor expanded = at::rand({1, 4}).expand({3, 4});
  const at::Tensor e = copy_with_layout(expanded, at::kCPU);
  EXPECT_EQ(e.stride(0), 0);
  EXPECT_TRUE(at::equal(e, expanded));
}

TEST(Layout, BitwiseEqualityOfRepeatedRuns) {
  const at::Tensor a = at::rand({5});
  at::Tensor b = a.clone();
  std::string where;
  EXPECT_TRUE(bitwise_equal(a, b, where));
  b[2] = std::nextafter(b[2].item<float>(), 2.0f);
  EXPECT_FALSE(bitwise_equal(a, b, where));
  EXPECT_NE(where.find("output: "), std::string::npos) << where;
  const c10::IValue t1 = c10::ivalue::Tuple::create({a, at::tensor({1})});
  const c10::IValue t2 = c10::ivalue::Tuple::create({a, at::tensor({2})});
  EXPECT_FALSE(bitwise_equal(t1, t2, where));
  EXPECT_NE(where.find("output[1]"), std::string::npos) << where;
  // NaNs with the same bits are the same result.
  const at::Tensor n = at::full({3}, std::nan(""));
  EXPECT_TRUE(bitwise_equal(n, n.clone(), where));
}

TEST(Engine, RepeatedCpuRunsAgreeBitwise) {
  ExecOptions opts;
  opts.repeat = 3;
  auto e = make_executor(opts);
  const ObservedCalls matmuls("aten::matmul");
  const Result r = e->run(make_case("torch.matmul", {f32({16, 32}), f32({32, 8})}));
  // A pass after three runs means the second and third agreed bitwise with the first (else NONDETERMINISTIC).
  EXPECT_EQ(r.stage, Stage::PASSED) << r.message;
  EXPECT_EQ(matmuls.calls().size(), 1u + 3u);  // the CPU reference, then the three device runs
}

TEST(Engine, HostPlacedTensorsStayOnTheHost) {
  // On the loopback device, where a tensor's placement shows: the op sees the indices on the host, the rest there.
  ExecOptions opts;
  opts.device = "loopback";
  auto e = make_executor(opts);
  const std::string dev = e->info().device;
  TensorSpec idx = tensor_spec({3}, DType::Int64, InitKind::Randint);
  idx.placement = Placement::Host;
  const ObservedCalls calls("aten::index_select");
  const Result r =
      e->run(make_case("torch.index_select", {f32({10, 4}), value_input(PyValue::integer(0)), tensor_input(idx)}));
  EXPECT_EQ(r.stage, Stage::PASSED) << r.message;
  std::size_t device_runs = 0;
  for (const auto& devices : calls.calls()) {
    ASSERT_EQ(devices.size(), 3u);
    if (devices[0] != dev) continue;  // the CPU reference, or the loopback fallback's own CPU call
    ++device_runs;
    EXPECT_EQ(devices[2], "cpu") << "the host-placed indices reached the op on " << devices[2];
  }
  EXPECT_EQ(device_runs, 2u);  // a device's two runs (the second checks they agree)
}

}  // namespace
}  // namespace opcheck::exec
