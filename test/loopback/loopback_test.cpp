// The loopback device as opcheck sets it up: device resolution, memory, guard, transfers, views, fp16/bf16 ops
// against the CPU, and every injectable fault.
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <ATen/Parallel.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "common/fault_kinds.h"
#include "exec/cpu_features.h"
#include "exec/device.h"
#include "runner/worker_pool.h"

namespace opcheck::exec {
namespace {

using LiveBytesFn = std::int64_t (*)(int);
using SetFaultsFn = int (*)(const char*, char*, std::size_t);

/// Sets the loopback device up once for the whole binary (only one PrivateUse1 backend fits in a process).
class Loopback : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    prepare_cpu();
    at::set_num_threads(1);  // the fault tests fork: no intra-op pool may be running then
    if (setup_ok_) return;
    ExecOptions opts;
    opts.device = "loopback";
    std::string error;
    setup_ok_ = setup_device(opts, dev_, error);
    ASSERT_TRUE(setup_ok_) << error;
    void* self = dlopen(dev_.lib.c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(self, nullptr);
    live_bytes_ = reinterpret_cast<LiveBytesFn>(dlsym(self, "opcheck_loopback_live_bytes"));
    set_faults_ = reinterpret_cast<SetFaultsFn>(dlsym(self, "opcheck_loopback_set_faults"));
    ASSERT_NE(live_bytes_, nullptr);
    ASSERT_NE(set_faults_, nullptr);
  }
  void TearDown() override { faults(""); }

  static void faults(const std::string& spec) {
    char err[512] = {0};
    ASSERT_EQ(set_faults_(spec.c_str(), err, sizeof(err)), 0) << err;
  }
  static at::Tensor on_device(const at::Tensor& t) { return t.to(dev_.device); }

  static inline bool setup_ok_ = false;
  static inline DeviceSetup dev_;
  static inline LiveBytesFn live_bytes_ = nullptr;
  static inline SetFaultsFn set_faults_ = nullptr;
};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_F(Loopback, SetupNamesTheDeviceAndListsItsOwnKernels) {
  EXPECT_EQ(dev_.device.str(), "privateuseone:0");
  EXPECT_EQ(dev_.name, "loopback");
  EXPECT_NE(dev_.lib.find("libopcheck_loopback.so"), std::string::npos) << dev_.lib;
  EXPECT_EQ(dev_.lib_sha256.size(), 64u);
  for (const char* op : {"aten::empty.memory_format", "aten::empty_strided", "aten::_copy_from", "aten::resize_",
                         "aten::as_strided", "aten::view", "aten::_local_scalar_dense"})
    EXPECT_TRUE(contains(dev_.enabled_ops, op)) << op;
  // add runs through the CPU fallback: no kernel of the device's own.
  EXPECT_FALSE(contains(dev_.enabled_ops, "aten::add.Tensor"));
  EXPECT_NE(dev_.log_line.find("loopback"), std::string::npos) << dev_.log_line;
  EXPECT_NE(dev_.log_line.find("privateuseone:0"), std::string::npos) << dev_.log_line;
}

TEST_F(Loopback, OtherSpellingsOfTheSameBackendResolve) {
  ExecOptions opts;
  std::string error;
  DeviceSetup d;
  opts.device = "privateuseone";
  opts.device_lib = dev_.lib;
  ASSERT_TRUE(setup_device(opts, d, error)) << error;
  EXPECT_EQ(d.name, "privateuseone");
  EXPECT_EQ(d.device.str(), "privateuseone:0");

  opts.device = "auto";
  opts.device_name = "spyre";
  ASSERT_TRUE(setup_device(opts, d, error)) << error;
  EXPECT_EQ(d.name, "spyre");
  EXPECT_NE(d.log_line.find("auto: device library configured"), std::string::npos) << d.log_line;

  opts = ExecOptions{};
  ASSERT_TRUE(setup_device(opts, d, error)) << error;
  EXPECT_EQ(d.name, "loopback");
  EXPECT_NE(d.log_line.find("no device library configured"), std::string::npos) << d.log_line;

  opts.device = "loopback:2";
  ASSERT_TRUE(setup_device(opts, d, error)) << error;
  EXPECT_EQ(d.device.str(), "privateuseone:2");

  opts.device = "cpu";  // a configured library that the device does not use is noted, not fatal
  opts.device_lib = "/some/other/libdevice.so";
  ASSERT_TRUE(setup_device(opts, d, error)) << error;
  EXPECT_NE(d.log_line.find("device library /some/other/libdevice.so not loaded: --device cpu uses none"),
            std::string::npos)
      << d.log_line;
}

TEST_F(Loopback, CpuDeviceIsTheReferenceItself) {
  ExecOptions opts;
  opts.device = "cpu";
  DeviceSetup d;
  std::string error;
  ASSERT_TRUE(setup_device(opts, d, error)) << error;
  EXPECT_EQ(d.device.str(), "cpu");
  EXPECT_EQ(d.name, "cpu");
  EXPECT_TRUE(d.lib.empty());
  EXPECT_TRUE(contains(d.enabled_ops, "aten::add.Tensor"));
  EXPECT_GT(d.enabled_ops.size(), 500u);
}

TEST_F(Loopback, BadDevicesAreClearErrors) {
  struct Bad {
    ExecOptions opts;
    const char* says;
  };
  ExecOptions cuda;
  cuda.device = "cuda";
  ExecOptions bogus;
  bogus.device = "warp-drive";
  ExecOptions index;
  index.device = "loopback:9";
  ExecOptions missing;
  missing.device = "privateuseone";
  missing.device_lib = "/nonexistent/libdevice.so";
  ExecOptions other;
  other.device = "privateuseone";
  other.device_lib = std::string(OPCHECK_BUILD_DIR) + "/libopcheck_exec.so";
  ExecOptions renamed;
  renamed.device = "spyre";
  renamed.device_lib = dev_.lib;
  ExecOptions cpu1;
  cpu1.device = "cpu:1";

  for (const auto& [opts, says] : std::vector<Bad>{{cuda, "not available"},
                                                   {bogus, "unknown device 'warp-drive'"},
                                                   {index, "index 9 does not exist"},
                                                   {missing, "does not exist"},
                                                   {other, "already loaded"},
                                                   {renamed, "not the name the loaded backend registered"},
                                                   {cpu1, "only index 0"}}) {
    DeviceSetup d;
    std::string error;
    EXPECT_FALSE(setup_device(opts, d, error)) << opts.device;
    EXPECT_NE(error.find(says), std::string::npos) << opts.device << ": " << error;
  }
}

TEST_F(Loopback, AllocatorCountsAndReleasesMemoryPerDevice) {
  const auto before0 = live_bytes_(0);
  const auto before1 = live_bytes_(1);
  {
    at::Tensor a = at::empty({256}, at::TensorOptions().dtype(at::kFloat).device(dev_.device));
    EXPECT_EQ(a.device(), dev_.device);
    EXPECT_EQ(live_bytes_(0) - before0, 1024);
    at::Tensor b = at::empty({10}, at::TensorOptions().dtype(at::kDouble).device(c10::Device("privateuseone:1")));
    EXPECT_EQ(b.device().index(), 1);
    EXPECT_EQ(live_bytes_(1) - before1, 80);
    at::Tensor c = at::randn({64, 64}).to(c10::Device("privateuseone:1"));
    EXPECT_EQ(c.device().index(), 1);
  }
  EXPECT_EQ(live_bytes_(0), before0);
  EXPECT_EQ(live_bytes_(1), before1);
}

TEST_F(Loopback, GuardSwitchesTheCurrentDevice) {
  const auto* impl = c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1);
  EXPECT_EQ(impl->deviceCount(), 4);
  EXPECT_EQ(impl->getDevice().index(), 0);
  {
    c10::DeviceGuard g(c10::Device("privateuseone:3"));
    EXPECT_EQ(impl->getDevice().index(), 3);
    at::Tensor t = at::empty({4}, at::TensorOptions().device(c10::DeviceType::PrivateUse1));
    EXPECT_EQ(t.device().index(), 3);
  }
  EXPECT_EQ(impl->getDevice().index(), 0);
  EXPECT_THROW(impl->setDevice(c10::Device("privateuseone:7")), c10::Error);
}

TEST_F(Loopback, AWorkerCanDriveAnotherDeviceIndex) {
  DeviceSetup d = dev_;
  std::string error;
  ASSERT_TRUE(use_device_index(d, 2, error)) << error;
  EXPECT_EQ(d.device.str(), "privateuseone:2");
  at::Tensor t = at::empty({2}, at::TensorOptions().device(c10::DeviceType::PrivateUse1));
  EXPECT_EQ(t.device().index(), 2);  // the worker's index is current, so unqualified allocations land there
  EXPECT_EQ(at::ones({3}).to(d.device).device().index(), 2);
  EXPECT_FALSE(use_device_index(d, 9, error));
  EXPECT_NE(error.find("device index 9 is out of range: privateuseone:2's backend has 4 device(s)"), std::string::npos) << error;
  ASSERT_TRUE(use_device_index(d, 0, error)) << error;
}

TEST_F(Loopback, CopiesRoundTripAnyLayoutAndDtype) {
  at::manual_seed(1);
  at::Tensor x = at::randn({5, 7});
  EXPECT_TRUE(at::equal(on_device(x).cpu(), x));
  at::Tensor xt = x.t();  // non-contiguous source
  EXPECT_TRUE(at::equal(on_device(xt).cpu(), xt.contiguous()));
  at::Tensor d = on_device(x);
  EXPECT_TRUE(at::equal(d.t().contiguous().cpu(), xt.contiguous()));  // device -> device, strided
  EXPECT_TRUE(at::equal(d.to(at::kHalf).cpu(), x.to(at::kHalf)));      // dtype change on the device
  EXPECT_TRUE(at::equal(x.to(dev_.device, at::kBFloat16).cpu(), x.to(at::kBFloat16)));
  at::Tensor on1 = d.to(c10::Device("privateuseone:1"));
  EXPECT_EQ(on1.device().index(), 1);
  EXPECT_TRUE(at::equal(on1.cpu(), x));
  EXPECT_FLOAT_EQ(on_device(at::tensor({2.5f})).item<float>(), 2.5f);  // _local_scalar_dense
}

TEST_F(Loopback, ViewsAliasDeviceMemory) {
  at::Tensor base = on_device(at::arange(24, at::kFloat));
  at::Tensor v = base.view({4, 6});
  at::Tensor s = v.slice(1, 2, 5);
  at::Tensor t = v.transpose(0, 1);
  at::Tensor a = base.as_strided({3, 2}, {4, 1}, 2);
  at::Tensor u = base.unfold(0, 4, 4);
  for (const auto* view : {&v, &s, &t, &a, &u}) {
    EXPECT_EQ(view->device(), dev_.device);
    EXPECT_TRUE(view->is_alias_of(base));
  }
  at::Tensor ref = at::arange(24, at::kFloat);
  EXPECT_TRUE(at::equal(s.cpu(), ref.view({4, 6}).slice(1, 2, 5)));
  EXPECT_TRUE(at::equal(a.cpu(), ref.as_strided({3, 2}, {4, 1}, 2)));
  EXPECT_TRUE(at::equal(u.cpu(), ref.unfold(0, 4, 4)));
  base.add_(1);  // in place through the fallback: every view sees it
  EXPECT_TRUE(at::equal(t.cpu(), (ref + 1).view({4, 6}).transpose(0, 1)));
  EXPECT_THROW(on_device(at::randn({4, 6})).t().view({24}), c10::Error);  // like the CPU: not viewable
  at::Tensor r = on_device(at::zeros({2}));
  r.resize_({3, 5});
  EXPECT_EQ(r.sizes(), at::IntArrayRef({3, 5}));
  r.fill_(2);
  EXPECT_EQ(r.sum().item<float>(), 30.0f);
}

TEST_F(Loopback, FallbackHandlesEveryKindOfArgument) {
  at::manual_seed(5);
  const at::Tensor x = at::randn({6, 4});
  const at::Tensor dx = on_device(x);
  const at::Tensor idx = at::tensor({4, 0, 4}, at::kLong);
  // Tensor?[] indices living on the device (libtorch's own cpu_fallback leaves them there).
  EXPECT_TRUE(at::equal(dx.index({on_device(idx)}).cpu(), x.index({idx})));
  at::Tensor target = on_device(at::zeros({6, 4}));
  target.index_put_({on_device(idx)}, on_device(at::ones({3, 4})), /*accumulate=*/true);
  EXPECT_TRUE(at::equal(target.cpu(), at::zeros({6, 4}).index_put_({idx}, at::ones({3, 4}), true)));
  // out= into an empty tensor: the kernel resizes its copy, the device tensor follows.
  at::Tensor out = on_device(at::empty({0}));
  at::add_out(out, dx, dx);
  EXPECT_EQ(out.sizes(), x.sizes());
  EXPECT_TRUE(at::equal(out.cpu(), x + x));
  // In place through a non-contiguous view writes into the base.
  at::Tensor base = on_device(x.clone());
  base.t().mul_(2);
  EXPECT_TRUE(at::equal(base.cpu(), x * 2));
  // Factories with a device argument, and data-dependent output shapes.
  at::Tensor r = at::arange(5, at::TensorOptions().dtype(at::kFloat).device(dev_.device));
  EXPECT_EQ(r.device(), dev_.device);
  EXPECT_TRUE(at::equal(r.cpu(), at::arange(5, at::kFloat)));
  EXPECT_TRUE(at::equal(at::nonzero(on_device(x > 0)).cpu(), at::nonzero(x > 0)));
  // Reading inputs costs no copy: the device bytes are what the CPU kernel sees.
  EXPECT_TRUE(at::equal(at::sum(dx).cpu(), at::sum(x)));
}

/// The op on the CPU in float32, rounded to `dtype`: what a device with native low precision computes.
struct OpCase {
  const char* name;
  std::function<at::Tensor(const std::vector<at::Tensor>&)> fn;
  std::function<std::vector<at::Tensor>()> inputs;
};

std::vector<OpCase> model_ops() {
  return {
      {"add", [](const auto& in) { return at::add(in[0], in[1]); },
       [] { return std::vector<at::Tensor>{at::randn({8, 16}), at::randn({8, 16})}; }},
      {"softmax", [](const auto& in) { return at::softmax(in[0], -1); },
       [] { return std::vector<at::Tensor>{at::randn({4, 32})}; }},
      {"matmul", [](const auto& in) { return at::matmul(in[0], in[1]); },
       [] { return std::vector<at::Tensor>{at::randn({11, 64}), at::randn({64, 64})}; }},
      {"linear", [](const auto& in) { return at::linear(in[0], in[1], in[2]); },
       [] { return std::vector<at::Tensor>{at::randn({3, 5, 16}), at::randn({8, 16}), at::randn({8})}; }},
      {"embedding", [](const auto& in) { return at::embedding(in[0], in[1].to(at::kLong)); },
       [] { return std::vector<at::Tensor>{at::randn({10, 6}), at::randint(0, 10, {3, 4})}; }},
      {"exp_inplace", [](const auto& in) { return in[0].clone().exp_(); },
       [] { return std::vector<at::Tensor>{at::randn({17})}; }},
      {"rsqrt_out", [](const auto& in) { at::Tensor out = at::empty_like(in[0]); at::rsqrt_out(out, in[0]); return out; },
       [] { return std::vector<at::Tensor>{at::rand({9}) + 0.5}; }},
      {"silu", [](const auto& in) { return at::silu(in[0]); },
       [] { return std::vector<at::Tensor>{at::randn({33})}; }},
      {"conv2d", [](const auto& in) { return at::conv2d(in[0], in[1], in[2], {1, 1}, {1, 1}); },
       [] { return std::vector<at::Tensor>{at::randn({2, 3, 8, 8}), at::randn({4, 3, 3, 3}), at::randn({4})}; }},
  };
}

class LoopbackLowPrecision : public Loopback, public ::testing::WithParamInterface<at::ScalarType> {};

TEST_P(LoopbackLowPrecision, ModelOpsMatchTheCpuComputedInFloat32) {
  const at::ScalarType low = GetParam();
  const double tol = low == at::kHalf ? 2e-3 : 1.6e-2;
  for (const auto& op : model_ops()) {
    at::manual_seed(7);
    std::vector<at::Tensor> host = op.inputs();
    std::vector<at::Tensor> ref_in, dev_in;
    for (const auto& t : host) {
      const bool floating = t.is_floating_point();
      at::Tensor rounded = floating ? t.to(low) : t;  // the inputs a low-precision model sees
      ref_in.push_back(floating ? rounded.to(at::kFloat) : rounded);
      dev_in.push_back(on_device(rounded));
    }
    at::Tensor expected = op.fn(ref_in).to(low);
    at::Tensor got;
    ASSERT_NO_THROW(got = op.fn(dev_in)) << op.name;
    EXPECT_EQ(got.device(), dev_.device) << op.name;
    EXPECT_EQ(got.scalar_type(), low) << op.name;
    EXPECT_TRUE(at::allclose(got.cpu().to(at::kFloat), expected.to(at::kFloat), tol, tol))
        << op.name << " max diff " << (got.cpu().to(at::kFloat) - expected.to(at::kFloat)).abs().max().item<float>();
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, LoopbackLowPrecision, ::testing::Values(at::kHalf, at::kBFloat16),
                         [](const auto& info) { return std::string(c10::toString(info.param)); });

TEST_F(Loopback, Float32OpsMatchTheCpuExactly) {
  for (const auto& op : model_ops()) {
    at::manual_seed(3);
    std::vector<at::Tensor> host = op.inputs();
    std::vector<at::Tensor> dev_in;
    for (const auto& t : host) dev_in.push_back(on_device(t));
    EXPECT_TRUE(at::equal(op.fn(dev_in).cpu(), op.fn(host))) << op.name;
  }
}

TEST_F(Loopback, ValueFaultsCorruptOnlyTheNamedOverload) {
  at::Tensor a = on_device(at::arange(1, 5, at::kFloat));
  at::Tensor b = on_device(at::full({4}, 2.0f));
  const at::Tensor clean = at::arange(1, 5, at::kFloat) + 2;

  faults("aten::add.Tensor=bias:0.5");
  EXPECT_TRUE(at::equal(at::add(a, b).cpu(), clean + 0.5));
  at::Tensor out = on_device(at::empty({4}));
  at::add_out(out, a, b);  // aten::add.out: another overload, untouched
  EXPECT_TRUE(at::equal(out.cpu(), clean));

  faults("aten::add=zeros");  // no overload: every overload of add
  at::add_out(out, a, b);
  EXPECT_TRUE(at::equal(out.cpu(), at::zeros({4})));
  EXPECT_TRUE(at::equal(at::add(a, b).cpu(), at::zeros({4})));

  faults("aten::mul.Tensor=ulp");
  at::Tensor m = at::mul(a, b).cpu();
  EXPECT_FALSE(at::equal(m, a.cpu() * 2));
  EXPECT_TRUE(at::equal(m.slice(0, 1), (a.cpu() * 2).slice(0, 1)));  // one element, one ulp
  EXPECT_NEAR(m[0].item<float>(), 2.0f, 2.0f * 1.2e-7f);

  faults("aten::linear=bias:1");  // a composite op: faulted as a whole, not through its pieces
  at::Tensor x = on_device(at::randn({2, 3})), w = on_device(at::randn({4, 3}));
  EXPECT_TRUE(at::allclose(at::linear(x, w).cpu(), at::linear(x.cpu(), w.cpu()) + 1));
  EXPECT_TRUE(at::allclose(at::matmul(x, w.t()).cpu(), at::matmul(x.cpu(), w.cpu().t())));

  faults("aten::_copy_from=bias:1");  // a faulty transfer
  EXPECT_TRUE(at::equal(on_device(at::zeros({3})).cpu(), at::full({3}, 2.0f)));  // host->dev and dev->host
}

TEST_F(Loopback, ConvolutionRunsOnTheCpuAndTakesFaultsUnderEitherName) {
  // Convolutions reach aten::convolution_overrideable on a PrivateUse1 device, which no fallback sees.
  at::manual_seed(5);
  const at::Tensor x = at::randn({1, 2, 6, 6}), w = at::randn({3, 2, 3, 3});
  const at::Tensor clean = at::conv2d(x, w, {}, {2, 2});
  EXPECT_TRUE(at::equal(at::conv2d(on_device(x), on_device(w), {}, {2, 2}).cpu(), clean));
  faults("aten::convolution=bias:1");
  EXPECT_TRUE(at::allclose(at::conv2d(on_device(x), on_device(w), {}, {2, 2}).cpu(), clean + 1));
  faults("aten::convolution_overrideable=zeros");
  EXPECT_TRUE(at::equal(at::conv2d(on_device(x), on_device(w), {}, {2, 2}).cpu(), at::zeros_like(clean)));
  faults("");
  EXPECT_TRUE(contains(dev_.enabled_ops, "aten::convolution_overrideable"));
}

TEST_F(Loopback, NondetDiffersOnEveryCall) {
  at::Tensor a = on_device(at::randn({6}));
  faults("aten::neg=nondet");
  at::Tensor r1 = at::neg(a).cpu(), r2 = at::neg(a).cpu(), r3 = at::neg(a).cpu();
  EXPECT_FALSE(at::equal(r1, r2));
  EXPECT_FALSE(at::equal(r2, r3));
  EXPECT_TRUE(at::allclose(r1, -a.cpu(), 1e-6, 1e-6));
}

TEST_F(Loopback, ErrorFaultsRaiseTheirErrorTypes) {
  at::Tensor a = on_device(at::randn({4}));
  faults("aten::exp=throw;aten::sin=notimpl;aten::cos=oom");
  try {
    at::exp(a);
    ADD_FAILURE() << "exp did not throw";
  } catch (const c10::NotImplementedError&) {
    ADD_FAILURE() << "throw must be a plain c10::Error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("injected device failure in aten::exp"), std::string::npos) << e.what();
  }
  EXPECT_THROW(at::sin(a), c10::NotImplementedError);
  EXPECT_THROW(at::cos(a), c10::OutOfMemoryError);
  EXPECT_NO_THROW(at::tan(a));  // the armed failure does not linger into the next op
  faults("aten::empty.memory_format=oom");
  EXPECT_THROW(at::empty({3}, a.options()), c10::OutOfMemoryError);  // the allocator itself fails
  EXPECT_THROW(at::tan(a), c10::OutOfMemoryError);  // and so does every op that allocates its output
  faults("");
  EXPECT_NO_THROW(at::cos(a));
}

TEST_F(Loopback, BadFaultSpecsAreRejectedWithTheReason) {
  char err[512];
  const std::pair<const char*, const char*> bad[] = {
      {"aten::add.Tensor", "missing '='"},
      {"add=zeros", "needs a namespace"},
      {"aten::no_such_op=zeros", "unknown operator 'aten::no_such_op'"},
      {"aten::add.Tensor=explode", "unknown fault kind 'explode'"},
      {"aten::add.Tensor=bias", "needs a number"},
      {"aten::add.Tensor=bias:lots", "needs a number"},
      {"aten::exp=segv:3", "takes no argument"},
      {"aten::exp=segv;aten::exp=hang", "two faults"},
      {"aten::transpose.int=zeros", "'aten::transpose.int' is a view op"},
  };
  for (const auto& [spec, says] : bad) {
    err[0] = '\0';
    EXPECT_EQ(set_faults_(spec, err, sizeof(err)), -1) << spec;
    EXPECT_NE(std::string(err).find(says), std::string::npos) << spec << ": " << err;
  }
}

/// Runs `body` in a forked child and returns its wait status (or -1 if still running after `limit`; then killed).
int in_child(const std::function<void()>& body, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status;
}

TEST_F(Loopback, CrashFaultsKillTheProcess) {
  at::Tensor a = on_device(at::randn({4}));
  int status = in_child([&] {
    faults("aten::exp=segv");
    at::exp(a);
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
  status = in_child([&] {
    faults("aten::view=abort");  // an own kernel, not the fallback
    a.view({2, 2});
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGABRT);
  status = in_child([&] {
    faults("aten::mul.Tensor=hang");
    at::mul(a, a);
  }, std::chrono::milliseconds(1500));
  EXPECT_EQ(status, -1) << "mul returned instead of hanging";
  status = in_child([&] { at::mul(a, a); });  // control: the same child without a fault exits cleanly
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

/// A small libtorch Executor on the loopback device, to run through the worker pool as opcheck does.
class LoopbackExecutor : public Executor {
 public:
  explicit LoopbackExecutor(DeviceSetup dev) : dev_(std::move(dev)) {}
  const ExecInfo& info() const override { return info_; }
  bool prepare_worker(int device_index, std::string* error) override {
    at::set_num_threads(2);  // the worker's own intra-op pool, started after fork
    return use_device_index(dev_, device_index, *error);
  }
  Result run(const Case& c) override {
    at::manual_seed(c.seed);
    const at::Tensor a = at::randn({192, 192});
    const at::Tensor d = a.to(dev_.device);
    const bool is_exp = c.name == "exp";
    const at::Tensor got = is_exp ? at::exp(d) : at::mm(d, d);
    Result r;
    r.case_id = c.id;
    r.stage = at::allclose(got.cpu(), is_exp ? at::exp(a) : at::mm(a, a), 1e-5, 1e-5) ? Stage::PASSED
                                                                                      : Stage::INCORRECT_RESULT;
    r.outcome = stage_outcome(r.stage);
    r.message = got.device().str();
    return r;
  }

 private:
  DeviceSetup dev_;
  ExecInfo info_;
};

TEST_F(Loopback, ForkedWorkersRunDeviceOpsAndIsolateADeviceCrash) {
  faults("aten::exp=segv");  // inherited by the workers
  std::vector<Case> cases(8);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    cases[i].name = i == 3 ? "exp" : "mm";
    cases[i].id = "pool::" + std::to_string(i) + "_" + cases[i].name;
    cases[i].seed = static_cast<std::int64_t>(i);
  }
  std::vector<const Case*> ptrs;
  for (const auto& c : cases) ptrs.push_back(&c);
  LoopbackExecutor ex(dev_);
  PoolOptions opts;
  opts.device_indices = {0, 1};
  std::map<std::size_t, Result> results;
  const PoolStats stats = run_cases(ex, ptrs, opts, [&](std::size_t i, Result r) { results[i] = std::move(r); });
  ASSERT_EQ(results.size(), cases.size());
  std::set<std::string> devices;
  for (const auto& [i, r] : results) {
    if (i == 3) {
      EXPECT_EQ(r.stage, Stage::CRASHED);
      EXPECT_EQ(r.message, "worker died with SIGSEGV while running pool::3_exp");
      continue;
    }
    EXPECT_EQ(r.stage, Stage::PASSED) << i << " " << r.message;
    devices.insert(r.message);
  }
  EXPECT_EQ(devices, (std::set<std::string>{"privateuseone:0", "privateuseone:1"}));
  EXPECT_EQ(stats.crashes, 1u);
  EXPECT_EQ(stats.parent_threads, 1);
}

/// Runs the probe in a fresh process with OPCHECK_LOOPBACK_FAULTS and OPCHECK_LOOPBACK_MODE set; returns its stdout
/// and wait status.
std::pair<std::string, int> probe(const std::string& faults, const std::string& op, const std::string& mode = "") {
  const std::string cmd = "OPCHECK_LOOPBACK_FAULTS='" + faults + "' OPCHECK_LOOPBACK_MODE='" + mode + "' " +
                          LOOPBACK_PROBE + " " + op + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  int status = pclose(p);
  return {out, status};
}

TEST(LoopbackEnv, FaultsComeFromTheEnvironmentAtLoad) {
  auto [clean, s0] = probe("", "add");
  EXPECT_EQ(clean, "ok 3 4 5 6\n");
  auto [biased, s1] = probe("aten::add.Tensor=bias:0.5", "add");
  EXPECT_EQ(biased, "ok 3.5 4.5 5.5 6.5\n");
  auto [other, s2] = probe("aten::add.Tensor=bias:0.5", "mul");
  EXPECT_EQ(other, "ok 2 4 6 8\n");
  auto [thrown, s3] = probe("aten::mul.Tensor=throw", "mul");
  EXPECT_NE(thrown.find("error: loopback: injected device failure in aten::mul.Tensor"), std::string::npos) << thrown;
  // sh reports a child killed by signal N as exit status 128+N.
  auto [crashed, s4] = probe("aten::exp=segv", "exp");
  EXPECT_TRUE(WIFEXITED(s4) && WEXITSTATUS(s4) == 128 + SIGSEGV) << s4 << " " << crashed;
}

TEST(LoopbackEnv, InvalidSpecIsAClearErrorAtSetup) {
  auto [out, status] = probe("aten::exp=segfault", "exp");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 4) << status;
  EXPECT_NE(out.find("setup error: device library"), std::string::npos) << out;
  EXPECT_NE(out.find("unknown fault kind 'segfault'"), std::string::npos) << out;
  EXPECT_NE(out.find("Fix:"), std::string::npos) << out;
}

TEST(LoopbackEnv, OffMovesTheFirstElementByXRelativeAndAtLeastFourUnits) {
  // add gives 3 4 5 6: 3 moves by 1e-2 relative (0.03) towards zero, the others stay.
  auto [moved, s0] = probe("aten::add.Tensor=off:1e-2", "add");
  float first = 0;
  ASSERT_EQ(std::sscanf(moved.c_str(), "ok %f", &first), 1) << moved;
  EXPECT_FLOAT_EQ(first, 2.97f) << moved;
  EXPECT_NE(moved.find(" 4 5 6\n"), std::string::npos) << moved;
  // A tiny X still moves the element by at least 4 units in the last place of float32 (at 3: 4 * 2^-22).
  auto [tiny, s1] = probe("aten::add.Tensor=off:1e-12", "add");
  ASSERT_EQ(std::sscanf(tiny.c_str(), "ok %f", &first), 1) << tiny;
  EXPECT_GE(3.0 - first, 4 * std::ldexp(1.0, -22)) << tiny;
  EXPECT_LT(3.0 - first, 1e-5) << tiny;
  // A 0 moves too: by X (its magnitude counts as 1), and by at least 4 units in the last place of fp16 at 1.
  auto [zero, s3] = probe("aten::mul.Tensor=off:1e-2", "mul_half_zeros");
  ASSERT_EQ(std::sscanf(zero.c_str(), "ok %f", &first), 1) << zero;
  EXPECT_NEAR(first, -0.01, 1e-5) << zero;
  EXPECT_NE(zero.find(" 0 0\n"), std::string::npos) << zero;
  auto [zero_tiny, s4] = probe("aten::mul.Tensor=off:1e-9", "mul_half_zeros");
  ASSERT_EQ(std::sscanf(zero_tiny.c_str(), "ok %f", &first), 1) << zero_tiny;
  EXPECT_LE(first, -4 * std::ldexp(1.0, -10)) << zero_tiny;
  auto [bad, s2] = probe("aten::add.Tensor=off", "add");
  EXPECT_NE(bad.find("'off' needs a number"), std::string::npos) << bad;
}

TEST(LoopbackEnv, UnknownModeIsAClearErrorAtSetup) {
  auto [out, status] = probe("", "add", "precise,forksensitive");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 4) << status;
  EXPECT_NE(out.find("OPCHECK_LOOPBACK_MODE: unknown mode 'forksensitive' (did you mean 'fork_sensitive'?)"),
            std::string::npos) << out;
  EXPECT_NE(out.find("Fix: use one or more of fork_sensitive, precise, stats_fp32, any_writer, shuffle_accumulate"),
            std::string::npos) << out;
  auto [ok, s1] = probe("", "add", " precise , fork_sensitive ");
  EXPECT_EQ(ok, "ok 3 4 5 6\n");
}

TEST(LoopbackEnv, ForkSensitiveFailsAChildForkedAfterTheDeviceWasUsed) {
  // The negative control: the parent used the device, then forked; the child's first use fails as CUDA's does.
  auto [out, status] = probe("", "fork_after_use", "fork_sensitive");
  EXPECT_NE(out.find("child error: loopback error: initialization error: the loopback device was initialised in "
                     "process "), std::string::npos) << out;
  EXPECT_NE(out.find("Fix: use the device only after forking"), std::string::npos) << out;
  EXPECT_NE(out.find("ok 3 3\n"), std::string::npos) << out;  // the parent keeps its device
  // Without the mode the same child works.
  auto [plain, s1] = probe("", "fork_after_use");
  EXPECT_EQ(plain, "ok 2 2\nok 3 3\n");
}

TEST(LoopbackEnv, SetupDeviceLeavesTheProcessFreeToFork) {
  // setup_device resolved the device, checked its index and counted its kernels; a child forked after it still
  // initialises the device itself.
  auto [out, status] = probe("", "fork_after_setup", "fork_sensitive");
  EXPECT_EQ(out, "ok 2 2\nok 3 3\n");
}

TEST(LoopbackEnv, AnyWriterLetsAnotherOfRepeatedWritesWin) {
  auto [plain, s0] = probe("", "index_put_repeated");
  EXPECT_EQ(plain, "ok 0 30 0 0\n");  // the CPU applies the writes in order: the last wins
  auto [reversed, s1] = probe("", "index_put_repeated", "any_writer");
  EXPECT_EQ(reversed, "ok 0 10 0 0\n");
}

TEST(LoopbackEnv, AnyWriterBreaksTiesTheOtherWay) {
  auto [plain, s0] = probe("", "topk_ties");
  auto [flipped, s1] = probe("", "topk_ties", "any_writer");
  EXPECT_EQ(plain, "ok 3 1\n");
  EXPECT_EQ(flipped, "ok 3 2\n");  // the same value, the other of the two equal elements
}

TEST(LoopbackEnv, StatsFp32ReturnsLayerNormAndGroupNormStatisticsInFloat32) {
  auto [plain, s0] = probe("", "norm_stats");
  EXPECT_EQ(plain, "ok Half Half Half Half Half Half\n");
  auto [wide, s1] = probe("", "norm_stats", "stats_fp32");
  EXPECT_EQ(wide, "ok Half Float Float Half Float Float\n");
}

TEST(LoopbackEnv, ShuffleAccumulateChangesTheRoundingOfEachCall) {
  auto [plain, s0] = probe("", "index_add_twice");
  EXPECT_EQ(plain, "ok same\n");
  auto [shuffled, s1] = probe("", "index_add_twice", "shuffle_accumulate");
  EXPECT_EQ(shuffled, "ok differ\n");
}

TEST(LoopbackEnv, PreciseRoundsAFloat64ResultOnce) {
  auto [plain, s0] = probe("", "mm_fp16");
  auto [precise, s1] = probe("", "mm_fp16", "precise");
  EXPECT_EQ(precise, "ok Half 0\n");  // every element is float64's, rounded once
  EXPECT_NE(plain, "ok Half 0\n") << "the CPU's own fp16 mm no longer differs from float64: pick another call";
  EXPECT_EQ(plain.rfind("ok Half ", 0), 0u) << plain;
}

// The one table of fault kinds (src/common/fault_kinds.h): every entry is named once, listed in `run --help` and in
// docs/devices.md, parsed with its own grammar, and fires on the loopback.
TEST(FaultKinds, EachKindIsOneEntryListedInTheHelpAndTheDocs) {
  std::ifstream in(std::string(OPCHECK_TEST_DIR) + "/../../docs/devices.md");
  ASSERT_TRUE(in) << "docs/devices.md";
  const std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string help = fault_kind_help(4, 116);
  std::string squeezed;  // the help with its wrapped lines joined and runs of blanks made one
  for (char c : help) {
    if (c == '\n') c = ' ';
    if (!(c == ' ' && !squeezed.empty() && squeezed.back() == ' ')) squeezed += c;
  }
  std::set<std::string> names;
  for (const auto& k : fault_kinds()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name << " twice";
    EXPECT_EQ(fault_kind_named(k.name), &k) << k.name;
    const std::string example = k.example;
    const std::string written = example.substr(example.find('=') + 1);
    EXPECT_EQ(written.substr(0, written.find(':')), k.name) << "the example of " << k.name << " is another kind's";
    EXPECT_NE(help.find("    " + std::string(k.name)), std::string::npos) << k.name << " is not in the help";
    EXPECT_NE(squeezed.find(k.help), std::string::npos) << k.name << "'s help line is not in the help";
    EXPECT_NE(docs.find("`" + std::string(k.name)), std::string::npos) << k.name << " is not in docs/devices.md";
  }
  EXPECT_EQ(fault_kind_named("explode"), nullptr);
}

TEST(FaultKinds, OneRuleMatchesAFaultToTheOpsItNames) {
  EXPECT_TRUE(fault_op_matches("aten::add", "aten::add.Tensor"));  // a bare name: every overload
  EXPECT_TRUE(fault_op_matches("aten::add", "aten::add"));
  EXPECT_TRUE(fault_op_matches("aten::add.Tensor", "aten::add.Tensor"));
  EXPECT_FALSE(fault_op_matches("aten::add.Tensor", "aten::add.Scalar"));
  EXPECT_FALSE(fault_op_matches("aten::add.Tensor", "aten::add"));
  EXPECT_TRUE(fault_op_matches("aten::mm.default", "aten::mm"));  // .default: the overload without a name
  EXPECT_TRUE(fault_op_matches("aten::mm.default", "aten::mm.default"));
  EXPECT_FALSE(fault_op_matches("aten::mm.default", "aten::mm.out"));
  EXPECT_FALSE(fault_op_matches("aten::ad", "aten::add.Tensor"));
  EXPECT_FALSE(fault_op_matches("aten::add_", "aten::add.Tensor"));
  EXPECT_EQ(fault_keys_for("aten::add", "Tensor"), (std::vector<std::string>{"aten::add.Tensor", "aten::add"}));
  EXPECT_EQ(fault_keys_for("aten::mm", ""), (std::vector<std::string>{"aten::mm.default", "aten::mm"}));
}

TEST_F(Loopback, EveryFaultKindParsesWithItsGrammarAndFires) {
  for (const auto& k : fault_kinds()) {
    const std::string example = k.example;
    const std::string op = example.substr(0, example.find('='));
    char err[512] = {0};
    // Its grammar: a number where it takes one, nothing where it takes none.
    if (k.arg == FaultArg::Number) {
      EXPECT_EQ(set_faults_((op + "=" + k.name).c_str(), err, sizeof(err)), -1) << k.name << " without its number";
    } else if (k.arg == FaultArg::None) {
      EXPECT_EQ(set_faults_((op + "=" + k.name + ":1").c_str(), err, sizeof(err)), -1) << k.name << " with one";
    }
    faults(example);
    // Fired: the call raises, dies, hangs, or returns what the CPU does not (bits, or the device the result is on).
    // Copies are faulted as a dtype-converting copy of a non-contiguous tensor to the device.
    const at::Tensor x = at::rand({4, 8}) + 0.5;
    const bool copy = op == "aten::_copy_from";
    const at::Tensor want = copy ? x.t().to(at::kDouble) : at::exp(x);
    const int status = in_child(
        [&] {
          try {
            const at::Tensor got = copy ? x.t().to(dev_.device, at::kDouble) : at::exp(on_device(x));
            if (got.device() != dev_.device) _exit(5);
            _exit(at::equal(got.cpu(), want) ? 0 : 4);
          } catch (const std::exception&) {
            _exit(3);
          }
        },
        std::chrono::seconds(5));
    EXPECT_NE(status, 0) << example << " did not fire: the call ran as on the CPU";
    if (k.ends_worker) {
      EXPECT_TRUE(status == -1 || WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 3))
          << example << ": " << status;
    }
    faults("");
  }
}

}  // namespace
}  // namespace opcheck::exec
