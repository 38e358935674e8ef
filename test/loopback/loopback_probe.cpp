// Starts fresh, sets up the loopback device the way opcheck does, runs one op (or one scenario) and prints what it
// saw: the loopback tests run it in a child process with OPCHECK_LOOPBACK_FAULTS / OPCHECK_LOOPBACK_MODE set (read
// once, at load).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "exec/cpu_features.h"
#include "exec/device.h"

namespace {

void print_values(const at::Tensor& r) {
  at::Tensor host = r.cpu().to(at::kDouble).reshape(-1);
  std::printf("ok");
  for (int64_t i = 0; i < host.numel(); ++i) std::printf(" %.9g", host[i].item<double>());
  std::printf("\n");
}

/// Uses the device in a forked child (after the parent used it, if `use_first`) and prints how the child fared.
int fork_and_use(const at::Device& dev, bool use_first) {
  if (use_first) (void)at::ones({2}).to(dev).cpu();
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child == 0) {
    try {
      print_values(at::ones({2}).to(dev) * 2);
    } catch (const c10::Error& e) {
      std::printf("child error: %s\n", e.what_without_backtrace());
    }
    std::fflush(stdout);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  print_values(at::ones({2}).to(dev) * 3);  // the parent itself still works
  return 0;
}

/// Scenarios that show a mode's behaviour; each prints its result values.
bool scenario(const std::string& op, const at::Device& dev) {
  if (op == "fork_after_use" || op == "fork_after_setup") return fork_and_use(dev, op == "fork_after_use") == 0;
  if (op == "index_put_repeated") {  // three writes to element 1: which one wins
    at::Tensor self = at::zeros({4}).to(dev);
    c10::List<c10::optional<at::Tensor>> idx;
    idx.push_back(at::tensor({1, 1, 1}, at::kLong).to(dev));
    self.index_put_(idx, at::tensor({10.f, 20.f, 30.f}).to(dev));
    print_values(self);
  } else if (op == "topk_ties") {  // values and the index chosen among equal elements
    auto [values, indices] = at::topk(at::tensor({1.f, 3.f, 3.f, 2.f}).to(dev), 1);
    print_values(at::cat({values, indices.to(at::kFloat)}));
  } else if (op == "mul_half_zeros") {  // fp16 zeros times ones: what a value fault does to a 0
    print_values(at::mul(at::zeros({3}, at::kHalf).to(dev), at::ones({3}, at::kHalf).to(dev)));
  } else if (op == "norm_stats") {  // dtypes of output, mean and rstd of layer_norm, then group_norm
    const at::Tensor x = at::randn({2, 4, 8}).to(at::kHalf).to(dev);
    auto layer = at::native_layer_norm(x, {8}, {}, {}, 1e-5);
    auto group = at::native_group_norm(x, {}, {}, 2, 4, 8, 2, 1e-5);
    std::printf("ok");
    for (const auto* out : {&layer, &group})
      std::printf(" %s %s %s", c10::toString(std::get<0>(*out).scalar_type()),
                  c10::toString(std::get<1>(*out).scalar_type()), c10::toString(std::get<2>(*out).scalar_type()));
    std::printf("\n");
  } else if (op == "index_add_twice") {  // fp16 sums of the same call, repeated: bitwise all the same or not
    at::manual_seed(0);
    const at::Tensor index = at::zeros({2000}, at::kLong).to(dev);
    const at::Tensor source = at::rand({2000}).to(at::kHalf).to(dev);
    // Two orders can round to the same sum by chance (often: a float16 near 1000 has few values within reach), so
    // the call is repeated: twelve equal sums from twelve shuffled orders would be a broken shuffle.
    const at::Tensor a = at::zeros({1}, at::kHalf).to(dev).index_add_(0, index, source).cpu();
    bool differ = false;
    for (int k = 0; k < 11 && !differ; ++k)
      differ = !at::equal(a, at::zeros({1}, at::kHalf).to(dev).index_add_(0, index, source).cpu());
    std::printf("ok %s\n", differ ? "differ" : "same");
  } else if (op == "mm_fp16") {  // how many elements differ from float64 rounded once to fp16
    at::manual_seed(0);
    const at::Tensor a = at::randn({2, 512}).to(at::kHalf), b = at::randn({512, 64}).to(at::kHalf);
    const at::Tensor golden = at::mm(a.to(at::kDouble), b.to(at::kDouble)).to(at::kHalf);
    const at::Tensor got = at::mm(a.to(dev), b.to(dev)).cpu();
    std::printf("ok %s %lld\n", c10::toString(got.scalar_type()), static_cast<long long>(got.ne(golden).sum().item<int64_t>()));
  } else {
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: loopback_probe exp|add|mul|neg|SCENARIO [device]\n");
    return 2;
  }
  opcheck::exec::prepare_cpu();
  opcheck::ExecOptions opts;
  opts.device = argc > 2 ? argv[2] : "loopback";
  opcheck::exec::DeviceSetup dev;
  std::string error;
  if (!opcheck::exec::setup_device(opts, dev, error)) {
    std::printf("setup error: %s\n", error.c_str());
    return 4;
  }
  try {
    const std::string op = argv[1];
    if (scenario(op, dev.device)) return 0;
    at::Tensor a = at::arange(1, 5, at::kFloat).to(dev.device);
    at::Tensor b = at::full({4}, 2.0f).to(dev.device);
    at::Tensor r;
    if (op == "exp") r = at::exp(a);
    else if (op == "add") r = at::add(a, b);
    else if (op == "mul") r = at::mul(a, b);
    else if (op == "neg") r = at::neg(a);
    else {
      std::printf("unknown op %s\n", op.c_str());
      return 2;
    }
    print_values(r);
  } catch (const c10::Error& e) {
    std::printf("error: %s\n", e.what_without_backtrace());
    return 1;
  }
  return 0;
}
