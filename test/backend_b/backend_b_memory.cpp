// backend_b memory and device guard: a second, deliberately separate PrivateUse1 device for opcheck's tests.
// Two devices; memory comes from the C++ heap and is counted so the test can see it come back.
#include <atomic>
#include <cstdint>
#include <new>

#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

namespace backend_b {

std::atomic<std::int64_t> g_blocks{0};
thread_local c10::DeviceIndex t_device = 0;
constexpr c10::DeviceIndex kDevices = 2;

namespace {

void release(void* p) {
  if (p == nullptr) return;
  ::operator delete(p, std::align_val_t(32));
  g_blocks.fetch_sub(1);
}

struct HeapAllocator final : c10::Allocator {
  c10::DataPtr allocate(std::size_t n) override {
    const c10::Device where(c10::DeviceType::PrivateUse1, t_device);
    if (n == 0) return {nullptr, nullptr, &release, where};
    void* p = ::operator new(n, std::align_val_t(32));
    g_blocks.fetch_add(1);
    return {p, p, &release, where};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
};

struct Guard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return c10::DeviceType::PrivateUse1; }
  c10::Device exchangeDevice(c10::Device d) const override {
    const auto old = getDevice();
    setDevice(d);
    return old;
  }
  c10::Device getDevice() const override { return {c10::DeviceType::PrivateUse1, t_device}; }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.index() < kDevices, "backend_b has ", static_cast<int>(kDevices), " devices");
    if (d.index() >= 0) t_device = d.index();
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0 && d.index() < kDevices) t_device = d.index();
  }
  c10::Stream getStream(c10::Device d) const noexcept override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return kDevices; }
};

HeapAllocator g_heap;

}  // namespace

c10::Allocator* heap() { return &g_heap; }

}  // namespace backend_b

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &backend_b::g_heap);
C10_REGISTER_GUARD_IMPL(PrivateUse1, backend_b::Guard);

extern "C" __attribute__((visibility("default"))) std::int64_t backend_b_live_blocks() { return backend_b::g_blocks.load(); }
