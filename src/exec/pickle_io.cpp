#include "exec/pickle_io.h"

#include <unistd.h>

#include <fstream>
#include <stdexcept>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

namespace opcheck::exec {
namespace {

c10::IValue plain(const c10::IValue& v) {
  if (v.isList()) {
    c10::impl::GenericList out(c10::AnyType::get());
    for (const c10::IValue& item : v.toListRef()) out.push_back(plain(item));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> out;
    for (const c10::IValue& item : v.toTupleRef().elements()) out.push_back(plain(item));
    return c10::ivalue::Tuple::create(std::move(out));
  }
  if (v.isTensor() && v.toTensor().defined() && v.toTensor().layout() != at::kStrided)
    return v.toTensor().to_dense();  // torch.load cannot rebuild libtorch's pickle of a sparse tensor
  return v;
}

}  // namespace

void save_for_torch_load(const std::filesystem::path& path, const c10::IValue& v) {
  std::vector<char> pickle;
  torch::jit::Pickler pickler([&](const char* data, std::size_t n) { pickle.insert(pickle.end(), data, data + n); },
                              /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
                              /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(plain(v));
  pickler.stop();

  const std::filesystem::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    caffe2::serialize::PyTorchStreamWriter archive([&](const void* data, std::size_t n) -> std::size_t {
      out.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
      return out ? n : 0;
    });
    torch::jit::writeArchiveAndTensors("data", pickle.data(), pickle.size(), pickler.tensorData(), archive);
    archive.writeEndOfFile();
    out.close();
    if (!out) throw std::runtime_error("writing " + tmp.string() + " failed (disk full?)");
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace opcheck::exec
