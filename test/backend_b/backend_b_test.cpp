// opcheck drives a PrivateUse1 backend it has never seen: backend_b, loaded through --device-lib / OPCHECK_DEVICE_LIB.
#include <dlfcn.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "exec/cpu_features.h"
#include "exec/device.h"
#include "settings/run_settings.h"

namespace opcheck::exec {
namespace {

bool listed(const DeviceSetup& d, const std::string& op) {
  return std::find(d.enabled_ops.begin(), d.enabled_ops.end(), op) != d.enabled_ops.end();
}

class BackendB : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    prepare_cpu();
    ExecOptions opts;
    opts.device = "privateuseone";
    opts.device_lib = BACKEND_B_LIB;
    std::string error;
    ok_ = setup_device(opts, dev_, error);
    error_ = error;
  }
  void SetUp() override { ASSERT_TRUE(ok_) << error_; }
  static inline bool ok_ = false;
  static inline std::string error_;
  static inline DeviceSetup dev_;
};

TEST_F(BackendB, LoadsThroughDeviceLibAndReportsItsKernels) {
  EXPECT_EQ(dev_.device.str(), "privateuseone:0");
  EXPECT_EQ(dev_.name, "privateuseone");  // backend_b does not rename PrivateUse1: the generic name
  EXPECT_NE(dev_.lib.find("libopcheck_backend_b.so"), std::string::npos) << dev_.lib;
  EXPECT_EQ(dev_.lib_sha256.size(), 64u);
  EXPECT_NE(dev_.log_line.find("libopcheck_backend_b.so"), std::string::npos) << dev_.log_line;
  // Exactly the nine kernels backend_b registered: coverage reflects this backend, not loopback.
  const std::vector<std::string> expected = {"aten::_copy_from", "aten::_copy_from_and_resize",
                                             "aten::_local_scalar_dense", "aten::_reshape_alias",
                                             "aten::as_strided", "aten::empty.memory_format",
                                             "aten::empty_strided", "aten::resize_", "aten::view"};
  EXPECT_EQ(dev_.enabled_ops, expected);
  EXPECT_FALSE(listed(dev_, "aten::unfold"));
}

TEST_F(BackendB, OpsRunOnItAndMatchTheCpu) {
  at::manual_seed(0);
  at::Tensor a = at::randn({6, 8}), b = at::randn({8, 5}), bias = at::randn({5});
  at::Tensor da = a.to(dev_.device), db = b.to(dev_.device), dbias = bias.to(dev_.device);
  EXPECT_EQ(da.device(), dev_.device);
  EXPECT_TRUE(at::equal(at::add(da, da).cpu(), a + a));
  EXPECT_TRUE(at::equal(at::softmax(da, 1).cpu(), at::softmax(a, 1)));
  EXPECT_TRUE(at::allclose(at::addmm(dbias, da, db).cpu(), at::addmm(bias, a, b)));
  EXPECT_TRUE(at::equal(da.t().contiguous().cpu(), a.t().contiguous()));
  EXPECT_TRUE(at::equal(da.view({48}).cpu(), a.view({48})));
  EXPECT_FLOAT_EQ(da[2][3].item<float>(), a[2][3].item<float>());
  at::Tensor on1 = da.to(c10::Device("privateuseone:1"));
  EXPECT_EQ(on1.device().index(), 1);
  EXPECT_TRUE(at::equal(on1.cpu(), a));
}

TEST_F(BackendB, MemoryComesBackWhenTensorsDie) {
  using LiveFn = std::int64_t (*)();
  void* lib = dlopen(dev_.lib.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr);
  auto live = reinterpret_cast<LiveFn>(dlsym(lib, "backend_b_live_blocks"));
  ASSERT_NE(live, nullptr);
  const auto before = live();
  {
    at::Tensor t = at::ones({1000}).to(dev_.device);
    at::Tensor u = t * 3;
    EXPECT_EQ(u.sum().item<float>(), 3000.0f);
    EXPECT_GT(live(), before);
  }
  EXPECT_EQ(live(), before);
}

TEST_F(BackendB, AutoPicksTheLibraryFromTheEnvironment) {
  ::setenv("OPCHECK_DEVICE_LIB", BACKEND_B_LIB, 1);
  RunSettings settings;  // device "auto", no --device-lib: the run's settings take the library from the environment
  std::string error;
  const bool resolved = resolve_run_settings(settings, process_environment(), "art", error);
  ::unsetenv("OPCHECK_DEVICE_LIB");
  ASSERT_TRUE(resolved) << error;
  DeviceSetup d;
  ASSERT_TRUE(setup_device(exec_options(settings), d, error)) << error;
  EXPECT_EQ(d.lib, dev_.lib);
  EXPECT_NE(d.log_line.find("auto: device library configured"), std::string::npos) << d.log_line;
}

TEST_F(BackendB, LoopbackCannotJoinAProcessThatHasBackendB) {
  ExecOptions opts;
  opts.device = "loopback";
  opts.loopback_lib = std::string(OPCHECK_BUILD_DIR) + "/libopcheck_loopback.so";
  DeviceSetup d;
  std::string error;
  EXPECT_FALSE(setup_device(opts, d, error));
  EXPECT_NE(error.find("only one PrivateUse1 backend fits in a process"), std::string::npos) << error;
}

}  // namespace
}  // namespace opcheck::exec
