// The accumulation bound (src/exec/accumulation.cpp, the float64 judge in src/exec/compare.cpp): a float16
// index_add_ summed in another order passes where 3 times the CPU's error at each element does not, one wrong
// element still fails, and the bound is no wider than the classic one of recursive summation in any order.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <tuple>

#include "exec/accumulation.h"
#include "exec/backend_freedoms.h"
#include "exec/compare.h"

namespace opcheck::exec {
namespace {

/// index_add_(self, 0, index, source) of `dtype` inputs: the CPU's result, the float64 one, a device's that adds the
/// same terms in another (random) order, and the bound, from accumulation_allowance on runs of index_add in float64.
struct ShuffledIndexAdd {
  at::Tensor self, index, source, cpu, golden, device;
  std::optional<RunValues> bound;
  std::string why;
  explicit ShuffledIndexAdd(at::ScalarType dtype, std::int64_t rows = 4096, std::int64_t terms = 65536) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(41);
    self = at::randn({rows}, gen, at::kFloat).to(dtype);
    index = at::randint(rows, {terms}, gen, at::kLong);
    source = at::randn({terms}, gen, at::kFloat).to(dtype);
    cpu = self.clone().index_add_(0, index, source);
    golden = self.to(at::kDouble).index_add_(0, index, source.to(at::kDouble));
    const at::Tensor order = at::randperm(terms, gen, at::kLong);
    device = self.clone().index_add_(0, index.index_select(0, order), source.index_select(0, order));
    const Float64Run run = [this](const std::vector<at::Tensor>& h) {
      const at::Tensor out = h[0].to(at::kDouble).index_add_(0, h[1], h[2].to(at::kDouble));
      return RunValues{out, {out}};
    };
    const AccumulationRule* rule = accumulation_rule("aten::index_add_.default");
    EXPECT_NE(rule, nullptr);
    bound = accumulation_allowance(*rule, {self, index, source}, RunValues{golden, {golden}}, run, why);
  }
  Comparison judge(const at::Tensor& d, bool with_bound) const {
    const c10::IValue g(golden);
    const AccumulationAllowance acc{&bound->output, AccumulatesIn::OutputDtype};
    return compare_values(cpu, d, Tolerance{}, "output", &g, with_bound ? &acc : nullptr);
  }
};

TEST(AccumulationBound, AnotherOrderPassesWhereTheCpusErrorAtEachElementDoesNot) {
  const ShuffledIndexAdd s(at::kHalf);  // 16 terms of either sign per element
  ASSERT_TRUE(s.bound) << s.why;
  const Comparison old_rule = s.judge(s.device, false);
  EXPECT_FALSE(old_rule.ok) << "3 times the CPU's error, where it cancels by luck, is narrower than reordering";
  const Comparison judged = s.judge(s.device, true);
  EXPECT_TRUE(judged.ok) << judged.message;
  bool noted = false;
  for (const auto& n : judged.notes) noted = noted || n.find("only within the accumulation bound") != std::string::npos;
  EXPECT_TRUE(noted) << "the note counts the elements only the bound passed";
}

TEST(AccumulationBound, OneWrongElementStillFailsAndTheMessageNamesTheBound) {
  // float32: 1% of an element is hundreds of times what reordering moves (in float16 sums of 16 terms of either
  // sign reordering alone moves some elements by as much: test/fixtures/accumulate/README.md).
  const ShuffledIndexAdd s(at::kFloat);
  ASSERT_TRUE(s.bound) << s.why;
  at::Tensor wrong = s.device.clone();
  const double v = wrong[0].item<double>();
  wrong[0] = v - 0.01 * std::max(std::abs(v), 1.0) * (v >= 0 ? 1 : -1);
  const Comparison judged = s.judge(wrong, true);
  EXPECT_FALSE(judged.ok);
  EXPECT_NE(judged.message.find("Against float64 at index (0,)"), std::string::npos) << judged.message;
  EXPECT_NE(judged.message.find("the accumulation bound"), std::string::npos) << judged.message;
}

TEST(AccumulationBound, IsNoWiderThanTheClassicBoundAndZeroForOneTerm) {
  const ShuffledIndexAdd s(at::kHalf, 64, 64);  // few terms: many rows take none, and so one term (self)
  ASSERT_TRUE(s.bound) << s.why;
  const at::Tensor b = s.bound->output.toTensor();
  const at::Tensor n = at::ones({64}, at::kDouble).index_add_(0, s.index, at::ones({64}, at::kDouble));
  const at::Tensor m = s.self.to(at::kDouble).abs().index_add_(0, s.index, s.source.to(at::kDouble).abs());
  EXPECT_TRUE(b.le((n - 1) * m + 1e-12).all().item<bool>()) << "never wider than (n - 1) * sum |x| in units of u";
  ASSERT_TRUE(n.eq(1).any().item<bool>());
  EXPECT_TRUE(b.masked_select(n.eq(1)).eq(0).all().item<bool>()) << "an element of one term is widened by nothing";
  EXPECT_TRUE(b.masked_select(n.gt(1)).gt(0).all().item<bool>());
}

/// scatter_reduce(self [R], 0, index [K*R], src [K*R], reduce) in float16, each element taking exactly K terms and
/// self: the CPU's result, the float64 one, a device's that rounds every step to float16 (as CUDA's atomics do) in
/// another order for each element, and the bound, from the rule the call's arguments choose and runs of the call in
/// float64 (the count with reduce='sum', as the rule says).
struct SteppedScatterReduce {
  at::Tensor self, index, src, cpu, golden, device;
  std::optional<RunValues> bound;
  std::string why;
  const AccumulationRule* rule = nullptr;
  SteppedScatterReduce(const std::string& reduce, double low, double high, std::int64_t rows = 4096,
                       std::int64_t k = 16) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(41);
    self = (at::rand({rows}, gen, at::kFloat) * (high - low) + low).to(at::kHalf);
    const at::Tensor terms = (at::rand({k, rows}, gen, at::kFloat) * (high - low) + low).to(at::kHalf);
    index = at::arange(rows, at::kLong).repeat({k});
    src = terms.reshape(-1);
    const auto run_with = [](const std::string& how) {
      return [how](const std::vector<at::Tensor>& h) {
        const at::Tensor out = h[0].to(at::kDouble).scatter_reduce(0, h[1], h[2].to(at::kDouble), how);
        return RunValues{out, {}};
      };
    };
    cpu = self.scatter_reduce(0, index, src, reduce);
    golden = self.to(at::kDouble).scatter_reduce(0, index, src.to(at::kDouble), reduce);
    at::Tensor acc = self.to(at::kFloat);  // one rounding to float16 per step, the terms of each element shuffled
    const at::Tensor order = at::argsort(at::rand({k, rows}, gen, at::kFloat), /*dim=*/0, /*descending=*/false);
    const at::Tensor shuffled = terms.to(at::kFloat).gather(0, order);
    for (std::int64_t j = 0; j < k; ++j)
      acc = (reduce == "prod" ? acc * shuffled[j] : acc + shuffled[j]).to(at::kHalf).to(at::kFloat);
    device = (reduce == "mean" ? acc / static_cast<double>(k + 1) : acc).to(at::kHalf);
    rule = accumulation_rule_for("aten::scatter_reduce.two", {{"reduce", c10::IValue(reduce)}});
    if (!rule) return;
    const Float64Run run = run_with(reduce), count = run_with("sum");
    bound = accumulation_allowance(*rule, {self, index, src}, RunValues{golden, {}}, run, why, &count);
  }
  Comparison judge(const at::Tensor& d, bool with_bound) const {
    const c10::IValue g(golden);
    const AccumulationAllowance acc{&bound->output, AccumulatesIn::OutputDtype};
    return compare_values(cpu, d, Tolerance{}, "output", &g, with_bound ? &acc : nullptr);
  }
};

TEST(AccumulationBound, AMeanOrAProductRoundedEveryStepInAnotherOrderPassesAndOneWrongElementFails) {
  // 64 terms per mean (a mean divides the sum's error by its count), 16 factors per product; the wrong element is
  // 5% off for the mean, 2% for the product (its bound, 16 roundings of its value, is 0.8% of it: a sum's bound on
  // the same count would let 2% through).
  using Kind = std::tuple<std::string, double, double, std::int64_t, double>;
  for (const auto& [reduce, low, high, k, off] : {Kind{"mean", 0.0, 1.0, 64, 1.05}, Kind{"prod", 0.9, 1.1, 16, 1.02}}) {
    const SteppedScatterReduce s(reduce, low, high, 4096, k);
    ASSERT_NE(s.rule, nullptr) << reduce;
    EXPECT_EQ(s.rule->counted_with, std::string("reduce=sum")) << reduce;
    EXPECT_EQ(s.rule->product, reduce == "prod");
    ASSERT_TRUE(s.bound) << s.why;
    EXPECT_FALSE(s.judge(s.device, false).ok) << reduce << ": the CPU keeps a wider accumulator, so 3 times its "
                                                 "error is narrower than float16 steps in another order";
    const Comparison judged = s.judge(s.device, true);
    EXPECT_TRUE(judged.ok) << reduce << ": " << judged.message;
    at::Tensor wrong = s.device.clone();
    wrong[0] = wrong[0].item<double>() * off;
    const Comparison caught = s.judge(wrong, true);
    EXPECT_FALSE(caught.ok) << reduce;
    EXPECT_NE(caught.message.find("Against float64 at index (0,)"), std::string::npos) << caught.message;
  }
  // amax takes one term per element: no rule, so nothing widens it.
  EXPECT_EQ(accumulation_rule_for("aten::scatter_reduce.two", {{"reduce", c10::IValue(std::string("amax"))}}), nullptr);
}

TEST(AccumulationBound, UnitRoundoffFollowsThePrecisionTheOpAccumulatesIn) {
  EXPECT_EQ(accumulation_unit(AccumulatesIn::OutputDtype, at::kHalf), std::ldexp(1.0, -11));
  EXPECT_EQ(accumulation_unit(AccumulatesIn::OutputDtype, at::kBFloat16), std::ldexp(1.0, -8));
  EXPECT_EQ(accumulation_unit(AccumulatesIn::Float32AtLeast, at::kHalf), std::ldexp(1.0, -24));
  EXPECT_EQ(accumulation_unit(AccumulatesIn::Float32AtLeast, at::kDouble), std::ldexp(1.0, -53));
  EXPECT_NE(accumulation_rule("aten::mm.default"), nullptr);
  EXPECT_NE(accumulation_rule("aten::embedding_dense_backward.default"), nullptr);
  EXPECT_EQ(accumulation_rule("aten::add.Tensor"), nullptr);
}

}  // namespace
}  // namespace opcheck::exec
