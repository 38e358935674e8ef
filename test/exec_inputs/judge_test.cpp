// The float64 judge and the backend freedoms (src/exec/compare.cpp, src/exec/backend_freedoms.cpp): a device more
// accurate than the CPU passes, a wrong element still fails, a widened statistic is compared by value, and the
// results PyTorch leaves undefined take the device's allowed choice.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <limits>

#include "exec/backend_freedoms.h"
#include "exec/compare.h"

namespace opcheck::exec {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

bool any_note(const Comparison& c, const std::string& part) {
  for (const auto& n : c.notes)
    if (contains(n, part)) return true;
  return false;
}

/// fp16 mm(2x1024, 1024x4096) of randn inputs: a reference that accumulates in float16 (each partial sum rounded, as
/// the CPU's float16 embedding_dense_backward and some builds' mm do), the float64 result, and a device that rounds
/// the float64 result once (more accurate than the reference).
struct HalfMatmul {
  at::Tensor cpu, golden, precise;
  HalfMatmul() {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(20261128);
    const at::Tensor a = at::randn({2, 1024}, gen, at::kFloat).to(at::kHalf);
    const at::Tensor b = at::randn({1024, 4096}, gen, at::kFloat).to(at::kHalf);
    cpu = at::zeros({2, 4096}, at::kHalf);
    for (int64_t k = 0; k < 1024; ++k) cpu = cpu + at::outer(a.select(1, k), b.select(0, k));
    golden = at::mm(a.to(at::kDouble), b.to(at::kDouble));
    precise = golden.to(at::kHalf);
  }
};

TEST(Float64Judge, DeviceMoreAccurateThanTheCpuFailsTheToleranceAlone) {
  const HalfMatmul m;
  const Comparison plain = compare_values(m.cpu, m.precise, Tolerance{});
  ASSERT_FALSE(plain.ok) << "the premise: the CPU's float16 accumulation is outside the tolerance of float64 rounded";
  EXPECT_TRUE(plain.wants_golden) << "a floating output that misses the tolerance asks for the float64 judge";
}

TEST(Float64Judge, DeviceMoreAccurateThanTheCpuPassesAndTheRecordSaysTheCpuWasFurther) {
  const HalfMatmul m;
  const c10::IValue golden(m.golden);
  const Comparison judged = compare_values(m.cpu, m.precise, Tolerance{}, "output", &golden);
  EXPECT_TRUE(judged.ok) << judged.message;
  EXPECT_TRUE(any_note(judged, "the float64 judge passed")) << "the record says the judge decided";
  EXPECT_TRUE(any_note(judged, "the CPU reference was the further from float64 at "));
  ASSERT_TRUE(judged.figures.worst_golden.has_value()) << "the worst element carries its float64 value";
}

TEST(Float64Judge, OneWrongElementStillFailsWithAllThreeValuesAndBothErrors) {
  const HalfMatmul m;
  // off:1e-2 as the loopback fault moves it: 1% of the value, and at least 4 steps of float16; at the element where
  // the reference is closest to float64 (elsewhere three times a float16-accumulated reference's error is wider).
  const int64_t at_best = (m.cpu.to(at::kDouble) - m.golden).abs().view(-1).argmin().item<int64_t>();
  at::Tensor wrong = m.precise.clone();
  const double v = wrong.view(-1)[at_best].item<double>();
  const double step = std::ldexp(1.0, std::ilogb(std::abs(v)) - 10);
  wrong.view(-1)[at_best] = v + std::max(std::abs(v) * 1e-2, 4 * step);
  const c10::IValue golden(m.golden);
  const Comparison judged = compare_values(m.cpu, wrong, Tolerance{}, "output", &golden);
  ASSERT_FALSE(judged.ok);
  EXPECT_EQ(judged.figures.mismatched, 1) << judged.message;
  const std::string where = "(" + std::to_string(at_best / 4096) + ", " + std::to_string(at_best % 4096) + ")";
  EXPECT_TRUE(contains(judged.message, "Against float64 at index " + where + ": device ")) << judged.message;
  EXPECT_TRUE(contains(judged.message, ", CPU reference ")) << judged.message;
  EXPECT_TRUE(contains(judged.message, "from float64, the CPU reference ")) << judged.message;
}

TEST(Float64Judge, WhateverPassesTheToleranceStillPasses) {
  // A float64 result far from both (as a wrong golden would be) cannot fail what the tolerance passes.
  const at::Tensor e = at::linspace(-3, 5, 64, at::kFloat).to(at::kHalf);
  const c10::IValue golden(e.to(at::kDouble) + 1.0);
  const Comparison judged = compare_values(e, e.clone(), Tolerance{}, "output", &golden);
  EXPECT_TRUE(judged.ok) << judged.message;
}

TEST(Float64Judge, OneStepOfTheDtypeIsAllowedWhereTheCpuIsExact) {
  // The CPU gives float64 rounded, the device one float16 step beside it, under a tolerance tighter than a step.
  const at::Tensor golden = at::full({4}, 1000.3, at::kDouble);
  const at::Tensor cpu = golden.to(at::kHalf);
  const at::Tensor device = (cpu.to(at::kDouble) + 0.5).to(at::kHalf);  // float16's step in [512, 1024) is 0.5
  ASSERT_EQ(device[0].item<double>(), cpu[0].item<double>() + 0.5);
  Tolerance tight;
  tight.rtol = 1e-6;
  tight.atol = 0;
  EXPECT_FALSE(compare_values(cpu, device, tight).ok);
  const c10::IValue g(golden);
  const Comparison judged = compare_values(cpu, device, tight, "output", &g);
  EXPECT_TRUE(judged.ok) << judged.message;
  // Two steps are not one.
  const at::Tensor two = (cpu.to(at::kDouble) + 1.0).to(at::kHalf);
  EXPECT_FALSE(compare_values(cpu, two, tight, "output", &g).ok);
}

TEST(Float64Judge, AReferenceThatOverflowedWidensNothing) {
  const at::Tensor cpu = at::full({1}, -std::numeric_limits<double>::infinity(), at::kHalf);
  const c10::IValue golden(at::full({1}, -70000.0, at::kDouble));
  EXPECT_FALSE(compare_values(cpu, at::zeros({1}, at::kHalf), Tolerance{}, "output", &golden).ok);
}

TEST(Float64Judge, ExactAndPccKeepTheirOwnRules) {
  const HalfMatmul m;
  const c10::IValue golden(m.golden);
  Tolerance exact;
  exact.kind = Comparator::Exact;
  const Comparison e = compare_values(m.cpu, m.precise, exact, "output", &golden);
  EXPECT_FALSE(e.ok);
  EXPECT_FALSE(e.wants_golden);
}

TEST(BackendFreedoms, WidenedNormStatisticsAreComparedByValueWithANote) {
  const at::Tensor x = at::randn({4, 64}, at::kFloat).to(at::kHalf);
  const auto cpu = at::native_layer_norm(x, {64}, {}, {}, 1e-5);
  const auto wide = at::native_layer_norm(x.to(at::kFloat), {64}, {}, {}, 1e-5);
  const c10::IValue expected = c10::ivalue::Tuple::create({std::get<0>(cpu), std::get<1>(cpu), std::get<2>(cpu)});
  const c10::IValue actual = c10::ivalue::Tuple::create({std::get<0>(cpu), std::get<1>(wide), std::get<2>(wide)});
  Tolerance tol;
  tol.resolved_op = "aten::native_layer_norm";
  const Comparison c = compare_values(expected, actual, tol);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_TRUE(any_note(c, "output[1] is Float where the CPU gives Half, compared by value: a backend freedom"));
  // The same widening of the normalised output, or of any other op's output, is still a dtype mismatch.
  const c10::IValue widened_out = c10::ivalue::Tuple::create({std::get<0>(wide), std::get<1>(cpu), std::get<2>(cpu)});
  EXPECT_FALSE(compare_values(expected, widened_out, tol).ok);
  tol.resolved_op = "aten::native_dropout";
  EXPECT_FALSE(compare_values(expected, actual, tol).ok);
}

TEST(BackendFreedoms, RepeatedWritesPassWhenTheDeviceKeptOneOfTheWrittenValues) {
  // index_copy(self[4], 0, [1, 1, 2], [10, 20, 30]): position 1 is written twice.
  const at::Tensor self = at::zeros({4});
  const at::Tensor index = at::tensor({1, 1, 2}, at::kLong);
  const at::Tensor source = at::tensor({10.0f, 20.0f, 30.0f});
  const NamedArgs args{{"self", self}, {"dim", int64_t{0}}, {"index", index}, {"source", source}};
  RunValues reference{at::tensor({0.0f, 20.0f, 30.0f, 0.0f}), {}};
  const RunValues other_writer{at::tensor({0.0f, 10.0f, 30.0f, 0.0f}), {}};
  const std::string note = align_undefined("aten::index_copy", args, other_writer, {&reference});
  EXPECT_TRUE(contains(note, "1 position(s) written more than once hold the device's value")) << note;
  EXPECT_TRUE(reference.output.toTensor().equal(other_writer.output.toTensor()));
  // A value nobody wrote there is not taken: the comparison then fails as before.
  RunValues reference2{at::tensor({0.0f, 20.0f, 30.0f, 0.0f}), {}};
  const RunValues garbage{at::tensor({0.0f, 15.0f, 30.0f, 0.0f}), {}};
  EXPECT_EQ(align_undefined("aten::index_copy", args, garbage, {&reference2}), "");
  EXPECT_FALSE(compare_values(reference2.output, garbage.output, Tolerance{}).ok);
}

TEST(BackendFreedoms, TiedIndicesPassWhenTheyPointAtEqualElements) {
  const at::Tensor self = at::tensor({3.0f, 1.0f, 3.0f, 2.0f}).view({1, 4});
  const NamedArgs args{{"self", self}, {"k", int64_t{1}}, {"dim", int64_t{-1}}};
  RunValues reference{c10::ivalue::Tuple::create({at::tensor({3.0f}).view({1, 1}), at::tensor({0}, at::kLong).view({1, 1})}), {}};
  const RunValues other_tie{c10::ivalue::Tuple::create({at::tensor({3.0f}).view({1, 1}), at::tensor({2}, at::kLong).view({1, 1})}), {}};
  const std::string note = align_undefined("aten::topk", args, other_tie, {&reference});
  EXPECT_TRUE(contains(note, "1 index(es) differ from the CPU's but point at an element equal")) << note;
  EXPECT_TRUE(compare_values(reference.output, other_tie.output, Tolerance{}).ok);
  // An index at an element of another value is not taken.
  RunValues reference2{c10::ivalue::Tuple::create({at::tensor({3.0f}).view({1, 1}), at::tensor({0}, at::kLong).view({1, 1})}), {}};
  const RunValues wrong{c10::ivalue::Tuple::create({at::tensor({3.0f}).view({1, 1}), at::tensor({3}, at::kLong).view({1, 1})}), {}};
  EXPECT_EQ(align_undefined("aten::topk", args, wrong, {&reference2}), "");
  EXPECT_FALSE(compare_values(reference2.output, wrong.output, Tolerance{}).ok);
}

RunValues unique_result(std::vector<float> values, std::vector<int64_t> inverse, std::vector<int64_t> counts) {
  return RunValues{c10::ivalue::Tuple::create({at::tensor(values), at::tensor(inverse, at::kLong),
                                               at::tensor(counts, at::kLong)}),
                   {}};
}

// torch.unique(sorted=False) leaves the order of its values to the backend: another order passes when the inverse
// indices and counts agree with it; a wrong inverse or count, other values, or sorted=True still fail.
TEST(BackendFreedoms, UniqueValuesMayComeInTheDevicesOrder) {
  const at::Tensor self = at::tensor({5.0f, 1.0f, 5.0f, 3.0f});
  const NamedArgs unsorted{{"self", self}, {"sorted", false}, {"return_inverse", true}, {"return_counts", true}};
  const RunValues device = unique_result({3, 5, 1}, {1, 2, 1, 0}, {1, 2, 1});
  RunValues reference = unique_result({5, 1, 3}, {0, 1, 0, 2}, {2, 1, 1});
  const std::string note = align_undefined("aten::_unique2", unsorted, device, {&reference});
  EXPECT_TRUE(contains(note, "3 unique value(s) come in another order than the CPU's")) << note;
  EXPECT_TRUE(compare_values(reference.output, device.output, Tolerance{}).ok);

  RunValues reference2 = unique_result({5, 1, 3}, {0, 1, 0, 2}, {2, 1, 1});
  const RunValues wrong_inverse = unique_result({3, 5, 1}, {1, 2, 1, 1}, {1, 2, 1});
  align_undefined("aten::_unique2", unsorted, wrong_inverse, {&reference2});
  EXPECT_FALSE(compare_values(reference2.output, wrong_inverse.output, Tolerance{}).ok);

  RunValues reference3 = unique_result({5, 1, 3}, {0, 1, 0, 2}, {2, 1, 1});
  const RunValues wrong_count = unique_result({3, 5, 1}, {1, 2, 1, 0}, {1, 1, 2});
  align_undefined("aten::_unique2", unsorted, wrong_count, {&reference3});
  EXPECT_FALSE(compare_values(reference3.output, wrong_count.output, Tolerance{}).ok);

  RunValues reference4 = unique_result({5, 1, 3}, {0, 1, 0, 2}, {2, 1, 1});
  const RunValues other_value = unique_result({3, 5, 2}, {1, 2, 1, 0}, {1, 2, 1});
  EXPECT_EQ(align_undefined("aten::_unique2", unsorted, other_value, {&reference4}), "");
  EXPECT_FALSE(compare_values(reference4.output, other_value.output, Tolerance{}).ok);

  const NamedArgs sorted{{"self", self}, {"sorted", true}, {"return_inverse", true}, {"return_counts", true}};
  RunValues reference5 = unique_result({1, 3, 5}, {2, 0, 2, 1}, {1, 1, 2});
  const RunValues unsorted_device = unique_result({3, 5, 1}, {1, 2, 1, 0}, {1, 2, 1});
  EXPECT_EQ(align_undefined("aten::_unique2", sorted, unsorted_device, {&reference5}), "");
  EXPECT_FALSE(compare_values(reference5.output, unsorted_device.output, Tolerance{}).ok);
}

// unique_dim's values are slices along dim: the device may order the slices differently.
TEST(BackendFreedoms, UniqueSlicesMayComeInTheDevicesOrder) {
  const at::Tensor self = at::tensor({1.0f, 2.0f, 0.0f, 0.0f, 1.0f, 2.0f}).view({3, 2});
  const NamedArgs args{{"self", self}, {"dim", int64_t{0}}, {"sorted", false}, {"return_inverse", true},
                       {"return_counts", true}};
  auto result = [](std::vector<float> v, std::vector<int64_t> inv, std::vector<int64_t> cnt) {
    return RunValues{c10::ivalue::Tuple::create({at::tensor(v).view({2, 2}), at::tensor(inv, at::kLong),
                                                 at::tensor(cnt, at::kLong)}),
                     {}};
  };
  RunValues reference = result({0, 0, 1, 2}, {1, 0, 1}, {1, 2});
  const RunValues device = result({1, 2, 0, 0}, {0, 1, 0}, {2, 1});
  EXPECT_FALSE(align_undefined("aten::unique_dim", args, device, {&reference}).empty());
  EXPECT_TRUE(compare_values(reference.output, device.output, Tolerance{}).ok);
}

TEST(BackendFreedoms, NondeterministicOpsAreThoseTorchDocuments) {
  EXPECT_NE(nondeterministic_by_design("aten::index_add", {}), "");
  EXPECT_NE(nondeterministic_by_design("aten::embedding_dense_backward", {}), "");
  EXPECT_EQ(nondeterministic_by_design("aten::index_put_", {{"accumulate", false}}), "");
  EXPECT_TRUE(contains(nondeterministic_by_design("aten::index_put_", {{"accumulate", true}}),
                       "torch.use_deterministic_algorithms: torch.Tensor.index_put() with accumulate=True"));
  EXPECT_EQ(nondeterministic_by_design("aten::mm", {}), "");
}

// linalg_lstsq's CPU kernel reads an uninitialised pivot array with the gelsy driver (its default on the CPU) only.
TEST(BackendFreedoms, LstsqVariesOnlyWithTheGelsyDriver) {
  EXPECT_TRUE(contains(nondeterministic_by_design("aten::linalg_lstsq", {{"driver", c10::IValue()}}), "jpvt"));
  EXPECT_TRUE(contains(nondeterministic_by_design("aten::linalg_lstsq", {{"driver", std::string("gelsy")}}), "gelsy"));
  EXPECT_EQ(nondeterministic_by_design("aten::linalg_lstsq", {{"driver", std::string("gelsd")}}), "");
  EXPECT_EQ(nondeterministic_by_design("aten::linalg_lstsq", {{"driver", std::string("gels")}}), "");
}

}  // namespace
}  // namespace opcheck::exec
