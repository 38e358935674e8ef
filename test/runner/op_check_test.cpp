// `validate --ops` and import-opinfo's question which op names opcheck does not know (runner/op_check): each decides
// by the verdict kind the exec layer sets, never by the message's words. An executor that answers with a chosen
// kind and message stands in for the exec layer, so the kind and the text can disagree on purpose.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runner/op_check.h"

namespace opcheck {
namespace {

/// Answers check_call with the verdict given for the case's op (INVALID_CASE), or PASSED for any other op.
class ScriptedExecutor : public Executor {
 public:
  explicit ScriptedExecutor(std::map<std::string, std::pair<VerdictKind, std::string>> verdicts)
      : verdicts_(std::move(verdicts)) {}
  const ExecInfo& info() const override { return info_; }
  Result run(const Case& c) override { return check_call(c); }
  Result check_call(const Case& c) override {
    Result r;
    r.case_id = c.id;
    if (auto it = verdicts_.find(c.op); it != verdicts_.end()) {
      r.stage = Stage::INVALID_CASE;
      r.kind = it->second.first;
      r.message = it->second.second;
    }
    r.outcome = stage_outcome(r.stage);
    return r;
  }

 private:
  std::map<std::string, std::pair<VerdictKind, std::string>> verdicts_;
  ExecInfo info_;
};

Case case_of(const std::string& name, const std::string& op, int line) {
  Case c;
  c.model = "m";
  c.name = name;
  c.id = "m::" + name;
  c.op = op;
  c.loc = {"m.yaml", line, 5};
  return c;
}

const std::string kSpellingFix = "write the op as PyTorch names it";
const std::string kArgumentsFix = "give the case the arguments one of the op's overloads takes";

// An op no one has gets the Fix about spelling the op; arguments that do not bind get the Fix about arguments; a
// message with its own ". Fix: " keeps it. The second case's message reads like an unknown op but its kind says the
// arguments did not bind: the kind decides.
TEST(ValidateOps, EachKindOfInvalidCaseGetsItsOwnFix) {
  ScriptedExecutor ex({
      {"torch.flor", {VerdictKind::UnknownOp, "unknown op 'torch.flor' (did you mean torch.floor?)"}},
      {"torch.sum", {VerdictKind::ArgumentsDoNotBind, "unknown op words in an arguments error"}},
      {"aten::xlogy", {VerdictKind::DecompositionLimit, "it supports only x=1. Fix: set x=1 in the case"}},
  });
  const std::vector<Case> cases = {case_of("flor.1", "torch.flor", 3), case_of("sum.1", "torch.sum", 7),
                                   case_of("xlogy.1", "aten::xlogy", 9), case_of("add.1", "torch.add", 11)};
  std::vector<const Case*> all;
  for (const Case& c : cases) all.push_back(&c);
  DiagnosticList out;
  EXPECT_EQ(check_case_ops(ex, all, out), 4u);
  ASSERT_EQ(out.items.size(), 3u);  // the passing case gives none
  EXPECT_EQ(out.items[0].case_id, "m::flor.1");
  EXPECT_EQ(out.items[0].loc.line, 3);
  EXPECT_EQ(out.items[0].message, "unknown op 'torch.flor' (did you mean torch.floor?)");
  EXPECT_EQ(out.items[0].fix.rfind(kSpellingFix, 0), 0u) << out.items[0].fix;
  EXPECT_EQ(out.items[1].case_id, "m::sum.1");
  EXPECT_EQ(out.items[1].fix.rfind(kArgumentsFix, 0), 0u) << out.items[1].fix;
  EXPECT_EQ(out.items[2].message, "it supports only x=1");
  EXPECT_EQ(out.items[2].fix, "set x=1 in the case");
}

// A message that starts like an unknown op's is no unknown op without the kind: the words are not read.
TEST(ValidateOps, AnUnknownOpsFixNeedsTheKind) {
  ScriptedExecutor ex({{"torch.flor", {VerdictKind::None, "unknown op 'torch.flor'"}}});
  const Case c = case_of("flor.1", "torch.flor", 3);
  DiagnosticList out;
  check_case_ops(ex, {&c}, out);
  ASSERT_EQ(out.items.size(), 1u);
  EXPECT_EQ(out.items[0].fix.rfind(kArgumentsFix, 0), 0u) << out.items[0].fix;
}

// The names import-opinfo writes as their ATen calls: those whose verdict says no op has the name (unknown_op) or it
// is no op name (bad_op_name); not those whose arguments merely do not bind, whatever their messages say.
TEST(UnresolvedOpNames, AreTheNamesWhoseKindSaysNoOpHasThem) {
  ScriptedExecutor ex({
      {"torch.flor", {VerdictKind::UnknownOp, "unknown op 'torch.flor'"}},
      {"torch..x", {VerdictKind::BadOpName, "op name 'torch..x' is not a torch function or Tensor method name"}},
      {"torch.sum", {VerdictKind::ArgumentsDoNotBind, "unknown op, as the words say, but the kind does not"}},
      {"torch.mm", {VerdictKind::None, "op name words without a kind"}},
  });
  EXPECT_EQ(unresolved_op_names(ex, {"torch.add", "torch.flor", "torch.sum", "torch..x", "torch.mm"}),
            (std::vector<std::string>{"torch.flor", "torch..x"}));
}

}  // namespace
}  // namespace opcheck
