// Op names -> dispatcher ops: spellings, overload choice, the Python-name table, builtins, did-you-mean.
#include <gtest/gtest.h>

#include <algorithm>

#include "exec/binder.h"
#include "exec/inputs.h"
#include "exec/op_resolver.h"
#include "test_support.h"

namespace opcheck::exec {
namespace {

using opcheck::test::ints;
using opcheck::test::list_input;
using opcheck::test::make_case;
using opcheck::test::slice;
using opcheck::test::tensor_input;
using opcheck::test::tensor_spec;
using opcheck::test::value_input;

const OpResolver& resolver() {
  static const OpResolver r;
  return r;
}

Resolution resolve(const Case& c) { return resolver().resolve(c); }

/// The op a case resolves to (or the error text prefixed with "error: ").
std::string resolved(const Case& c) {
  Resolution r = resolve(c);
  if (!r.skip_reason.empty()) return "skip: " + r.skip_reason;
  return r.invocation ? r.invocation->resolved_op : "error: " + r.error;
}

/// Builds the case's inputs and runs the resolved invocation on the CPU.
c10::IValue run(const Case& c) {
  Resolution r = resolve(c);
  if (!r.invocation) throw std::runtime_error(r.error);
  std::vector<at::Tensor> tensors;
  for (const auto& s : r.call.slots) tensors.push_back(build_tensor(*s.spec, input_seed(c.seed, s.input, s.element)));
  return r.invocation->run(tensors, RunContext{});
}

at::Tensor run_tensor(const Case& c) { return run(c).toTensor(); }

Input f32(std::vector<std::int64_t> shape) { return tensor_input(tensor_spec(std::move(shape))); }

// ----------------------------------------------------------------------------------------------------------------
// Name normalization

TEST(OpNames, SchemaSpellingsNormalizeToOneName) {
  for (const char* s : {"aten::add.Tensor", "aten.add.Tensor", "torch.ops.aten.add.Tensor"}) {
    const OpName n = normalize_op_name(s);
    EXPECT_EQ(n.form, OpName::Form::Schema) << s;
    EXPECT_EQ(n.qualified, "aten::add") << s;
    ASSERT_TRUE(n.overload.has_value()) << s;
    EXPECT_EQ(*n.overload, "Tensor") << s;
  }
  EXPECT_FALSE(normalize_op_name("torch.ops.aten.view").overload.has_value());
  EXPECT_FALSE(normalize_op_name("aten::view").overload.has_value());
  EXPECT_EQ(normalize_op_name("torch.ops.aten.view.default").overload, std::optional<std::string>(""));
  EXPECT_EQ(normalize_op_name("torch.ops.prims.add.default").qualified, "prims::add");
}

TEST(OpNames, PythonSpellingsCanonicalize) {
  struct Row {
    const char* written;
    const char* python;
    const char* target;
  };
  for (const Row& r : {Row{"torch.add", "torch.add", "aten::add"}, Row{"torch.Tensor.view", "torch.view", "aten::view"},
                       Row{"operator.getitem", "torch.getitem", "aten::getitem"},
                       Row{"torch.nn.functional.silu", "torch.nn.functional.silu", "aten::silu"},
                       Row{"F.silu", "torch.nn.functional.silu", "aten::silu"},
                       Row{"torch._C._nn.linear", "torch.nn.functional.linear", "aten::linear"},
                       Row{"torch.functional.split", "torch.split", "aten::split"},
                       Row{"torch.special.erf", "torch.special.erf", "aten::special_erf"},
                       Row{"torch.linalg.norm", "torch.linalg.norm", "aten::linalg_norm"}}) {
    const OpName n = normalize_op_name(r.written);
    EXPECT_EQ(n.form, OpName::Form::Python) << r.written;
    EXPECT_EQ(n.python, r.python) << r.written;
    EXPECT_EQ(n.qualified, r.target) << r.written;
  }
  EXPECT_EQ(normalize_op_name("torch._C._log_api_usage_once").python, "torch._C._log_api_usage_once");
}

TEST(OpNames, MalformedNamesSayWhy) {
  EXPECT_EQ(normalize_op_name("").form, OpName::Form::Invalid);
  EXPECT_EQ(normalize_op_name("torch.add(").form, OpName::Form::Invalid);
  EXPECT_EQ(normalize_op_name("aten::").form, OpName::Form::Invalid);
  EXPECT_EQ(normalize_op_name("aten::a.b.c").form, OpName::Form::Invalid);
  EXPECT_EQ(normalize_op_name("add").form, OpName::Form::Invalid);
  EXPECT_NE(normalize_op_name("add").error.find("torch.add"), std::string::npos);
}

// ----------------------------------------------------------------------------------------------------------------
// Overload choice

TEST(Overloads, ViewWithListOrDtype) {
  EXPECT_EQ(resolved(make_case("torch.ops.aten.view", {f32({1, 64}), value_input(ints({2, 32}))})), "aten::view");
  EXPECT_EQ(resolved(make_case("torch.ops.aten.view", {f32({1, 64}), value_input(PyValue::of_dtype(DType::Int32))})),
            "aten::view.dtype");
  const at::Tensor v = run_tensor(make_case("torch.ops.aten.view", {f32({1, 64}), value_input(ints({2, 32}))}));
  EXPECT_EQ(v.sizes(), (std::vector<std::int64_t>{2, 32}));
  const at::Tensor d =
      run_tensor(make_case("torch.ops.aten.view", {f32({1, 64}), value_input(PyValue::of_dtype(DType::Int32))}));
  EXPECT_EQ(d.scalar_type(), at::kInt);
}

TEST(Overloads, ArgumentsThatFitNoOverloadListEveryReason) {
  const std::string r = resolved(make_case("torch.ops.aten.view", {f32({1, 64}), value_input(PyValue::string("x"))}));
  EXPECT_EQ(r.rfind("error: ", 0), 0u) << r;
  EXPECT_NE(r.find("aten::view:"), std::string::npos) << r;
  EXPECT_NE(r.find("aten::view.dtype:"), std::string::npos) << r;
  EXPECT_NE(r.find("not str"), std::string::npos) << r;
}

// torch.nn.functional's losses take reduction as a string; ATen's schemas take torch.nn._reduction's enum.
TEST(Overloads, ReductionStringsBindAsTheirEnum) {
  const Case sum =
      make_case("torch.nn.functional.l1_loss", {f32({3}), f32({3})}, {{"reduction", PyValue::string("sum")}});
  EXPECT_EQ(resolved(sum), "aten::l1_loss");
  Resolution r = resolve(sum);
  std::vector<at::Tensor> tensors;
  for (const auto& s : r.call.slots) tensors.push_back(build_tensor(*s.spec, input_seed(sum.seed, s.input, s.element)));
  const NamedArgs named = r.invocation->named_arguments(tensors);
  const auto reduction = std::find_if(named.begin(), named.end(), [](const auto& a) { return a.first == "reduction"; });
  ASSERT_NE(reduction, named.end());
  EXPECT_EQ(reduction->second.toInt(), 2);
  EXPECT_EQ(run_tensor(sum).dim(), 0);
  const at::Tensor none = run_tensor(
      make_case("torch.nn.functional.l1_loss", {f32({3}), f32({3})}, {{"reduction", PyValue::string("none")}}));
  EXPECT_EQ(none.sizes(), (std::vector<std::int64_t>{3}));
  // Any other string is no reduction, and another argument's string is no enum.
  const std::string r2 = resolved(
      make_case("torch.nn.functional.l1_loss", {f32({3}), f32({3})}, {{"reduction", PyValue::string("batchmean")}}));
  EXPECT_EQ(r2.rfind("error: ", 0), 0u) << r2;
  const std::string r3 = resolved(make_case("aten::sum", {f32({3}), value_input(PyValue::string("mean"))}));
  EXPECT_EQ(r3.rfind("error: ", 0), 0u) << r3;
}

TEST(Overloads, AddWithScalarOrTensor) {
  // Schema names see every overload: a number fits .Scalar best.
  EXPECT_EQ(resolved(make_case("aten::add", {f32({3}), value_input(PyValue::real(2.0))})), "aten::add.Scalar");
  EXPECT_EQ(resolved(make_case("aten::add", {f32({3}), f32({3})})), "aten::add.Tensor");
  // Python names bind numbers as wrapped-number tensors: add.Scalar has no Python binding.
  EXPECT_EQ(resolved(make_case("torch.add", {f32({3}), value_input(PyValue::real(2.0))})), "aten::add.Tensor");
  EXPECT_EQ(resolved(make_case("torch.Tensor.add", {f32({3}), f32({3}), }, {{"alpha", PyValue::integer(2)}})),
            "aten::add.Tensor");
  EXPECT_EQ(resolved(make_case("aten::add.Scalar", {f32({3}), value_input(PyValue::integer(1))})), "aten::add.Scalar");
}

TEST(Overloads, WrappedNumbersGivePyTorchsResultDtype) {
  // torch.mul(int_tensor, 3.0) is float32 (a float number lifts integers to the default dtype) ...
  auto int_t = tensor_input(tensor_spec({4}, DType::Int64, InitKind::Randint));
  EXPECT_EQ(run_tensor(make_case("torch.mul", {int_t, value_input(PyValue::real(3.0))})).scalar_type(), at::kFloat);
  // ... an int number keeps int64, and a number never widens a low-precision float tensor.
  EXPECT_EQ(run_tensor(make_case("torch.mul", {int_t, value_input(PyValue::integer(3))})).scalar_type(), at::kLong);
  auto half_t = tensor_input(tensor_spec({4}, DType::Float16));
  EXPECT_EQ(run_tensor(make_case("torch.mul", {half_t, value_input(PyValue::real(1.3465735902799727))})).scalar_type(),
            at::kHalf);
  EXPECT_EQ(run_tensor(make_case("torch.add", {half_t, value_input(PyValue::real(1e-5))})).scalar_type(), at::kHalf);
  // The values are the product with the number.
  const Case c = make_case("torch.mul", {f32({5}), value_input(PyValue::real(3.0))});
  Resolution r = resolve(c);
  const at::Tensor x = build_tensor(*r.call.slots[0].spec, input_seed(c.seed, 0));
  EXPECT_TRUE(at::allclose(r.invocation->run({x}, RunContext{}).toTensor(), x * 3.0));
  // A wrapped number stays a 0-dim CPU scalar, marked as such.
  const at::Tensor w = wrapped_number(PyValue::real(3.0));
  EXPECT_EQ(w.dim(), 0);
  EXPECT_EQ(w.scalar_type(), at::kDouble);
  EXPECT_TRUE(w.unsafeGetTensorImpl()->is_wrapped_number());
}

TEST(Overloads, ScalarParametersBeatWrappedTensors) {
  EXPECT_EQ(resolved(make_case("torch.clamp", {f32({4}), value_input(PyValue::integer(0)), value_input(PyValue::integer(31))})),
            "aten::clamp");
  EXPECT_EQ(resolved(make_case("torch.clamp", {f32({4})}, {{"min", PyValue::none()}, {"max", PyValue::real(7.0)}})),
            "aten::clamp");
  EXPECT_EQ(resolved(make_case("torch.pow", {f32({4}), value_input(PyValue::integer(2))})), "aten::pow.Tensor_Scalar");
  EXPECT_EQ(resolved(make_case("torch.lt", {f32({4}), value_input(PyValue::integer(32))})), "aten::lt.Scalar");
  EXPECT_EQ(resolved(make_case("torch.lt", {f32({4}), f32({4})})), "aten::lt.Tensor");
}

TEST(Overloads, KeywordsAndDefaultsPickTheRightOverload) {
  EXPECT_EQ(resolved(make_case("torch.sum", {f32({2, 3})}, {{"dim", PyValue::integer(1)}})), "aten::sum.dim_IntList");
  EXPECT_EQ(resolved(make_case("torch.sum", {f32({2, 3})})), "aten::sum");
  EXPECT_EQ(resolved(make_case("torch.max", {f32({2, 3})}, {{"dim", PyValue::integer(-1)}, {"keepdim", PyValue::boolean(true)}})),
            "aten::max.dim");
  EXPECT_EQ(resolved(make_case("torch.max", {f32({2, 3})})), "aten::max");
  EXPECT_EQ(resolved(make_case("torch.max", {f32({2, 3}), f32({2, 3})})), "aten::max.other");
  EXPECT_EQ(resolved(make_case("torch.mean", {f32({2, 3}), value_input(PyValue::integer(-1))}, {{"keepdim", PyValue::boolean(true)}})),
            "aten::mean.dim");
  EXPECT_EQ(resolved(make_case("torch.transpose", {f32({2, 3}), value_input(PyValue::integer(0)), value_input(PyValue::integer(1))})),
            "aten::transpose.int");
  // `input` names the schema's `self`.
  EXPECT_EQ(resolved(make_case("torch.neg", {}, {})).rfind("error: ", 0), 0u);
  // Unknown keywords are errors, not silently dropped.
  const std::string r = resolved(make_case("torch.neg", {f32({2})}, {{"bogus", PyValue::integer(1)}}));
  EXPECT_NE(r.find("unexpected keyword argument 'bogus'"), std::string::npos) << r;
}

TEST(Overloads, VarargsPackIntoLists) {
  const Case expand = make_case("torch.Tensor.expand", {f32({1, 32, 1}), value_input(PyValue::integer(2)),
                                                        value_input(PyValue::integer(-1)), value_input(PyValue::integer(3))});
  EXPECT_EQ(resolved(expand), "aten::expand");
  EXPECT_EQ(run_tensor(expand).sizes(), (std::vector<std::int64_t>{2, 32, 3}));
  const Case view = make_case("torch.Tensor.view", {f32({44, 2880}), value_input(PyValue::integer(11)),
                                                    value_input(PyValue::integer(4)), value_input(PyValue::integer(2880))});
  EXPECT_EQ(run_tensor(view).sizes(), (std::vector<std::int64_t>{11, 4, 2880}));
  const Case view_tuple = make_case("torch.Tensor.view", {f32({1, 11, 512}), value_input(ints({1, 11, -1, 64}, PyValue::Kind::Tuple))});
  EXPECT_EQ(run_tensor(view_tuple).sizes(), (std::vector<std::int64_t>{1, 11, 8, 64}));
  const Case permute = make_case("torch.permute", {f32({2, 3, 4}), value_input(PyValue::integer(2)),
                                                   value_input(PyValue::integer(0)), value_input(PyValue::integer(1))});
  EXPECT_EQ(run_tensor(permute).sizes(), (std::vector<std::int64_t>{4, 2, 3}));
  const Case repeat = make_case("torch.repeat", {f32({2, 3}), value_input(PyValue::integer(2)), value_input(PyValue::integer(1))});
  EXPECT_EQ(run_tensor(repeat).sizes(), (std::vector<std::int64_t>{4, 3}));
  const Case zeros = make_case("torch.zeros", {value_input(PyValue::integer(2)), value_input(PyValue::integer(3))});
  EXPECT_EQ(run_tensor(zeros).sizes(), (std::vector<std::int64_t>{2, 3}));
  const Case mesh = make_case("torch.functional.meshgrid", {f32({3}), f32({4})}, {{"indexing", PyValue::string("ij")}});
  const auto grids = run(mesh).toTensorVector();
  ASSERT_EQ(grids.size(), 2u);
  EXPECT_EQ(grids[0].sizes(), (std::vector<std::int64_t>{3, 4}));
}

TEST(Overloads, FactoryKeywordsBindDtypeAndDevice) {
  const Case zeros = make_case("torch.zeros", {value_input(ints({1, 8, 4}, PyValue::Kind::Tuple))},
                               {{"dtype", PyValue::of_dtype(DType::BFloat16)}, {"device", PyValue::device("cuda:0")}});
  const at::Tensor z = run_tensor(zeros);
  EXPECT_EQ(z.scalar_type(), at::kBFloat16);
  EXPECT_EQ(z.sizes(), (std::vector<std::int64_t>{1, 8, 4}));
  EXPECT_EQ(z.count_nonzero().item<std::int64_t>(), 0);
  const Case arange = make_case("torch.arange", {value_input(PyValue::integer(11))}, {{"device", PyValue::device("cuda:0")}});
  EXPECT_EQ(resolved(arange), "aten::arange");
  EXPECT_EQ(run_tensor(arange).scalar_type(), at::kLong);
}

TEST(Overloads, InPlaceOpsReportTheTensorsTheyWrite) {
  auto idx = tensor_spec({2}, DType::Int64, InitKind::Data);
  idx.data = ints({3, 0});
  const Case c = make_case("torch.index_copy_", {f32({1, 2, 5, 3}), value_input(PyValue::integer(2)), tensor_input(idx),
                                                 f32({1, 2, 2, 3})});
  Resolution r = resolve(c);
  ASSERT_TRUE(r.invocation) << r.error;
  EXPECT_EQ(r.invocation->resolved_op, "aten::index_copy_");
  EXPECT_EQ(r.invocation->written_slots, (std::vector<std::size_t>{0}));
  const Case add_ = make_case("aten::add_.Tensor", {f32({3}), f32({3})});
  EXPECT_EQ(resolve(add_).invocation->written_slots, (std::vector<std::size_t>{0}));
  EXPECT_TRUE(resolve(make_case("torch.add", {f32({3}), f32({3})})).invocation->written_slots.empty());
}

TEST(Overloads, ExplicitOverloadThatDoesNotExistSuggestsTheClosest) {
  const std::string r = resolved(make_case("aten::add.Tensr", {f32({3}), f32({3})}));
  EXPECT_NE(r.find("aten::add has no overload 'Tensr' (did you mean aten::add.Tensor?)"), std::string::npos) << r;
}

// Every call that does not resolve says what kind of failure it is (Resolution::kind, the Result's verdict kind),
// so that validate --ops and import-opinfo need not read the message; a call that resolves has none.
TEST(Overloads, EachUnresolvedCallSaysItsKind) {
  const std::vector<std::pair<Case, VerdictKind>> calls = {
      {make_case("torch.flor", {f32({3})}), VerdictKind::UnknownOp},
      {make_case("aten::no_such_op", {f32({3})}), VerdictKind::UnknownOp},
      {make_case("add", {f32({3}), f32({3})}), VerdictKind::BadOpName},
      {make_case("aten::add.Tensr", {f32({3}), f32({3})}), VerdictKind::NoSuchOverload},
      {make_case("torch.matmul", {f32({2, 2}), f32({2, 2}), f32({2, 2})}), VerdictKind::ArgumentsDoNotBind},
      {make_case("aten::sum", {f32({3}), value_input(PyValue::string("mean"))}), VerdictKind::ArgumentsDoNotBind},
      {make_case("torch.getitem", {f32({3})}), VerdictKind::ArgumentsDoNotBind},
      {make_case("torch.add", {f32({3}), f32({3})}), VerdictKind::None},
  };
  for (const auto& [c, kind] : calls) {
    const Resolution r = resolve(c);
    EXPECT_EQ(r.kind, kind) << c.op << ": " << r.error << " (kind " << verdict_kind_name(r.kind) << ")";
    EXPECT_EQ(r.error.empty(), kind == VerdictKind::None) << c.op << ": " << r.error;
  }
}

// ----------------------------------------------------------------------------------------------------------------
// The Python-name table

TEST(PythonTable, ConversionsAreToDtype) {
  const Case f = make_case("torch.float", {tensor_input(tensor_spec({1, 1, 11}, DType::Int64, InitKind::Randint))});
  EXPECT_EQ(resolved(f), "aten::to.dtype");
  EXPECT_EQ(run_tensor(f).scalar_type(), at::kFloat);
  EXPECT_EQ(run_tensor(make_case("torch.Tensor.long", {f32({3})})).scalar_type(), at::kLong);
  EXPECT_EQ(run_tensor(make_case("torch.half", {f32({3})})).scalar_type(), at::kHalf);
  EXPECT_EQ(run_tensor(make_case("torch.bool", {f32({3})})).scalar_type(), at::kBool);
}

TEST(PythonTable, ToHasThreePythonSignatures) {
  EXPECT_EQ(resolved(make_case("torch.to", {f32({3}), value_input(PyValue::device("cuda:0"))})), "aten::to.dtype_layout");
  EXPECT_EQ(resolved(make_case("torch.to", {f32({3}), value_input(PyValue::of_dtype(DType::Float16))})), "aten::to.dtype");
  EXPECT_EQ(resolved(make_case("torch.to", {f32({3}), tensor_input(tensor_spec({2}, DType::Float64))})), "aten::to.other");
  const Case kw = make_case("torch.to", {f32({1, 12, 128})}, {{"dtype", PyValue::of_dtype(DType::BFloat16)}});
  EXPECT_EQ(run_tensor(kw).scalar_type(), at::kBFloat16);
  EXPECT_EQ(run_tensor(make_case("torch.to", {f32({3}), value_input(PyValue::of_dtype(DType::Float64))})).scalar_type(),
            at::kDouble);
}

TEST(PythonTable, EmbeddingTakesIndicesFirstAndDropsNormArguments) {
  auto ids = tensor_spec({1, 3}, DType::Int64, InitKind::Data);
  ids.data = PyValue::sequence(PyValue::Kind::List, {ints({4, 0, 2})});
  const Case c = make_case("torch.nn.functional.embedding",
                           {tensor_input(ids), f32({5, 8}), value_input(PyValue::integer(4)), value_input(PyValue::none()),
                            value_input(PyValue::real(2.0)), value_input(PyValue::boolean(false)),
                            value_input(PyValue::boolean(false))});
  Resolution r = resolve(c);
  ASSERT_TRUE(r.invocation) << r.error;
  EXPECT_EQ(r.invocation->resolved_op, "aten::embedding");
  std::vector<at::Tensor> t;
  for (const auto& s : r.call.slots) t.push_back(build_tensor(*s.spec, input_seed(c.seed, s.input)));
  const at::Tensor out = r.invocation->run(t, RunContext{}).toTensor();
  EXPECT_TRUE(at::equal(out, t[1].index_select(0, t[0].flatten()).view({1, 3, 8})));
  // padding_idx=None is the schema's -1.
  const Case none_pad = make_case("torch.nn.functional.embedding", {tensor_input(ids), f32({5, 8}), value_input(PyValue::none())});
  EXPECT_EQ(resolved(none_pad), "aten::embedding");
  // max_norm renormalizes the weight in place: not something opcheck runs silently.
  const Case max_norm = make_case("torch.nn.functional.embedding", {tensor_input(ids), f32({5, 8})},
                                  {{"max_norm", PyValue::real(1.0)}});
  EXPECT_NE(resolved(max_norm).find("max_norm=1.0 is not supported"), std::string::npos) << resolved(max_norm);
}

TEST(PythonTable, SoftmaxDropsStacklevelAndKeepsDtype) {
  const Case c = make_case("torch.nn.functional.softmax", {tensor_input(tensor_spec({11, 4}, DType::BFloat16))},
                           {{"dim", PyValue::integer(1)}, {"dtype", PyValue::of_dtype(DType::Float32)}});
  EXPECT_EQ(resolved(c), "aten::softmax.int");
  const at::Tensor s = run_tensor(c);
  EXPECT_EQ(s.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(s.sum(1), at::ones({11})));
  const Case positional = make_case("torch.nn.functional.softmax", {f32({2, 3}), value_input(PyValue::integer(-1)),
                                                                    value_input(PyValue::integer(3)), value_input(PyValue::none())});
  EXPECT_EQ(resolved(positional), "aten::softmax.int");
}

TEST(PythonTable, DropoutRunsWithTrainingOff) {
  const Case c = make_case("torch.nn.functional.dropout", {f32({64, 64})},
                           {{"p", PyValue::real(0.5)}, {"training", PyValue::boolean(true)}});
  EXPECT_EQ(resolved(c), "aten::dropout");
  Resolution r = resolve(c);
  const at::Tensor x = build_tensor(*r.call.slots[0].spec, 1);
  EXPECT_TRUE(at::equal(r.invocation->run({x}, RunContext{}).toTensor(), x));
}

TEST(PythonTable, OperatorSpellings) {
  auto b = [] { return tensor_input(tensor_spec({6}, DType::Bool)); };
  EXPECT_EQ(resolved(make_case("torch.and_", {b(), b()})), "aten::__and__.Tensor");
  EXPECT_EQ(resolved(make_case("torch.invert", {b()})), "aten::bitwise_not");
  EXPECT_EQ(resolved(make_case("torch.truediv", {f32({3}), value_input(PyValue::integer(2))})), "aten::div.Tensor");
  EXPECT_EQ(resolved(make_case("torch.floordiv", {f32({3}), value_input(PyValue::integer(2))})), "aten::floor_divide.Scalar");
  EXPECT_EQ(resolved(make_case("torch.__eq__", {f32({3}), f32({3})})), "aten::eq.Tensor");
  EXPECT_EQ(resolved(make_case("operator.mod", {f32({3}), value_input(PyValue::integer(2))})), "aten::remainder.Scalar");
  // __rsub__(t, 2) is 2 - t; __rtruediv__(t, 2) is 2 / t.
  const Case rsub = make_case("torch.__rsub__", {f32({4}), value_input(PyValue::integer(2))});
  const Case rdiv = make_case("torch.__rtruediv__", {f32({4}), value_input(PyValue::integer(2))});
  Resolution r1 = resolve(rsub), r2 = resolve(rdiv);
  ASSERT_TRUE(r1.invocation && r2.invocation) << r1.error << r2.error;
  const at::Tensor x = at::rand({4}) + 0.5;
  EXPECT_TRUE(at::allclose(r1.invocation->run({x}, RunContext{}).toTensor(), 2 - x));
  EXPECT_TRUE(at::allclose(r2.invocation->run({x}, RunContext{}).toTensor(), 2 / x));
}

TEST(PythonTable, MethodsWhoseSelfIsNotTheFunctionsFirstArgument) {
  // Tensor.where(condition, other) is torch.where(condition, self, other): the method's first argument is `self`.
  auto cond = [] { return tensor_input(tensor_spec({4}, DType::Bool)); };
  const Case method = make_case("torch.Tensor.where", {f32({4}), cond(), f32({4})});
  const Case function = make_case("torch.where", {cond(), f32({4}), f32({4})});
  EXPECT_EQ(resolved(method), "aten::where.self");
  EXPECT_EQ(resolved(function), "aten::where.self");
  Resolution r = resolve(method);
  ASSERT_TRUE(r.invocation) << r.error;
  const at::Tensor x = at::arange(4, at::kFloat), c = at::arange(4) % 2 == 0, y = -x;
  EXPECT_TRUE(at::equal(r.invocation->run({x, c, y}, RunContext{}).toTensor(), at::where(c, x, y)));
  // Tensor.polygamma(n) is torch.polygamma(n, self).
  Resolution p = resolve(make_case("torch.Tensor.polygamma", {f32({4}), value_input(PyValue::integer(1))}));
  ASSERT_TRUE(p.invocation) << p.error;
  const at::Tensor z = at::arange(1, 5, at::kFloat);
  EXPECT_TRUE(at::allclose(p.invocation->run({z}, RunContext{}).toTensor(), at::polygamma(1, z)));
}

TEST(PythonTable, SplitAndChunkReturnLists) {
  const Case split = make_case("torch.functional.split", {f32({4, 6}), value_input(PyValue::integer(2))}, {{"dim", PyValue::integer(-1)}});
  EXPECT_EQ(resolved(split), "aten::split.Tensor");
  EXPECT_EQ(run(split).toTensorVector().size(), 3u);
  const Case sizes = make_case("torch.split", {f32({4, 6}), value_input(ints({1, 5}))}, {{"dim", PyValue::integer(1)}});
  const auto parts = run(sizes).toTensorVector();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].size(1), 5);
  const Case kw = make_case("torch.split", {f32({4, 6})}, {{"split_size_or_sections", PyValue::integer(3)}, {"dim", PyValue::integer(1)}});
  EXPECT_EQ(run(kw).toTensorVector().size(), 2u);
  const Case chunk = make_case("torch.chunk", {f32({1, 8, 11, 64}), value_input(PyValue::integer(2))}, {{"dim", PyValue::integer(-1)}});
  EXPECT_EQ(run(chunk).toTensorVector().size(), 2u);
}

TEST(PythonTable, FunctionalInplaceSelectsTheInplaceOp) {
  EXPECT_EQ(resolved(make_case("torch.nn.functional.silu", {f32({4})}, {{"inplace", PyValue::boolean(true)}})), "aten::silu_");
  EXPECT_EQ(resolved(make_case("torch.nn.functional.silu", {f32({4})}, {{"inplace", PyValue::boolean(false)}})), "aten::silu");
  EXPECT_EQ(resolved(make_case("torch.nn.functional.linear", {f32({2, 8}), f32({4, 8}), f32({4})})), "aten::linear");
  EXPECT_EQ(resolved(make_case("torch.nn.functional.pad", {f32({2, 8}), value_input(ints({1, 1}))})), "aten::pad");
}

// ----------------------------------------------------------------------------------------------------------------
// getitem / setitem

TEST(GetItem, IntsSlicesNoneEllipsisBools) {
  const at::Tensor x = at::arange(4 * 5 * 6).view({4, 5, 6}).to(at::kFloat);
  auto get = [&](PyValue index) {
    const Case c = make_case("torch.getitem", {f32({4, 5, 6}), value_input(std::move(index))});
    Resolution r = resolve(c);
    if (!r.invocation) throw std::runtime_error(r.error);
    return r.invocation->run({x}, RunContext{}).toTensor();
  };
  using PV = PyValue;
  EXPECT_TRUE(at::equal(get(PV::integer(1)), x[1]));
  EXPECT_TRUE(at::equal(get(PV::integer(-1)), x[3]));
  const at::Tensor a = get(PV::sequence(PV::Kind::Tuple, {slice(PV::none(), PV::none(), PV::none()), PV::none(),
                                                         slice(PV::integer(1), PV::integer(3), PV::none())}));
  EXPECT_EQ(a.sizes(), (std::vector<std::int64_t>{4, 1, 2, 6}));
  EXPECT_TRUE(at::equal(a.squeeze(1), x.slice(1, 1, 3)));
  const at::Tensor e = get(PV::sequence(PV::Kind::Tuple, {PV::ellipsis(), PV::none(), slice(PV::none(), PV::none(), PV::none())}));
  EXPECT_EQ(e.sizes(), (std::vector<std::int64_t>{4, 5, 1, 6}));
  const at::Tensor stepped = get(slice(PV::integer(0), PV::none(), PV::integer(2)));
  EXPECT_TRUE(at::equal(stepped, x.slice(0, 0, 4, 2)));
  EXPECT_EQ(get(PV::boolean(true)).sizes(), (std::vector<std::int64_t>{1, 4, 5, 6}));
  EXPECT_EQ(get(PV::boolean(false)).sizes(), (std::vector<std::int64_t>{0, 4, 5, 6}));
  // A list is an advanced index.
  EXPECT_TRUE(at::equal(get(ints({0, 2})), x.index_select(0, at::tensor({0, 2}, at::kLong))));
  EXPECT_TRUE(at::equal(get(PV::sequence(PV::Kind::Tuple, {PV::integer(1), ints({4, 0})})),
                        x[1].index_select(0, at::tensor({4, 0}, at::kLong))));
  EXPECT_THROW(get(PV::string("a")), std::invalid_argument);
}

TEST(GetItem, TensorIndicesAndTensorLists) {
  auto idx = tensor_spec({2}, DType::Int64, InitKind::Data);
  idx.data = ints({2, 0});
  const Case c = make_case("torch.getitem", {f32({3, 4}), tensor_input(idx)});
  Resolution r = resolve(c);
  ASSERT_TRUE(r.invocation) << r.error;
  const at::Tensor x = at::rand({3, 4});
  const at::Tensor i = build_tensor(idx, 0);
  EXPECT_TRUE(at::equal(r.invocation->run({x, i}, RunContext{}).toTensor(), x.index_select(0, i)));
  // Bool masks.
  const at::Tensor mask = x > 0.5;
  auto m = tensor_spec({3, 4}, DType::Bool);
  Resolution rm = resolve(make_case("torch.getitem", {f32({3, 4}), tensor_input(m)}));
  ASSERT_TRUE(rm.invocation) << rm.error;
  EXPECT_TRUE(at::equal(rm.invocation->run({x, mask}, RunContext{}).toTensor(), x.masked_select(mask)));
  // operator.getitem on a list of tensors (a tuple output indexed by the model).
  const Case list = make_case("operator.getitem", {list_input({tensor_spec({2}), tensor_spec({3})}), value_input(PyValue::integer(-1))});
  Resolution rl = resolve(list);
  ASSERT_TRUE(rl.invocation) << rl.error;
  const at::Tensor a = at::rand({2}), b = at::rand({3});
  EXPECT_TRUE(rl.invocation->run({a, b}, RunContext{}).toTensor().is_same(b));
  const Case list_slice = make_case("torch.getitem", {list_input({tensor_spec({2}), tensor_spec({3}), tensor_spec({4})}),
                                                      value_input(slice(PyValue::integer(1), PyValue::none(), PyValue::none()))});
  EXPECT_EQ(resolve(list_slice).invocation->run({a, b, at::rand({4})}, RunContext{}).toTensorVector().size(), 2u);
}

TEST(SetItem, AssignsThroughIndexingAndWritesTheTensor) {
  const Case c = make_case("torch.setitem", {f32({3, 4}), value_input(PyValue::sequence(PyValue::Kind::Tuple,
                                                                                        {PyValue::integer(0), slice(PyValue::none(), PyValue::none(), PyValue::none())})),
                                             value_input(PyValue::real(5.0))});
  Resolution r = resolve(c);
  ASSERT_TRUE(r.invocation) << r.error;
  EXPECT_EQ(r.invocation->written_slots, (std::vector<std::size_t>{0}));
  at::Tensor x = at::zeros({3, 4});
  EXPECT_TRUE(r.invocation->run({x}, RunContext{}).isNone());
  EXPECT_EQ(x.sum().item<float>(), 20.0f);
  EXPECT_EQ(x[0].sum().item<float>(), 20.0f);
}

// ----------------------------------------------------------------------------------------------------------------
// Builtins and unknown ops

TEST(Builtins, LogApiUsageIsSkippedWithAReason) {
  const std::string r = resolved(make_case("torch._C._log_api_usage_once", {value_input(PyValue::string("python.nn_module"))}));
  EXPECT_EQ(r.rfind("skip: ", 0), 0u) << r;
  EXPECT_NE(r.find("not a tensor op"), std::string::npos);
}

TEST(Builtins, SymSumAddsPythonNumbers) {
  const c10::IValue i = run(make_case("torch.sym_sum", {value_input(ints({1, 2, 3}))}));
  ASSERT_TRUE(i.isInt());
  EXPECT_EQ(i.toInt(), 6);
  const c10::IValue f = run(make_case("torch.sym_sum", {value_input(PyValue::sequence(PyValue::Kind::List, {PyValue::integer(1), PyValue::real(2.5)}))}));
  ASSERT_TRUE(f.isDouble());
  EXPECT_DOUBLE_EQ(f.toDouble(), 3.5);
  EXPECT_NE(resolved(make_case("torch.sym_sum", {f32({2})})).find("error: "), std::string::npos);
  EXPECT_TRUE(resolve(make_case("torch.sym_sum", {value_input(ints({1}))})).invocation->decomposed);
}

TEST(Builtins, TensorFromALiteral) {
  const Case c = make_case("torch.tensor", {value_input(PyValue::sequence(PyValue::Kind::List, {ints({1, 2}), ints({3, 4})}))},
                           {{"dtype", PyValue::of_dtype(DType::Float16)}, {"device", PyValue::device("cuda:0")}});
  const at::Tensor t = run_tensor(c);
  EXPECT_EQ(t.scalar_type(), at::kHalf);
  EXPECT_TRUE(at::equal(t, at::tensor({1.0, 2.0, 3.0, 4.0}).to(at::kHalf).view({2, 2})));
  EXPECT_EQ(run_tensor(make_case("torch.tensor", {value_input(PyValue::real(2.0))})).scalar_type(), at::kFloat);
  EXPECT_EQ(run_tensor(make_case("torch.as_tensor", {value_input(ints({1, 2}))})).scalar_type(), at::kLong);
}

TEST(UnknownOps, SuggestTheClosestName) {
  EXPECT_EQ(resolved(make_case("torch.flor", {f32({3})})), "error: unknown op 'torch.flor' (did you mean torch.floor?)");
  EXPECT_EQ(resolved(make_case("torch.Tensor.flor", {f32({3})})),
            "error: unknown op 'torch.Tensor.flor' (did you mean torch.Tensor.floor?)");
  EXPECT_EQ(resolved(make_case("aten::flor", {f32({3})})), "error: unknown op 'aten::flor' (did you mean aten::floor?)");
  EXPECT_EQ(resolved(make_case("torch.ops.aten.flor.default", {f32({3})})),
            "error: unknown op 'torch.ops.aten.flor' (did you mean torch.ops.aten.floor?)");
  EXPECT_EQ(resolved(make_case("torch.nn.functional.sofmax", {f32({3})})),
            "error: unknown op 'torch.nn.functional.sofmax' (did you mean torch.nn.functional.softmax?)");
  EXPECT_EQ(resolved(make_case("torch.getiten", {f32({3})})), "error: unknown op 'torch.getiten' (did you mean torch.getitem?)");
  EXPECT_EQ(resolved(make_case("torch.qwertyuiop", {f32({3})})), "error: unknown op 'torch.qwertyuiop'");
}

// Every op name the real torch-spyre manifests use resolves to something (a dispatcher op, a table row or a
// decomposition), with no per-op code.
TEST(RealNames, EveryNameOfTheRealManifestsIsKnown) {
  const char* names[] = {
      "torch.nn.functional.linear", "torch.nn.functional.scaled_dot_product_attention", "torch.mul", "torch.getitem",
      "torch.add", "torch.cat", "torch.unsqueeze", "torch.to", "torch.transpose", "torch.Tensor.expand", "torch.reshape",
      "torch.Tensor.view", "torch.float", "torch.Tensor.contiguous", "torch.flatten", "torch.index_copy_", "torch.neg",
      "torch.matmul", "torch.and_", "torch.pow", "torch.nn.functional.silu", "torch.mean", "torch.sum", "torch.rsqrt",
      "torch.nn.functional.embedding", "torch.sym_sum", "torch.sin", "torch.cos", "torch.arange", "torch.split",
      "torch.sub", "torch.zeros", "torch.le", "torch.clamp", "torch.chunk", "torch.Tensor.add",
      "torch.nn.functional.softmax", "torch.truediv", "torch.squeeze", "torch.nn.functional.pad", "torch.view_as",
      "torch.tril", "torch.nn.functional.dropout", "torch.max", "torch.masked_fill", "torch.exp", "torch.cumsum",
      "torch.bmm", "torch._C._log_api_usage_once", "torch.topk", "torch.permute", "torch.floordiv", "torch.tensor",
      "torch.sigmoid", "torch.rms_norm", "torch.repeat", "torch.new_ones", "torch.lt", "torch.log", "torch.invert",
      "torch.functional.split", "torch.floor", "torch.__eq__", "torch.Tensor.copy_", "torch.zeros_like",
      "torch.type_as", "torch.stack", "torch.sort", "torch.softmax", "torch.scatter", "torch.repeat_interleave",
      "torch.prod", "torch.ones", "torch.nn.functional.softplus", "torch.nn.functional.gelu", "torch.masked_scatter",
      "torch.long", "torch.index_add", "torch.gt", "torch.functional.meshgrid", "torch.full", "torch.expand_as",
      "torch.div", "torch.conv2d", "torch.conv1d", "torch.as_tensor", "torch.all", "torch.ops.aten.view",
      "torch.logical_and"};
  for (const char* n : names) {
    // A call with no arguments fails to bind, but must not fail as an unknown op.
    const std::string r = resolved(make_case(n, {}));
    EXPECT_EQ(r.find("unknown op"), std::string::npos) << n << ": " << r;
  }
}

}  // namespace
}  // namespace opcheck::exec
