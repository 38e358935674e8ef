// dump_inputs SPECS.json OUTDIR — builds tensors the way `opcheck run` does and writes their bytes, so tests in
// other languages (test_python_parity.py) can check Python parity, layouts and cross-process determinism.
//
// SPECS.json: one object or an array of objects
//   {"shape": [2, 3], "stride": [1, 2], "storage_offset": 0, "dtype": "bf16", "init": "rand",
//    "init_args": {"low": -1.0, "high": 1}, "data": [[1, 2, 3], [4, 5, 6]], "file": "/abs/t.pt", "seed": 7}
// For spec i it writes OUTDIR/i.bin (logical bytes, contiguous) and OUTDIR/i.storage (the whole storage, from
// element 0 to its end) and prints one JSON line: {"index", "digest", "shape", "stride", "storage_offset",
// "storage_elements", "dtype"} or {"index", "error"}. Exit status 0 unless the arguments are unusable.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "exec/inputs.h"

namespace {

using opcheck::PyValue;

PyValue to_py(const nlohmann::json& j) {
  if (j.is_null()) return PyValue::none();
  if (j.is_boolean()) return PyValue::boolean(j.get<bool>());
  if (j.is_number_integer()) return PyValue::integer(j.get<std::int64_t>());
  if (j.is_number()) return PyValue::real(j.get<double>());
  if (j.is_string()) {
    // JSON has no inf/nan: they travel as strings.
    const auto s = j.get<std::string>();
    if (s == "inf" || s == "-inf" || s == "nan") return PyValue::real(std::stod(s));
    return PyValue::string(s);
  }
  std::vector<PyValue> items;
  for (const auto& e : j) items.push_back(to_py(e));
  return PyValue::sequence(PyValue::Kind::List, std::move(items));
}

opcheck::InitKind init_of(const std::string& s) {
  using K = opcheck::InitKind;
  static const std::pair<const char*, K> names[] = {{"rand", K::Rand},       {"randn", K::Randn},   {"zeros", K::Zeros},
                                                     {"ones", K::Ones},       {"arange", K::Arange}, {"randint", K::Randint},
                                                     {"uniform", K::Uniform}, {"data", K::Data},     {"xavier", K::Xavier},
                                                     {"file", K::File},       {"eye", K::Eye},       {"full", K::Full}};
  for (const auto& [n, k] : names)
    if (s == n) return k;
  throw std::runtime_error("unknown init '" + s + "'");
}

opcheck::TensorSpec spec_of(const nlohmann::json& j) {
  opcheck::TensorSpec spec;
  spec.shape = j.at("shape").get<std::vector<std::int64_t>>();
  spec.stride = j.value("stride", std::vector<std::int64_t>{});
  spec.storage_offset = j.value("storage_offset", std::int64_t{0});
  const std::string dtype = j.value("dtype", std::string("fp32"));
  auto dt = opcheck::parse_dtype(dtype);
  if (!dt) throw std::runtime_error("unknown dtype '" + dtype + "'");
  spec.dtype = *dt;
  spec.dtype_spelling = dtype;
  spec.init = init_of(j.value("init", std::string("rand")));
  if (j.contains("init_args"))
    for (const auto& [k, v] : j.at("init_args").items()) spec.init_args.emplace_back(k, to_py(v));
  if (j.contains("data")) spec.data = to_py(j.at("data"));
  spec.file = j.value("file", std::string());
  return spec;
}

void write_bytes(const std::string& path, const at::Tensor& t) {
  std::ofstream out(path, std::ios::binary);
  if (t.numel() > 0) out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: dump_inputs SPECS.json OUTDIR\n";
    return 2;
  }
  nlohmann::json specs;
  try {
    std::ifstream in(argv[1]);
    specs = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    std::cerr << "dump_inputs: cannot read " << argv[1] << ": " << e.what() << "\n";
    return 2;
  }
  if (!specs.is_array()) specs = nlohmann::json::array({specs});
  const std::string outdir = argv[2];
  for (std::size_t i = 0; i < specs.size(); ++i) {
    nlohmann::json line = {{"index", i}};
    try {
      const opcheck::TensorSpec spec = spec_of(specs[i]);
      const at::Tensor t = opcheck::exec::build_tensor(spec, specs[i].value("seed", std::int64_t{0}));
      write_bytes(outdir + "/" + std::to_string(i) + ".bin", t.contiguous());
      const std::int64_t storage_elements =
          static_cast<std::int64_t>(t.storage().nbytes()) / static_cast<std::int64_t>(t.element_size());
      at::Tensor storage = t.as_strided({storage_elements}, {1}, 0);
      write_bytes(outdir + "/" + std::to_string(i) + ".storage", storage.contiguous());
      line["digest"] = opcheck::exec::tensor_digest(t);
      line["shape"] = t.sizes().vec();
      line["stride"] = t.strides().vec();
      line["storage_offset"] = t.storage_offset();
      line["storage_elements"] = storage_elements;
      line["dtype"] = std::string(c10::toString(t.scalar_type()));
    } catch (const std::exception& e) {
      line["error"] = e.what();
    }
    std::cout << line.dump() << "\n";
  }
  return 0;
}
