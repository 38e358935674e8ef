// The loopback device's memory and guard: host memory tagged with the PrivateUse1 device and counted per index.
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#include "loopback.h"

namespace opcheck::loopback {
namespace {

constexpr int kMaxDevices = 64;
constexpr std::size_t kAlignment = 64;  // room for the block header and the widest vector loads

c10::DeviceIndex read_device_count() {
  const char* env = std::getenv("OPCHECK_LOOPBACK_DEVICES");
  if (env == nullptr || *env == '\0') return 4;
  char* end = nullptr;
  long n = std::strtol(env, &end, 10);
  if (*end != '\0' || n < 1 || n > kMaxDevices) return 4;
  return static_cast<c10::DeviceIndex>(n);
}

std::array<std::atomic<std::int64_t>, kMaxDevices> g_live_bytes{};
thread_local c10::DeviceIndex t_current_device = 0;

/// Sits in front of every block so the deleter knows what to un-count without a lookup table.
struct BlockHeader {
  std::size_t bytes;
  int device;
};
static_assert(sizeof(BlockHeader) <= kAlignment, "header must fit in the alignment pad");

void free_block(void* base) {
  if (base == nullptr) return;
  auto* h = static_cast<BlockHeader*>(base);
  g_live_bytes[h->device].fetch_sub(static_cast<std::int64_t>(h->bytes), std::memory_order_relaxed);
  std::free(base);
}

class LoopbackAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(std::size_t n) override {
    note_device_use();
    const int device = t_current_device;
    if (allocation_failure_armed()) {
      disarm_allocation_failure();
      C10_THROW_ERROR(OutOfMemoryError, "loopback: out of memory (injected fault) allocating " + std::to_string(n) +
                                            " bytes on device " + std::to_string(device));
    }
    const c10::Device dev(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device));
    if (n == 0) return c10::DataPtr(nullptr, nullptr, &free_block, dev);
    const std::size_t padded = (n + kAlignment - 1) / kAlignment * kAlignment;
    void* base = std::aligned_alloc(kAlignment, padded + kAlignment);
    if (base == nullptr) throw std::bad_alloc();
    auto* h = static_cast<BlockHeader*>(base);
    h->bytes = n;
    h->device = device;
    g_live_bytes[device].fetch_add(static_cast<std::int64_t>(n), std::memory_order_relaxed);
    // Fresh device memory holds whatever was there before, as on an accelerator; all-ones bytes (NaN in every float
    // dtype) make a kernel or a check that relies on zeroed or reused memory fail visibly instead of by luck.
    std::memset(static_cast<char*>(base) + kAlignment, 0xff, n);
    return c10::DataPtr(static_cast<char*>(base) + kAlignment, base, &free_block, dev);
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
};

LoopbackAllocator g_allocator;

/// One stream per device (the default one): loopback work is synchronous on the calling thread.
class LoopbackGuard final : public c10::impl::DeviceGuardImplInterface {
 public:
  c10::DeviceType type() const override { return c10::DeviceType::PrivateUse1; }
  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old = getDevice();
    setDevice(d);
    return old;
  }
  c10::Device getDevice() const override {
    note_device_use();
    return c10::Device(c10::DeviceType::PrivateUse1, t_current_device);
  }
  void setDevice(c10::Device d) const override {
    note_device_use();
    TORCH_CHECK(d.type() == c10::DeviceType::PrivateUse1, "loopback guard asked to switch to ", d);
    if (d.index() < 0) return;  // "the current device": nothing to change
    TORCH_CHECK(d.index() < device_count(), "loopback device ", static_cast<int>(d.index()),
                " does not exist (", static_cast<int>(device_count()), " devices)");
    t_current_device = d.index();
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (used_in_parent_before_fork()) return;  // cannot throw here; the next checked use does
    if (d.index() >= 0 && d.index() < device_count()) t_current_device = d.index();
  }
  c10::Stream getStream(c10::Device d) const noexcept override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const noexcept override {
    return c10::Stream(c10::Stream::DEFAULT, s.device());
  }
  // Cannot throw: a process forked after use gets the count, as CUDA's cached one, and fails on its next use.
  c10::DeviceIndex deviceCount() const noexcept override {
    (void)used_in_parent_before_fork();
    return device_count();
  }
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
};

}  // namespace

c10::DeviceIndex device_count() {
  static const c10::DeviceIndex n = read_device_count();
  return n;
}

c10::DeviceIndex current_device() { return t_current_device; }

c10::Allocator* allocator() { return &g_allocator; }

std::int64_t live_bytes(int device) {
  if (device >= 0) return device < kMaxDevices ? g_live_bytes[device].load() : 0;
  std::int64_t total = 0;
  for (const auto& b : g_live_bytes) total += b.load();
  return total;
}

at::Tensor host_alias(const at::Tensor& t) {
  if (t.device().is_cpu()) return t;
  // from_blob with an explicit CPU device: a CPU TensorImpl over a CPU-addressable pointer, which is what CPU
  // kernels and TensorIterator expect (a CPU tensor over a storage tagged PrivateUse1 is not).
  at::Tensor h = at::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.options().device(c10::kCPU));
  // A conjugate or negative view keeps its bit: the CPU kernel that reads the alias resolves it.
  if (t.is_conj()) h = h.conj();
  if (t.is_neg()) h = h._neg_view();
  return h;
}

}  // namespace opcheck::loopback

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &opcheck::loopback::g_allocator);
C10_REGISTER_GUARD_IMPL(PrivateUse1, opcheck::loopback::LoopbackGuard);
