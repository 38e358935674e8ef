// Comparators: what each one catches and lets pass, the figures, and assert_close-like messages.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <limits>

#include "exec/compare.h"
#include "exec/cpu_features.h"

namespace opcheck::exec {
namespace {

Tolerance with(Comparator kind) {
  Tolerance t;
  t.kind = kind;
  return t;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

at::Tensor sample(at::ScalarType t = at::kFloat, std::int64_t n = 64) {
  return at::linspace(-3, 5, n, at::kDouble).to(t).reshape({n / 8, 8});
}

TEST(UninitialisedOutputs, LayoutIsComparedValuesAreNot) {
  EXPECT_TRUE(returns_uninitialised("aten::new_empty"));
  EXPECT_TRUE(returns_uninitialised("aten::new_empty_strided"));
  EXPECT_TRUE(returns_uninitialised("aten::empty_like"));
  EXPECT_TRUE(returns_uninitialised("aten::empty.memory_format"));
  EXPECT_TRUE(returns_uninitialised("aten::empty_strided"));
  EXPECT_FALSE(returns_uninitialised("aten::empty_permuted_like_this_is_not_an_op"));
  EXPECT_FALSE(returns_uninitialised("aten::zeros_like"));
  Tolerance layout;
  layout.values = false;
  const at::Tensor expected = at::empty_strided({4, 6}, {1, 4});
  // Different values, same layout: passes, and no element counts as compared.
  const at::Tensor same_layout = at::full_like(expected, std::nan(""));
  const Comparison ok = compare_values(expected, same_layout, layout);
  EXPECT_TRUE(ok.ok) << ok.message;
  EXPECT_EQ(ok.figures.total, 0);
  // Same shape and dtype, other strides: fails, and says values were not compared.
  const Comparison bad = compare_values(expected, at::zeros({4, 6}), layout);
  EXPECT_FALSE(bad.ok);
  EXPECT_TRUE(contains(bad.message, "output: stride mismatch: expected (1, 4), got (6, 1)")) << bad.message;
  EXPECT_FALSE(compare_values(expected, at::zeros({4, 6}, at::kDouble).t().contiguous().t(), layout).ok);  // dtype
}

TEST(DefaultTolerance, MatchesAssertClose) {
  double rtol = 0, atol = 0;
  default_tolerance(at::kHalf, rtol, atol);
  EXPECT_EQ(rtol, 1e-3);
  EXPECT_EQ(atol, 1e-5);
  default_tolerance(at::kBFloat16, rtol, atol);
  EXPECT_EQ(rtol, 1.6e-2);
  default_tolerance(at::kFloat, rtol, atol);
  EXPECT_EQ(rtol, 1.3e-6);
  EXPECT_EQ(atol, 1e-5);
  default_tolerance(at::kDouble, rtol, atol);
  EXPECT_EQ(rtol, 1e-7);
  EXPECT_EQ(atol, 1e-7);
  default_tolerance(at::kLong, rtol, atol);
  EXPECT_EQ(rtol, 0.0);
  EXPECT_EQ(atol, 0.0);
  default_tolerance(at::kComplexFloat, rtol, atol);
  EXPECT_EQ(rtol, 1.3e-6);
}

TEST(ToleranceOf, TakesTheCaseFields) {
  Case c;
  c.compare = Comparator::Pcc;
  c.pcc_min = 0.99;
  c.rtol = 0.5;
  c.equal_nan = false;
  Tolerance t = tolerance_of(c);
  EXPECT_EQ(t.kind, Comparator::Pcc);
  EXPECT_EQ(t.pcc_min, 0.99);
  EXPECT_EQ(*t.rtol, 0.5);
  EXPECT_FALSE(t.atol.has_value());
  EXPECT_FALSE(t.equal_nan);
}

TEST(Compare, EqualTensorsPassEveryComparator) {
  for (Comparator k : {Comparator::AllClose, Comparator::Pcc, Comparator::Exact}) {
    Comparison r = compare_values(sample(), sample(), with(k));
    EXPECT_TRUE(r.ok) << r.message;
    EXPECT_EQ(r.figures.total, 64);
    EXPECT_EQ(r.figures.mismatched, 0);
    EXPECT_EQ(*r.figures.max_abs_diff, 0.0);
  }
}

TEST(Compare, ExactCatchesOneUlp) {
  at::Tensor e = sample(), a = e.clone();
  float* p = a.data_ptr<float>();
  p[13] = std::nextafter(p[13], std::numeric_limits<float>::infinity());
  Comparison exact = compare_values(e, a, with(Comparator::Exact));
  EXPECT_FALSE(exact.ok);
  EXPECT_EQ(exact.figures.mismatched, 1);
  EXPECT_TRUE(contains(exact.message, "bitwise")) << exact.message;
  EXPECT_TRUE(contains(exact.message, "Mismatched elements: 1 / 64 (1.6%)")) << exact.message;
  EXPECT_TRUE(contains(exact.message, "at index (1, 5)")) << exact.message;
  EXPECT_TRUE(compare_values(e, a, with(Comparator::AllClose)).ok) << "1 ulp is within fp32's default rtol";
}

TEST(Compare, ExactTellsSignedZerosApart) {
  at::Tensor e = at::zeros({4}), a = e.clone();
  a[2] = -0.0;
  EXPECT_FALSE(compare_values(e, a, with(Comparator::Exact)).ok);
  EXPECT_TRUE(compare_values(e, a, with(Comparator::AllClose)).ok);
}

TEST(Compare, AllcloseCatchesABiasAndNamesTheGreatestDifference) {
  at::Tensor e = sample(), a = e + 1e-2;
  a[2][3] += 0.5;  // the greatest absolute difference
  Comparison r = compare_values(e, a, with(Comparator::AllClose), "output 0");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.figures.mismatched, 64);
  EXPECT_EQ(r.figures.total, 64);
  EXPECT_NEAR(*r.figures.max_abs_diff, 0.51, 1e-5);
  EXPECT_TRUE(contains(r.message, "output 0: Tensor-likes are not close!")) << r.message;
  EXPECT_TRUE(contains(r.message, "Mismatched elements: 64 / 64 (100.0%)")) << r.message;
  EXPECT_TRUE(contains(r.message, "Greatest absolute difference: 0.509999990463")) << r.message;
  EXPECT_TRUE(contains(r.message, "at index (2, 3) (up to 1e-05 allowed)")) << r.message;
  EXPECT_TRUE(contains(r.message, "Greatest relative difference:")) << r.message;
  EXPECT_TRUE(contains(r.message, "(up to 1.3e-06 allowed)")) << r.message;
}

TEST(Compare, AllcloseHonoursCaseTolerances) {
  at::Tensor e = sample(), a = e + 1e-2;
  Tolerance loose = with(Comparator::AllClose);
  loose.atol = 2e-2;
  EXPECT_TRUE(compare_values(e, a, loose).ok);
  loose.atol = 0.0;
  loose.rtol = 1e-4;
  EXPECT_FALSE(compare_values(e, a, loose).ok);
}

TEST(Compare, Fp16OneUlpPassesDefaultsButTwoPercentFails) {
  at::Tensor e = at::full({8}, 1.0, at::kHalf);
  at::Tensor a = e.clone();
  a[0] = 1.0009765625;  // next fp16 after 1.0, within rtol 1e-3 + atol 1e-5
  EXPECT_TRUE(compare_values(e, a, with(Comparator::AllClose)).ok);
  a[1] = 1.02;
  EXPECT_FALSE(compare_values(e, a, with(Comparator::AllClose)).ok);
  at::Tensor b = at::full({8}, 1.0, at::kBFloat16), bb = b.clone();
  bb[0] = 1.0078125;  // one bf16 ulp, within rtol 1.6e-2
  EXPECT_TRUE(compare_values(b, bb, with(Comparator::AllClose)).ok);
}

TEST(Compare, ShapeMismatch) {
  Comparison r = compare_values(at::zeros({2, 3}), at::zeros({3, 2}), with(Comparator::AllClose));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.message, "shape mismatch: expected torch.Size([2, 3]), got torch.Size([3, 2])")) << r.message;
}

TEST(Compare, SparseOutputsAreJudgedByLayoutThenByTheirDenseValues) {
  const at::Tensor dense = at::tensor({0.0, 1.5, 0.0, -2.0, 0.0, 3.0}, at::kFloat).reshape({2, 3});
  const at::Tensor coo = dense.to_sparse();
  // The same values stored otherwise (uncoalesced: the nonzeros split in two entries each) pass.
  const at::Tensor indices = at::cat({coo.indices(), coo.indices()}, 1);
  const at::Tensor uncoalesced = at::sparse_coo_tensor(indices, at::cat({coo.values() / 2, coo.values() / 2}),
                                                       coo.sizes());
  ASSERT_FALSE(uncoalesced.is_coalesced());
  EXPECT_TRUE(compare_values(coo, uncoalesced, with(Comparator::Exact)).ok);
  // One wrong value fails, at its dense index.
  at::Tensor wrong_dense = dense.clone();
  wrong_dense.index_put_({1, 2}, 3.5);
  const Comparison wrong = compare_values(coo, wrong_dense.to_sparse(), with(Comparator::AllClose));
  EXPECT_FALSE(wrong.ok);
  EXPECT_TRUE(contains(wrong.message, "(1, 2)")) << wrong.message;
  // A dense result where the CPU gives a sparse one fails by its layout, even with every value right.
  const Comparison layout = compare_values(coo, dense, with(Comparator::AllClose));
  EXPECT_FALSE(layout.ok);
  EXPECT_TRUE(contains(layout.message, "layout mismatch: expected torch.sparse_coo, got torch.strided"))
      << layout.message;
  const Comparison csr = compare_values(dense.to_sparse_csr(), coo, with(Comparator::AllClose));
  EXPECT_FALSE(csr.ok);
  EXPECT_TRUE(contains(csr.message, "expected torch.sparse_csr, got torch.sparse_coo")) << csr.message;
  EXPECT_TRUE(compare_values(dense.to_sparse_csr(), dense.to_sparse_csr(), with(Comparator::Exact)).ok);
  // The float64 judge takes a sparse float64 result too: a device nearer to it than the CPU passes.
  const at::Tensor exact = at::tensor({0.0, 1.0 / 3, 0.0, -2.0, 0.0, 3.0}, at::kDouble).reshape({2, 3});
  const at::Tensor cpu = exact.to(at::kHalf);
  at::Tensor device = cpu.clone();
  device.index_put_({0, 1}, cpu.index({0, 1}) + 0.002);  // off by about two steps of fp16 at 1/3
  const Comparison without = compare_values(cpu.to_sparse(), device.to_sparse(), with(Comparator::AllClose));
  EXPECT_FALSE(without.ok) << "the tolerance alone fails it";
  const c10::IValue golden(exact.to_sparse());
  const Comparison judged =
      compare_values(cpu.to_sparse(), device.to_sparse(), with(Comparator::AllClose), "output", &golden);
  EXPECT_FALSE(judged.ok) << "two steps from float64 where the CPU is within one still fails";
  EXPECT_TRUE(contains(judged.message, "Against float64")) << judged.message;
}

TEST(Compare, DtypeMismatch) {
  Comparison r = compare_values(at::zeros({2}, at::kHalf), at::zeros({2}, at::kFloat), with(Comparator::AllClose));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.message, "dtype mismatch: expected torch.float16, got torch.float32")) << r.message;
}

TEST(Compare, NanInPlaceIsEqualMisplacedNanIsNot) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  at::Tensor e = at::tensor({1.0, nan, 3.0, 4.0}, at::kFloat);
  EXPECT_TRUE(compare_values(e, e.clone(), with(Comparator::AllClose)).ok);
  EXPECT_TRUE(compare_values(e, e.clone(), with(Comparator::Pcc)).ok);
  Tolerance strict = with(Comparator::AllClose);
  strict.equal_nan = false;
  EXPECT_FALSE(compare_values(e, e.clone(), strict).ok);

  at::Tensor a = at::tensor({1.0, 2.0, nan, 4.0}, at::kFloat);
  Comparison r = compare_values(e, a, with(Comparator::AllClose));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.figures.mismatched, 2);
  EXPECT_TRUE(contains(r.message, "Greatest absolute difference: nan at index (1,)")) << r.message;
  Comparison p = compare_values(e, a, with(Comparator::Pcc));
  EXPECT_FALSE(p.ok);
  EXPECT_TRUE(contains(p.message, "index (1,)")) << p.message;
}

TEST(Compare, InfinitiesMustMatchWithTheSameSign) {
  const double inf = std::numeric_limits<double>::infinity();
  at::Tensor e = at::tensor({1.0, inf, -inf}, at::kFloat);
  EXPECT_TRUE(compare_values(e, e.clone(), with(Comparator::AllClose)).ok);
  Comparison flipped = compare_values(e, at::tensor({1.0, -inf, -inf}, at::kFloat), with(Comparator::AllClose));
  EXPECT_FALSE(flipped.ok);
  EXPECT_TRUE(contains(flipped.message, "index (1,)")) << flipped.message;
  EXPECT_FALSE(compare_values(e, at::tensor({1.0, 3e38, -inf}, at::kFloat), with(Comparator::AllClose)).ok);
}

TEST(Compare, IntegersAreExactEvenBeyondDoublePrecision) {
  const std::int64_t big = std::int64_t{1} << 53;
  at::Tensor e = at::tensor({big, std::int64_t{1}}, at::kLong);
  at::Tensor a = at::tensor({big + 1, std::int64_t{1}}, at::kLong);
  Comparison r = compare_values(e, a, with(Comparator::AllClose));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.figures.mismatched, 1);
  Tolerance loose = with(Comparator::AllClose);
  loose.rtol = 5e-3;
  loose.atol = 5e-3;  // a manifest's fp16 tolerances must not make index 1000 "close" to 1004
  EXPECT_FALSE(compare_values(at::tensor({std::int64_t{1000}}), at::tensor({std::int64_t{1004}}), loose).ok);
  const at::Tensor tf = at::tensor({1, 0}).to(at::kBool), tt = at::tensor({1, 1}).to(at::kBool);
  EXPECT_TRUE(compare_values(tf, tf.clone(), with(Comparator::AllClose)).ok);
  EXPECT_FALSE(compare_values(tf, tt, with(Comparator::AllClose)).ok);
}

TEST(Compare, ComplexComparesBothParts) {
  at::Tensor e = at::complex(at::ones({4}), at::zeros({4}));
  at::Tensor a = at::complex(at::ones({4}), at::zeros({4}));
  EXPECT_TRUE(compare_values(e, a, with(Comparator::AllClose)).ok);
  at::Tensor b = at::complex(at::ones({4}), at::tensor({0.f, 0.f, 0.1f, 0.f}));
  Comparison r = compare_values(e, b, with(Comparator::AllClose));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.figures.mismatched, 1);
  EXPECT_TRUE(contains(r.message, "at index (2,)")) << r.message;
  EXPECT_FALSE(compare_values(e, b, with(Comparator::Exact)).ok);
}

TEST(Compare, ListsTuplesAndTheirLengths) {
  c10::List<at::Tensor> e3({sample(), sample(), sample()});
  c10::List<at::Tensor> a2({sample(), sample()});
  Comparison r = compare_values(e3, a2, with(Comparator::AllClose));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.message, "length mismatch: expected a list of 3 elements, got 2")) << r.message;

  c10::List<at::Tensor> bad({sample(), sample() + 1, sample()});
  Comparison leaf = compare_values(e3, bad, with(Comparator::AllClose));
  EXPECT_FALSE(leaf.ok);
  EXPECT_TRUE(contains(leaf.message, "output[1]: Tensor-likes are not close!")) << leaf.message;
  EXPECT_EQ(leaf.figures.total, 3 * 64);
  EXPECT_EQ(leaf.figures.mismatched, 64);

  auto tup = c10::ivalue::Tuple::create({sample(), c10::IValue(std::int64_t{3})});
  auto tup_bad = c10::ivalue::Tuple::create({sample(), c10::IValue(std::int64_t{4})});
  EXPECT_TRUE(compare_values(tup, c10::ivalue::Tuple::create({sample(), c10::IValue(std::int64_t{3})}), with(Comparator::AllClose)).ok);
  Comparison t = compare_values(tup, tup_bad, with(Comparator::AllClose));
  EXPECT_FALSE(t.ok);
  EXPECT_TRUE(contains(t.message, "output[1]: values differ: expected 3, got 4")) << t.message;
}

TEST(Compare, ScalarsAndTypeMismatches) {
  EXPECT_TRUE(compare_values(c10::IValue(1.0), c10::IValue(1.0 + 1e-12), with(Comparator::AllClose)).ok);
  EXPECT_FALSE(compare_values(c10::IValue(1.0), c10::IValue(1.1), with(Comparator::AllClose)).ok);
  EXPECT_FALSE(compare_values(c10::IValue(true), c10::IValue(false), with(Comparator::AllClose)).ok);
  EXPECT_TRUE(compare_values(c10::IValue(), c10::IValue(), with(Comparator::AllClose)).ok);
  Comparison r = compare_values(c10::IValue(sample()), c10::IValue(std::int64_t{2}), with(Comparator::AllClose));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.message, "type mismatch: expected a Tensor, got a int")) << r.message;
  Comparison n = compare_values(c10::IValue(std::int64_t{2}), c10::IValue(2.0), with(Comparator::AllClose));
  EXPECT_FALSE(n.ok);
  EXPECT_TRUE(contains(n.message, "expected a int (2), got a float (2.0)")) << n.message;
}

TEST(Compare, PccPassesCorrelatedAndFailsUncorrelated) {
  at::Tensor e = at::linspace(0, 1, 1000, at::kFloat);
  Tolerance pcc = with(Comparator::Pcc);
  pcc.pcc_min = 0.999;
  Comparison scaled = compare_values(e, e * 2 + 1, pcc);  // perfectly correlated, not close
  EXPECT_TRUE(scaled.ok) << scaled.message;
  EXPECT_NEAR(*scaled.figures.pcc, 1.0, 1e-12);
  EXPECT_GT(scaled.figures.mismatched, 0) << "allclose mismatches are still counted, for information";

  at::Tensor noisy = e + 0.3 * at::randn({1000}, at::make_generator<at::CPUGeneratorImpl>(1));
  Comparison r = compare_values(e, noisy, pcc);
  EXPECT_FALSE(r.ok);
  EXPECT_LT(*r.figures.pcc, 0.999);
  EXPECT_TRUE(contains(r.message, "is below the required 0.999")) << r.message;
  EXPECT_FALSE(compare_values(e, -e, pcc).ok);
}

TEST(Compare, PccEdgeCasesFallBackToAllclose) {
  Tolerance pcc = with(Comparator::Pcc);
  // Constant tensors: correlation undefined; equal values pass (pcc 1), different values fail (pcc 0).
  Comparison same_const = compare_values(at::full({16}, 2.0), at::full({16}, 2.0), pcc);
  EXPECT_TRUE(same_const.ok);
  EXPECT_EQ(*same_const.figures.pcc, 1.0);
  Comparison other_const = compare_values(at::full({16}, 2.0), at::full({16}, 3.0), pcc);
  EXPECT_FALSE(other_const.ok);
  EXPECT_EQ(*other_const.figures.pcc, 0.0);
  // One side constant, the other nearly so: allclose decides.
  at::Tensor wobble = at::full({16}, 2.0);
  wobble[3] = 2.0 + 1e-7;
  EXPECT_TRUE(compare_values(at::full({16}, 2.0), wobble, pcc).ok);
  // Single element.
  EXPECT_TRUE(compare_values(at::full({1}, 5.0), at::full({1}, 5.0), pcc).ok);
  EXPECT_FALSE(compare_values(at::full({1}, 5.0), at::full({1}, 6.0), pcc).ok);
  // Empty tensors.
  Comparison empty = compare_values(at::zeros({0, 3}), at::zeros({0, 3}), pcc);
  EXPECT_TRUE(empty.ok);
  EXPECT_EQ(empty.figures.total, 0);
}

TEST(Compare, LargeTensorsAreComparedInChunksWithTheRightIndex) {
  const std::int64_t n = ((std::int64_t{1} << 22) * 2 + 12345) * 5;  // spans several chunks
  at::Tensor e = at::zeros({n / 5, 5}, at::kBFloat16);
  at::Tensor a = e.clone();
  a.view({-1})[n - 7] = 1.0;
  Comparison r = compare_values(e, a, with(Comparator::AllClose));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.figures.total, n);
  EXPECT_EQ(r.figures.mismatched, 1);
  const std::int64_t flat = n - 7;
  EXPECT_TRUE(contains(r.message, "at index (" + std::to_string(flat / 5) + ", " + std::to_string(flat % 5) + ")")) << r.message;
}

TEST(Compare, NonContiguousTensorsCompareByLogicalIndex) {
  at::Tensor e = sample().t();  // [8, 8] transposed view
  at::Tensor a = e.contiguous();
  EXPECT_TRUE(compare_values(e, a, with(Comparator::Exact)).ok);
  a[0][5] += 1;
  Comparison r = compare_values(e, a, with(Comparator::AllClose));
  EXPECT_TRUE(contains(r.message, "at index (0, 5)")) << r.message;
}

// The worst element is where |device - reference| is greatest over every compared element (max_abs_diff's element),
// not only among the mismatched ones: a report shows its index and both values.
TEST(Compare, WorstElementIsWhereMaxAbsDiffIs) {
  const at::Tensor e = sample();  // [8, 8]
  at::Tensor a = e.clone();
  a[2][3] += 0.5;  // the greatest difference
  a[6][1] += 0.25;
  const Comparison r = compare_values(e, a, with(Comparator::AllClose));
  EXPECT_FALSE(r.ok);
  ASSERT_TRUE(r.figures.has_worst()) << r.message;
  EXPECT_EQ(r.figures.worst_index, (std::vector<std::int64_t>{2, 3}));
  EXPECT_DOUBLE_EQ(*r.figures.worst_device, a[2][3].item<double>());
  EXPECT_DOUBLE_EQ(*r.figures.worst_reference, e[2][3].item<double>());
  EXPECT_DOUBLE_EQ(*r.figures.max_abs_diff, std::abs(*r.figures.worst_device - *r.figures.worst_reference));

  // Within tolerance everywhere: still located (the greatest difference, however small).
  at::Tensor close = e.clone();
  close[7][7] += 2e-6;  // a few ulps of 5.0f, within the default tolerance
  const Comparison ok = compare_values(e, close, with(Comparator::AllClose));
  EXPECT_TRUE(ok.ok) << ok.message;
  ASSERT_TRUE(ok.figures.has_worst());
  EXPECT_EQ(ok.figures.worst_index, (std::vector<std::int64_t>{7, 7}));

  // A NaN difference wins, as it does for max_abs_diff.
  at::Tensor nan = a.clone();
  nan[5][0] = std::nan("");
  const Comparison n = compare_values(e, nan, with(Comparator::AllClose));
  EXPECT_EQ(n.figures.worst_index, (std::vector<std::int64_t>{5, 0}));
  EXPECT_TRUE(std::isnan(*n.figures.worst_device));

  // Over the leaves of a tuple: the leaf with the greatest difference places it; a scalar's index is empty.
  const auto pair = [](const at::Tensor& x, double y) { return c10::ivalue::Tuple::create({x, y}); };
  const Comparison t = compare_values(pair(e, 1.0), pair(a, 4.0), with(Comparator::AllClose));
  EXPECT_TRUE(t.figures.worst_index.empty());
  EXPECT_EQ(*t.figures.worst_device, 4.0);
  EXPECT_EQ(*t.figures.worst_reference, 1.0);

  // Identical outputs have no worst element to show.
  EXPECT_FALSE(compare_values(e, e.clone(), with(Comparator::AllClose)).figures.has_worst());
}

// An op's "no result" (an undefined tensor, e.g. convolution_backward's masked-out gradient; Python shows None)
// equals another one, or None, and differs from a defined tensor, naming the output.
TEST(Compare, UndefinedTensorsCompareAsNoResult) {
  const auto triple = [](c10::IValue x, c10::IValue y, c10::IValue z) {
    return c10::ivalue::Tuple::create({std::move(x), std::move(y), std::move(z)});
  };
  const at::Tensor g = sample();
  const Comparison same = compare_values(triple(g, g, at::Tensor()), triple(g, g.clone(), at::Tensor()),
                                         with(Comparator::AllClose));
  EXPECT_TRUE(same.ok) << same.message;
  EXPECT_EQ(same.figures.total, 128);
  EXPECT_TRUE(compare_values(triple(g, g, at::Tensor()), triple(g, g, c10::IValue()), with(Comparator::Exact)).ok);

  const Comparison defined = compare_values(triple(g, g, at::Tensor()), triple(g, g, g), with(Comparator::AllClose));
  EXPECT_FALSE(defined.ok);
  EXPECT_EQ(defined.message,
            "output[2]: expected an undefined tensor, got a torch.float32 tensor of shape torch.Size([8, 8])");
  const Comparison missing = compare_values(triple(g, g, g), triple(g, at::Tensor(), g), with(Comparator::AllClose));
  EXPECT_FALSE(missing.ok);
  EXPECT_EQ(missing.message,
            "output[1]: expected a torch.float32 tensor of shape torch.Size([8, 8]), got an undefined tensor");
  EXPECT_TRUE(compare_values(at::Tensor(), at::Tensor(), with(Comparator::AllClose)).ok);
}

// On AMX CPUs a oneDNN that uses AMX without asking Linux dies with SIGILL on bf16 matmul/linear unless prepare_cpu
// ran first; the reference
// computes exactly these ops, so they must survive in a fresh process (a death test forks one).
[[noreturn]] void run_bf16_matmul_and_linear() {
  prepare_cpu();
  prepare_cpu();  // idempotent
  at::Tensor a = at::rand({11, 64}).to(at::kBFloat16);
  at::Tensor b = at::rand({64, 64}).to(at::kBFloat16);
  const bool finite = at::matmul(a, b).isfinite().all().item<bool>() && at::linear(a, b).isfinite().all().item<bool>();
  std::exit(finite ? 0 : 1);
}

TEST(CpuFeatures, Bf16MatmulAndLinearRunAfterPrepareCpu) {
  // The fresh process is a re-executed binary, not a bare fork: a fork of this process inherits the OpenMP team that
  // earlier tests started, and oneDNN's bf16 matmul (on CPUs with AVX512-BF16/AMX) then waits forever on its barrier.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_bf16_matmul_and_linear(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace opcheck::exec
