// Root-cause groups (issue 23): the signature masks what changes from case to case and run to run (numbers, shapes,
// dtypes, addresses, paths, the case's own id) and keeps what tells bugs apart (the stage, op names); groups blame a
// wrong result on the device op its failures share.
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "judge/op_categories.h"
#include "report/console.h"
#include "report/diff.h"
#include "report/failure_groups.h"
#include "report/html.h"
#include "sample_report.h"

namespace opcheck {
namespace {

CaseRecord failing(const std::string& id, Stage stage, const std::string& message) {
  CaseRecord r;
  r.id = id;
  r.model = id.substr(0, id.find("::"));
  r.name = id.substr(id.find("::") + 2);
  r.op = "torch.mul";
  r.dtype = "bf16";
  r.file = "/tmp/" + r.model + ".yaml";
  r.line = 7;
  r.key = "k-" + id;
  r.signature = "aten::mul.Tensor(bf16[4,8], bf16[4,8])";
  r.outcome = stage_outcome(stage);
  r.result.case_id = id;
  r.result.stage = stage;
  r.result.outcome = r.outcome;
  r.result.message = message;
  return r;
}

DeviceOp in_call(const std::string& op, DeviceOpVia via = DeviceOpVia::Fallback) { return {op, via, 1, true}; }

TEST(FailureSignature, MasksNumbersShapesDtypesAddressesAndPaths) {
  EXPECT_EQ(masked_error_text("expected size [2, 3] but got torch.Size([4, 5, 6]) for bf16[4,8] at index (0, 2)"),
            "expected size [*] but got torch.Size([*]) for DTYPE[*] at index (*)");
  EXPECT_EQ(masked_error_text("Mismatched elements: 32 / 64 (50.0%), difference 1.5e-05 (up to -0.016 allowed)"),
            "Mismatched elements: N / N (N%), difference N (up to N allowed)");
  EXPECT_EQ(masked_error_text("\"addmm\" not implemented for 'Half', dtype=torch.float32, Float and int64"),
            "\"addmm\" not implemented for 'DTYPE', dtype=DTYPE, DTYPE and DTYPE");
  EXPECT_EQ(masked_error_text("bad pointer 0x7ffd3a2b10c0 in /home/ci/torch/csrc/alloc.cpp:123: freed"),
            "bad pointer ADDR in PATH freed");
}

TEST(FailureSignature, KeepsOpAndIdentifierNames) {
  EXPECT_EQ(masked_error_text("Could not run 'aten::_foo2.out' with arguments from the 'PrivateUse1' backend"),
            "Could not run 'aten::_foo2.out' with arguments from the 'PrivateUse1' backend");
  EXPECT_EQ(masked_error_text("as_strided: conv2d and aten::mul.Tensor with storage offset 12"),
            "as_strided: conv2d and aten::mul.Tensor with storage offset N");
}

TEST(FailureSignature, SameBugInAnotherCaseAndRunGivesTheSameSignature) {
  // Tonight's and tomorrow's occurrence of one bug: another case, file, shape, offset, timing, figures and key.
  CaseRecord a = failing("llama::view_3", Stage::FAILED_RUNTIME,
                         "the device raised RuntimeError: as_strided: storage offset 12 is not supported for size "
                         "[2, 3] at 0x55d0c0ffee00 (llama::view_3)\non the device: aten::as_strided (kernel)");
  CaseRecord b = failing("granite::t_9", Stage::FAILED_RUNTIME,
                         "the device raised RuntimeError: as_strided: storage offset 4096 is not supported for size "
                         "[8, 128, 64] at 0x7f00deadbeef (granite::t_9)");
  a.result.device_ops = {in_call("aten::transpose.int", DeviceOpVia::Composite), in_call("aten::as_strided", DeviceOpVia::Kernel)};
  b.result.device_ops = {in_call("aten::expand", DeviceOpVia::Composite), in_call("aten::as_strided", DeviceOpVia::Kernel)};
  b.result.device_ms = 912.5;
  b.result.figures.max_abs_diff = 3.0;
  const std::string sig = failure_signature(a);
  EXPECT_EQ(sig, failure_signature(b));
  EXPECT_EQ(sig, "FAILED_RUNTIME | aten::as_strided | the device raised RuntimeError: as_strided: storage offset N "
                 "is not supported for size [*] at ADDR (CASE)");
  for (const char* absent : {"llama", "granite", "/tmp", "12", "0x"}) EXPECT_EQ(sig.find(absent), std::string::npos) << absent;
}

TEST(FailureSignature, TwoMissingKernelsAreTwoSignatures) {
  const CaseRecord cos = failing("m::cos", Stage::NOT_SUPPORTED,
                                 "aten::cos.out has no kernel for PrivateUse1 (loopback): Could not run 'aten::cos.out' "
                                 "with arguments from the 'loopback' backend.\n\nthe device raised ...");
  const CaseRecord sin = failing("m::sin", Stage::NOT_SUPPORTED,
                                 "aten::sin.out has no kernel for PrivateUse1 (loopback): Could not run 'aten::sin.out' "
                                 "with arguments from the 'loopback' backend.\n\nthe device raised ...");
  EXPECT_EQ(failure_signature(cos).rfind("NOT_SUPPORTED | aten::cos.out | aten::cos.out has no kernel", 0), 0u)
      << failure_signature(cos);
  EXPECT_NE(failure_signature(cos), failure_signature(sin));
}

TEST(FailureSignature, ARaisedErrorIsSignedByTheOpThatRaised) {
  // rms_norm decomposes into rsqrt on the device; rsqrt raising there is the same bug as rsqrt raising alone.
  CaseRecord norm = failing("m::norm", Stage::FAILED_RUNTIME,
                            "the device raised RuntimeError: loopback: injected device failure in aten::rsqrt");
  norm.result.resolved_op = "aten::rms_norm";
  norm.result.device_ops = {in_call("aten::rms_norm", DeviceOpVia::Composite), in_call("aten::pow.Tensor_Scalar"),
                            in_call("aten::rsqrt")};
  CaseRecord alone = failing("m::rsqrt", Stage::FAILED_RUNTIME,
                             "the device raised RuntimeError: loopback: injected device failure in aten::rsqrt");
  alone.result.resolved_op = "aten::rsqrt";
  EXPECT_EQ(failure_signature(norm), failure_signature(alone));
  EXPECT_EQ(failure_signature(norm).rfind("FAILED_RUNTIME | aten::rsqrt | ", 0), 0u) << failure_signature(norm);
}

TEST(FailureSignature, ADeviceOpTheErrorNamesWithoutItsNamespaceIsTheOpThatRaised) {
  // linear reaches as_strided through t(); mm ran last, but the kernel's message names as_strided ("add" is prose).
  CaseRecord linear = failing("m::linear", Stage::FAILED_RUNTIME,
                              "the device raised RuntimeError: cannot add a view; as_strided: storage offset 64 is not supported");
  linear.result.resolved_op = "aten::linear";
  linear.result.device_ops = {in_call("aten::linear", DeviceOpVia::Composite), in_call("aten::add.Tensor"),
                              in_call("aten::as_strided", DeviceOpVia::Kernel), in_call("aten::mm")};
  CaseRecord expand = failing("m::expand", Stage::FAILED_RUNTIME,
                              "the device raised RuntimeError: cannot add a view; as_strided: storage offset 8 is not supported");
  expand.result.resolved_op = "aten::expand";
  expand.result.device_ops = {in_call("aten::expand", DeviceOpVia::Composite), in_call("aten::as_strided", DeviceOpVia::Kernel)};
  EXPECT_EQ(failure_signature(linear).rfind("FAILED_RUNTIME | aten::as_strided | ", 0), 0u) << failure_signature(linear);
  EXPECT_EQ(failure_signature(linear), failure_signature(expand));
}

TEST(FailureSignature, AWrongResultNamesItsOpAndTheDeviceOpsOfItsCall) {
  CaseRecord r = failing("m::ln", Stage::INCORRECT_RESULT,
                         "output: Tensor-likes are not close!\n\nMismatched elements: 3 / 64 (4.7%)\non the device: x");
  r.result.resolved_op = "aten::layer_norm";
  r.result.device_ops = {in_call("aten::mul.Tensor"), {"aten::copy_", DeviceOpVia::Kernel, 4, false},
                         in_call("aten::add.Tensor")};
  EXPECT_EQ(failure_signature(r),
            "INCORRECT_RESULT | aten::layer_norm on aten::add.Tensor, aten::mul.Tensor | output: Tensor-likes are not "
            "close!");
}

// The messages a real backend (torch-opencl on pocl) gave: values are masked, the names of backends, dispatch keys
// and device APIs stay.
TEST(FailureSignature, MaskingKeepsBackendNamesAndKeys) {
  EXPECT_EQ(masked_error_text("NotImplementedError: convolution_overrideable not implemented. You are likely "
                              "triggering this with tensor backend other than CPU/CUDA/MKLDNN, if this is intended, "
                              "please use TORCH_LIBRARY_IMPL to override this function"),
            "NotImplementedError: convolution_overrideable not implemented. You are likely triggering this with "
            "tensor backend other than CPU/CUDA/MKLDNN, if this is intended, please use TORCH_LIBRARY_IMPL to "
            "override this function");
  EXPECT_EQ(masked_error_text("RuntimeError: clEnqueueCopyBuffer failed with -30 (CL_INVALID_VALUE) on opencl:0 "
                              "for 4096 bytes at offset 128"),
            "RuntimeError: clEnqueueCopyBuffer failed with N (CL_INVALID_VALUE) on opencl:N for N bytes at offset N");
  EXPECT_EQ(masked_error_text("Could not run 'aten::fill_.Scalar' with arguments from the 'PrivateUse1' backend; "
                              "available for CPU, Meta, AutogradPrivateUse1 and privateuseone"),
            "Could not run 'aten::fill_.Scalar' with arguments from the 'PrivateUse1' backend; available for CPU, "
            "Meta, AutogradPrivateUse1 and privateuseone");
  // Paths still are paths: rooted, a URL, or a file with its line.
  EXPECT_EQ(masked_error_text("see /opt/torch_opencl/src/copy.cpp:88 and torch/csrc/Copy.cpp:12 or "
                              "https://fburl.com/ptmfixes; fp16/bf16 and/or ~/x"),
            "see PATH and PATH or PATH; DTYPE/DTYPE and/or PATH");
}

TEST(FailureSignature, WhetherTheRunsAlsoDifferedIsNotPartOfIt) {
  CaseRecord once = failing("m::t", Stage::INCORRECT_RESULT,
                            "output: Tensor-likes are not close! (also differs between runs)\n\nMismatched elements: 3 / "
                            "64\n\nAlso differs between runs: device run 2 differs bitwise from run 1: output");
  CaseRecord again = failing("m::t", Stage::INCORRECT_RESULT,
                             "output: Tensor-likes are not close!\n\nMismatched elements: 7 / 64");
  EXPECT_EQ(failure_signature(once), failure_signature(again));
  EXPECT_EQ(failure_signature(once), "INCORRECT_RESULT | torch.mul | output: Tensor-likes are not close!");
  RunReport run;
  run.cases = {once};
  run.cases.push_back(again);
  run.cases.back().id = "m::u";
  const std::vector<FailureGroup> groups = group_failures(run);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].count, 2);
  EXPECT_EQ(groups[0].differs_between_runs, 1);  // a detail of the group
}

TEST(FailureSignature, AnErrorNamingNoOpIsBlamedOnTheOpThatRaisedIt) {
  // The op that raised comes last in neither list: the allocation and the output's alias ran after it first did.
  CaseRecord r = failing("m::to", Stage::FAILED_RUNTIME,
                         "the device raised RuntimeError: clEnqueueCopyBuffer failed with -30");
  r.result.resolved_op = "aten::contiguous";
  DeviceOp copy = in_call("aten::_copy_from", DeviceOpVia::Kernel);
  copy.raised = true;
  r.result.device_ops = {{"aten::_copy_from", DeviceOpVia::Kernel, 2, false}, in_call("aten::clone"),
                         in_call("aten::empty_strided", DeviceOpVia::Kernel), in_call("aten::alias", DeviceOpVia::Kernel)};
  EXPECT_EQ(failure_signature(r).rfind("FAILED_RUNTIME | aten::clone | ", 0), 0u) << failure_signature(r);
  r.result.device_ops[0] = copy;
  // A transfer that raised is one bug wherever it ran: moving an input, an output, or inside the call. The exec layer
  // settles such a case's stage as FAILED_TRANSFER where it ends (settle_stage); the group reads that stage.
  r.result.stage = Stage::FAILED_TRANSFER;
  CaseRecord moving = failing("m::t", Stage::FAILED_TRANSFER,
                              "moving inputs to loopback:0 failed: RuntimeError: clEnqueueCopyBuffer failed with -30");
  moving.result.device_ops = {{"aten::empty_strided", DeviceOpVia::Kernel, 1, false}, copy};
  EXPECT_EQ(failure_signature(r), "FAILED_TRANSFER | aten::_copy_from | RuntimeError: clEnqueueCopyBuffer failed with N");
  EXPECT_EQ(failure_signature(moving), failure_signature(r));
}

TEST(FailureSignature, AMissingKernelIsNamedWithItsDtype) {
  // new_ones, full and ones all reach one missing fill_ kernel for Half: one group naming it.
  RunReport run;
  for (const char* op : {"aten::new_ones", "aten::full", "aten::ones"}) {
    CaseRecord r = failing(std::string("m::") + op, Stage::NOT_SUPPORTED,
                           "aten::fill_.Scalar for Half has no kernel for PrivateUse1 (opencl): NotImplementedError: "
                           "not implemented for 'Half'\n\nthe device raised NotImplementedError: not implemented for "
                           "'Half'");
    r.result.resolved_op = op;
    run.cases.push_back(r);
  }
  CaseRecord bf16 = run.cases[0];
  bf16.id = "m::bf16";
  bf16.result.message = "aten::fill_.Scalar for BFloat16 has no kernel for PrivateUse1 (opencl): NotImplementedError: "
                        "not implemented for 'BFloat16'";
  run.cases.push_back(bf16);
  const std::vector<FailureGroup> groups = group_failures(run);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].op, "aten::fill_.Scalar for Half");
  EXPECT_EQ(groups[0].count, 3);
  EXPECT_EQ(groups[1].op, "aten::fill_.Scalar for BFloat16");
}

TEST(FailureGroups, AWrongResultIsNeverBlamedOnTheAllocationsAndViewsAroundIt) {
  // Every call allocates and views; only the failing ones ran aten::where. Allocation ops ranked first before.
  RunReport run;
  for (int i = 0; i < 3; ++i) {
    CaseRecord r = failing("m::w" + std::to_string(i), Stage::INCORRECT_RESULT, "output: Tensor-likes are not close!");
    r.op = "torch.where";
    r.result.resolved_op = "aten::where.self";
    r.result.device_ops = {in_call("aten::empty_strided", DeviceOpVia::Kernel), in_call("aten::alias", DeviceOpVia::Kernel),
                           in_call("aten::where.self")};
    run.cases.push_back(r);
  }
  CaseRecord other = run.cases[0];
  other.id = "m::other";
  other.result.device_ops = {in_call("aten::empty_strided", DeviceOpVia::Kernel), in_call("aten::as_strided", DeviceOpVia::Kernel)};
  run.cases.push_back(other);
  const std::vector<FailureGroup> groups = group_failures(run);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].op, "aten::where.self");
  EXPECT_EQ(groups[0].count, 4);
}

TEST(FailureGroups, ACopyRoundTripThatDiffersBlamesTheCopy) {
  // Wrong results of many ops, each message its own: one group naming the transfer, which the round trip convicts.
  RunReport run;
  const std::string lead = "the device's aten::_copy_from changes values: a copy round trip differs\n";
  for (const auto& [op, msg] : std::vector<std::pair<std::string, std::string>>{
           {"aten::mul.Tensor", "output: Tensor-likes are not close!"},
           {"aten::eq.Tensor", "output: booleans differ at 3 of 8 elements"},
           {"aten::sum", "output 1: Scalars are not close!"}}) {
    CaseRecord r = failing("m::" + op, Stage::INCORRECT_RESULT,
                           lead + "float32 to loopback:0 and back: the copy: element [0] differs\n" + msg);
    r.result.resolved_op = op;
    r.result.device_ops = {in_call(op), {"aten::_copy_from", DeviceOpVia::Kernel, 3, false}};
    run.cases.push_back(r);
  }
  const std::vector<FailureGroup> groups = group_failures(run);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].signature,
            "INCORRECT_RESULT | aten::_copy_from | the device's aten::_copy_from changes values: a copy round trip "
            "differs");
  EXPECT_EQ(groups[0].count, 3);
}

TEST(FailureGroups, AGroupNamesTheDtypesOfItsCallsNotTheManifestDefault) {
  // torch-spyre's configs default the case dtype to float16; the calls say what they are about.
  RunReport run;
  for (const auto& [id, call] : std::vector<std::pair<std::string, std::string>>{
           {"m::to", "torch.to(int64[1,11], dtype=torch.float32)"},
           {"m::lt", "torch.lt(int64[1,11], 0)"},
           {"m::index", "torch.getitem(bool[4], [int64[2]])"},
           {"m::where", "torch.where(bool[2,2], fp32[2,2], fp32[2,2])"},
           {"m::full", "torch.full([2, 3], 1.0)"}}) {
    CaseRecord r = failing(id, Stage::FAILED_RUNTIME, "the device raised RuntimeError: aten::x failed");
    r.dtype = "fp16";
    r.call = call;
    run.cases.push_back(r);
  }
  EXPECT_EQ(record_dtype(run.cases[0]), "int64");
  EXPECT_EQ(record_dtype(run.cases[2]), "bool");
  EXPECT_EQ(record_dtype(run.cases[3]), "fp32");
  EXPECT_EQ(record_dtype(run.cases[4]), "fp16");  // no tensor input: the case's own
  const std::vector<FailureGroup> groups = group_failures(run);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].dtypes, (std::vector<std::string>{"bool", "fp16", "fp32", "int64"}));
  const std::string failures = failure_details(run, FailureReportOptions{});
  EXPECT_NE(failures.find("[FAILED_RUNTIME] int64\ncall: torch.to(int64[1,11]"), std::string::npos) << failures;
}

// Device bugs known on a real backend that no bundled case reaches yet: each is named right once one does.
TEST(FailureGroups, KnownDeviceBugsAreNamedOnceACaseReachesThem) {
  RunReport run;
  auto add = [&](const std::string& id, Stage stage, const std::string& message, const std::string& op,
                 std::vector<DeviceOp> ops) {
    CaseRecord r = failing(id, stage, message);
    r.result.resolved_op = op;
    r.result.device_ops = std::move(ops);
    run.cases.push_back(r);
  };
  auto raised = [](const std::string& op) {
    DeviceOp d = in_call(op, DeviceOpVia::Kernel);
    d.raised = true;
    return d;
  };
  // view rejects a viewable non-contiguous tensor (its message names no op).
  add("m::view", Stage::FAILED_RUNTIME, "the device raised RuntimeError: clCreateSubBuffer failed with -13",
      "aten::view", {in_call("aten::empty_strided", DeviceOpVia::Kernel), raised("aten::view")});
  // fill_ ignores strides: a wrong full() on a strided output.
  add("m::full", Stage::INCORRECT_RESULT, "output: Tensor-likes are not close!", "aten::full",
      {in_call("aten::full", DeviceOpVia::Composite), in_call("aten::empty_strided", DeviceOpVia::Kernel),
       in_call("aten::fill_.Scalar"), in_call("aten::as_strided", DeviceOpVia::Kernel)});
  // a growing resize_ loses data: cat's out= result resized on the device.
  add("m::cat", Stage::INCORRECT_RESULT, "output: Tensor-likes are not close!", "aten::cat",
      {in_call("aten::cat", DeviceOpVia::Composite), in_call("aten::resize_", DeviceOpVia::Kernel),
       in_call("aten::empty.memory_format", DeviceOpVia::Kernel)});
  // .item() on fp16 raises.
  add("m::item", Stage::FAILED_RUNTIME, "the device raised RuntimeError: unsupported element size 2", "aten::item",
      {in_call("aten::item", DeviceOpVia::Composite), raised("aten::_local_scalar_dense")});
  std::set<std::string> ops;
  for (const FailureGroup& g : group_failures(run)) ops.insert(g.op);
  EXPECT_EQ(ops, (std::set<std::string>{"aten::view", "aten::fill_.Scalar", "aten::resize_", "aten::_local_scalar_dense"}));
}

TEST(FailureSignature, ARejectedCaseIsSignedWithoutItsManifest) {
  CaseRecord a = failing("a::x", Stage::INVALID_CASE, "a.yaml:3: unknown op 'torch.foo' (did you mean torch.floor?)");
  CaseRecord b = failing("b::y", Stage::INVALID_CASE, "b.yaml:9: unknown op 'torch.foo' (did you mean torch.floor?)");
  a.file = "a.yaml";
  b.file = "b.yaml";
  EXPECT_EQ(failure_signature(a), failure_signature(b));
  EXPECT_EQ(failure_signature(a), "INVALID_CASE | torch.mul | PATH:N: unknown op 'torch.foo' (did you mean torch.floor?)");
}

TEST(FailureSignature, ALongMessageIsCutWholeCharactersOnly) {
  // 399 ASCII bytes, then a two-byte character across the cut.
  const CaseRecord r = failing("m::a", Stage::FAILED_RUNTIME, "aten::x " + std::string(391, 'x') + "\xC3\xA9tail");
  const std::string sig = failure_signature(r);
  const std::string text = sig.substr(sig.rfind(" | ") + 3);
  EXPECT_EQ(text, "aten::x " + std::string(391, 'x'));
}

TEST(FailureSignature, OnlyFailuresErrorsAndNotSupportedHaveOne) {
  CaseRecord r = failing("m::a", Stage::INCORRECT_RESULT, "output: Tensor-likes are not close!");
  EXPECT_FALSE(failure_signature(r).empty());
  r.outcome = Outcome::XFailed;
  EXPECT_EQ(failure_signature(r), "");
  r.outcome = Outcome::Passed;
  r.result.stage = Stage::PASSED;
  EXPECT_EQ(failure_signature(r), "");
  r.outcome = Outcome::Skipped;
  EXPECT_EQ(failure_signature(r), "");
  r.outcome = Outcome::Error;
  r.result.stage = Stage::FAILED_INPUT;
  EXPECT_FALSE(failure_signature(r).empty());
}

/// A biased mul: two mul cases, a layer_norm whose decomposition runs mul (and add, which passing cases also run, and
/// the copy every failing call runs), passing add cases; and a throwing rsqrt.
RunReport biased_mul_run() {
  RunReport run;
  const std::string close = "output: Tensor-likes are not close!\n\nMismatched elements: 5 / 32 (15.6%)";
  CaseRecord mul1 = failing("llama::mul_big", Stage::INCORRECT_RESULT, close);
  mul1.signature = "aten::mul.Tensor(fp32[64,64], fp32[64,64])";
  mul1.dtype = "fp32";
  CaseRecord mul2 = failing("granite::mul_small", Stage::INCORRECT_RESULT, close);
  mul2.signature = "aten::mul.Tensor(bf16[2,3], bf16[2,3])";
  CaseRecord mul3 = mul2;  // the same call in another model, served by dedupe
  mul3.id = "llama::mul_small";
  mul3.model = "llama";
  mul3.deduplicated_from = mul2.id;
  for (CaseRecord* m : {&mul1, &mul2, &mul3}) {
    m->result.resolved_op = "aten::mul.Tensor";
    m->result.device_ops = {in_call("aten::_copy_from", DeviceOpVia::Kernel), in_call("aten::mul.Tensor")};
  }
  CaseRecord ln = failing("llama::ln", Stage::INCORRECT_RESULT, close);
  ln.op = "torch.nn.functional.layer_norm";
  ln.signature = "aten::layer_norm(fp32[4,32], [32])";
  ln.dtype = "fp32";
  ln.result.resolved_op = "aten::layer_norm";
  // The output's copy back runs in every failing call (the loopback's do): it ties with mul on the score.
  ln.result.device_ops = {in_call("aten::layer_norm", DeviceOpVia::Composite), in_call("aten::add.Tensor"),
                          in_call("aten::mul.Tensor"), in_call("aten::_copy_from", DeviceOpVia::Kernel)};
  CaseRecord rsqrt = failing("llama::rsqrt", Stage::FAILED_RUNTIME,
                             "the device raised RuntimeError: loopback: injected device failure in aten::rsqrt");
  rsqrt.op = "torch.rsqrt";
  rsqrt.result.resolved_op = "aten::rsqrt";
  run.cases = {mul1, mul2, mul3, ln, rsqrt};
  for (int i = 0; i < 3; ++i) {
    CaseRecord add = failing("llama::add_" + std::to_string(i), Stage::PASSED, "");
    add.op = "torch.add";
    add.result.resolved_op = "aten::add.Tensor";
    add.result.device_ops = {in_call("aten::add.Tensor")};
    run.cases.push_back(add);
  }
  return run;
}

TEST(FailureGroups, AWrongResultGroupsWithTheDeviceOpItsFailuresShare) {
  const std::vector<FailureGroup> groups = group_failures(biased_mul_run());
  ASSERT_EQ(groups.size(), 2u);
  const FailureGroup& g = groups[0];
  EXPECT_EQ(g.signature, "INCORRECT_RESULT | aten::mul.Tensor | output: Tensor-likes are not close!");
  EXPECT_EQ(g.op, "aten::mul.Tensor");
  EXPECT_EQ(g.count, 4);
  EXPECT_EQ(g.unique, 3);  // llama::mul_small is granite::mul_small's call
  EXPECT_EQ(g.cases, (std::vector<std::string>{"llama::mul_big", "granite::mul_small", "llama::mul_small", "llama::ln"}));
  EXPECT_EQ(g.ops, (std::vector<std::string>{"torch.mul", "torch.nn.functional.layer_norm"}));
  EXPECT_EQ(g.models, (std::vector<std::string>{"granite", "llama"}));
  EXPECT_EQ(g.dtypes, (std::vector<std::string>{"bf16", "fp32"}));
  EXPECT_EQ(g.example, "granite::mul_small");  // 2 x 6 bf16 elements: the fewest input bytes
  EXPECT_EQ(groups[1].signature,
            "FAILED_RUNTIME | aten::rsqrt | the device raised RuntimeError: loopback: injected device failure in aten::rsqrt");
  EXPECT_EQ(groups[1].count, 1);
}

TEST(FailureGroups, LargestFirstAndTiesBySignature) {
  RunReport run;
  for (const char* op : {"mid", "zeta", "alpha", "zeta"}) {
    CaseRecord r = failing(std::string("m::") + op + std::to_string(run.cases.size()), Stage::FAILED_RUNTIME,
                           std::string("the device raised RuntimeError: aten::") + op + " failed");
    run.cases.push_back(r);
  }
  const std::vector<FailureGroup> groups = group_failures(run);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].op, "aten::zeta");
  EXPECT_EQ(groups[0].count, 2);
  EXPECT_EQ(groups[1].op, "aten::alpha");  // one each: by signature
  EXPECT_EQ(groups[2].op, "aten::mid");
}

TEST(FailureGroups, ConsoleListsThemLargestFirst) {
  const std::string text = failure_groups_section(biased_mul_run());
  EXPECT_NE(text.find(" 2 failure groups "), std::string::npos) << text;
  const auto first = text.find("#1 4 occurrences (3 unique) INCORRECT_RESULT in aten::mul.Tensor: output: Tensor-likes are not close!");
  const auto second = text.find("#2 1 occurrence (1 unique) FAILED_RUNTIME in aten::rsqrt: the device raised");
  EXPECT_NE(first, std::string::npos) << text;
  EXPECT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second);
  EXPECT_NE(text.find("example: granite::mul_small"), std::string::npos) << text;
  EXPECT_EQ(failure_groups_section(RunReport{}), "");
}

TEST(FailureGroups, ANotSupportedGroupIsOneLineNamingTheKernelTheDtypeTheDeviceAndTheBackendsThatHaveIt) {
  // The dispatcher's account follows the headline; it stays in the record, not in the group's line.
  const std::string dispatcher = "the device raised NotImplementedError: Could not run 'aten::cos.out' with arguments "
                                 "from the 'opencl' backend. This could be because the operator doesn't exist for "
                                 "this backend, or was omitted during the selective/custom build process (if using "
                                 "custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
                                 "https://fburl.com/ptmfixes for possible resolutions. 'aten::cos.out' is only "
                                 "available for these backends: [CPU, Meta, BackendSelect, Python, AutogradCPU].";
  RunReport run;
  for (const char* id : {"m::cos_a", "m::cos_b"})
    run.cases.push_back(failing(id, Stage::NOT_SUPPORTED,
                                "aten::cos.out has no kernel for PrivateUse1 (opencl); kernels for: CPU, Meta\n\n" +
                                    dispatcher));
  const std::string text = failure_groups_section(run);
  const std::string line = "#1 2 occurrences (2 unique) NOT_SUPPORTED [bf16]: aten::cos.out has no kernel for "
                           "PrivateUse1 (opencl); kernels for: CPU, Meta\n";
  EXPECT_NE(text.find(line), std::string::npos) << text;
  EXPECT_EQ(text.find("Could not run"), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(testing::written_metrics_json(run));
  EXPECT_NE(j["cases"][0]["message"].get<std::string>().find("only available for these backends"), std::string::npos);
}

TEST(FailureDetails, ALargeRedRunShowsABlockPerGroupAndSaysHowToSeeEvery) {
  RunReport run;
  for (int i = 0; i < 30; ++i)
    run.cases.push_back(failing("m::case_" + std::to_string(i), i % 3 ? Stage::INCORRECT_RESULT : Stage::FAILED_RUNTIME,
                                i % 3 ? "output: Tensor-likes are not close!" : "the device raised RuntimeError: boom"));
  const auto blocks = [](const std::string& text) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find("\n_", at)) != std::string::npos; ++at) ++n;
    return n + (text.rfind("_", 0) == 0 ? 1 : 0);
  };
  const std::string grouped = failure_details(run, FailureReportOptions{});  // --tb auto
  EXPECT_EQ(blocks(grouped), 2u) << grouped;
  EXPECT_NE(grouped.find("opcheck: 30 failures in 2 failure groups: a block for each group's example above (2), a line "
                         "for every failure in the short test summary; --tb short shows a block for each failure"),
            std::string::npos)
      << grouped;
  FailureReportOptions every;
  every.style = TracebackStyle::Short;
  EXPECT_EQ(blocks(failure_details(run, every)), 30u);
  run.cases.resize(kBlocksUpTo);  // a run this small shows every block, and no note
  const std::string small = failure_details(run, FailureReportOptions{});
  EXPECT_EQ(blocks(small), kBlocksUpTo);
  EXPECT_EQ(small.find("failure groups:"), std::string::npos) << small;
}

TEST(FailureGroups, MetricsCarryThem) {
  const nlohmann::json j = nlohmann::json::parse(testing::written_metrics_json(biased_mul_run()));
  ASSERT_TRUE(j.contains("failure_groups"));
  const auto& g = j["failure_groups"];
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0]["signature"], "INCORRECT_RESULT | aten::mul.Tensor | output: Tensor-likes are not close!");
  EXPECT_EQ(g[0]["stage"], "INCORRECT_RESULT");
  EXPECT_EQ(g[0]["count"], 4);
  EXPECT_EQ(g[0]["unique"], 3);
  EXPECT_EQ(g[0]["cases"].size(), 4u);
  EXPECT_EQ(g[0]["example"], "granite::mul_small");
  EXPECT_TRUE(g[0]["minimal"].is_null());
  EXPECT_EQ(g[1]["op"], "aten::rsqrt");
}

TEST(FailureGroups, DiffSaysWhichGroupIsNewAndWhichIsGone) {
  const RunReport both = biased_mul_run();
  RunReport mul_only = both;
  mul_only.cases.erase(mul_only.cases.begin() + 4);  // the rsqrt failure fixed
  const std::string gone = render_diff(diff_reports(both, mul_only));
  EXPECT_NE(gone.find("Failure groups gone (1):\n  group FAILED_RUNTIME | aten::rsqrt | the device raised "
                      "RuntimeError: loopback: injected device failure in aten::rsqrt gone (1 occurrence, example "
                      "llama::rsqrt)"),
            std::string::npos)
      << gone;
  EXPECT_EQ(gone.find("New failure groups"), std::string::npos) << gone;
  const std::string appeared = render_diff(diff_reports(mul_only, both));
  EXPECT_NE(appeared.find("New failure groups (1):\n  group FAILED_RUNTIME | aten::rsqrt | "), std::string::npos)
      << appeared;
  EXPECT_EQ(appeared.find("gone"), std::string::npos) << appeared;
}

TEST(FailureGroups, HtmlHasAGroupsSection) {
  const std::string html = html_report(biased_mul_run(), {});
  const auto section = html.find("<section id=\"groups\"><h2>Failure groups <span class=\"count\">2</span>");
  ASSERT_NE(section, std::string::npos);
  EXPECT_NE(html.find("data-signature=\"INCORRECT_RESULT | aten::mul.Tensor | output: Tensor-likes are not close!\"",
                      section),
            std::string::npos);
  EXPECT_LT(section, html.find("<section id=\"failures\">"));
}

// Plumbing is the one table's (judge/op_categories.h): never the suspect of a wrong result computed around it, and
// the suspect when it is the op under test. (A resize is no plumbing: KnownDeviceBugsAreNamedOnceACaseReachesThem.)
TEST(FailureGroups, ThePlumbingOfTheOneTableIsBlamedOnlyAsTheOpUnderTest) {
  auto tokens = [](const std::string& s) {
    std::set<std::string> out;
    std::string word;
    for (char c : s + " ") {
      if (c == ' ' || c == ',') {
        if (!word.empty()) out.insert(word);
        word.clear();
      } else {
        word += c;
      }
    }
    return out;
  };
  for (const std::string& op : ops_in(kPlumbing)) {
    // A composite whose only op on the device is plumbing: the composite is blamed, never the plumbing.
    CaseRecord r = failing("m::t", Stage::INCORRECT_RESULT, "output: Tensor-likes are not close!");
    r.result.resolved_op = "aten::cat";
    r.result.device_ops = {in_call("aten::cat", DeviceOpVia::Composite), in_call(op, DeviceOpVia::Kernel)};
    RunReport run;
    run.cases = {r};
    std::vector<FailureGroup> groups = group_failures(run);
    ASSERT_EQ(groups.size(), 1u) << op;
    EXPECT_EQ(tokens(groups[0].op).count(op), 0u) << op << " blamed: " << groups[0].op;
    EXPECT_EQ(tokens(groups[0].op).count("aten::cat"), 1u) << groups[0].op;

    r.result.resolved_op = op;
    r.result.device_ops = {in_call(op)};
    run.cases = {r};
    groups = group_failures(run);
    ASSERT_EQ(groups.size(), 1u) << op;
    EXPECT_EQ(tokens(groups[0].op).count(op), 1u) << op << " under test, but blamed: " << groups[0].op;
  }
}

}  // namespace
}  // namespace opcheck
