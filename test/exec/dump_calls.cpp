// dump_calls OUTDIR MAX_INPUT_BYTES MANIFEST...: resolves and runs every case of the manifests on the CPU (native
// dtypes, no upcast) and writes, per case, OUTDIR/<n>.pt = (inputs before the run, output, written tensors after the
// run) via torch's pickler, and one JSON line on stdout describing the call in Python terms (values as Python
// reprs). test_python_parity.py makes the same call through torch's Python API and compares.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "exec/inputs.h"
#include "exec/op_error.h"
#include "exec/op_resolver.h"
#include "exec/pickle_io.h"

using namespace opcheck;
using namespace opcheck::exec;

namespace {

/// Device values name the device under test; the Python side runs on the CPU.
PyValue on_cpu(PyValue v) {
  if (v.kind == PyValue::Kind::Device) return PyValue::string("cpu");
  for (auto& it : v.items) it = on_cpu(it);
  return v;
}

/// Fresh storage for every output tensor: the pickler shares storages between tensors, and a view of an input in
/// another dtype (view.dtype) would come back in the input's dtype.
c10::IValue detached(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().defined() ? c10::IValue(v.toTensor().clone()) : v;
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const auto& t : v.toTensorVector()) out.push_back(t.clone());
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> out;
    for (const auto& it : v.toTupleRef().elements()) out.push_back(detached(it));
    return c10::ivalue::Tuple::create(std::move(out));
  }
  return v;
}

nlohmann::json arg_json(const ArgRef& a) {
  if (a.kind == ArgRef::Kind::Tensor) return {{"tensor", a.slots.at(0)}};
  if (a.kind == ArgRef::Kind::TensorList) return {{"tensors", a.slots}};
  return {{"py", on_cpu(a.value).repr()}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: dump_calls OUTDIR MAX_INPUT_BYTES MANIFEST...\n";
    return 2;
  }
  const std::string outdir = argv[1];
  const std::int64_t max_bytes = std::stoll(argv[2]);
  std::vector<std::string> paths(argv + 3, argv + argc);
  const ManifestSet set = load_manifests(paths);
  if (set.diagnostics.has_errors()) {
    for (const auto& d : set.diagnostics.items) std::cerr << d.format() << "\n";
    return 1;
  }
  const OpResolver resolver;
  int n = 0;
  for (const auto& m : set.manifests) {
    for (const auto& c : m.cases) {
      nlohmann::json line{{"n", n}, {"id", c.id}, {"op", c.op}};
      Resolution r = resolver.resolve(c);
      if (!r.skip_reason.empty() || !r.invocation) {
        line["status"] = r.skip_reason.empty() ? "unresolved" : "skipped";
        line["message"] = r.skip_reason.empty() ? r.error : r.skip_reason;
        std::cout << line.dump() << "\n";
        ++n;
        continue;
      }
      std::int64_t bytes = 0;
      for (const auto& s : r.call.slots) bytes += s.spec->storage_bytes();
      if (bytes > max_bytes) {
        line["status"] = "too_big";
        std::cout << line.dump() << "\n";
        ++n;
        continue;
      }
      line["resolved_op"] = r.invocation->resolved_op;
      line["decomposed"] = r.invocation->decomposed;
      nlohmann::json args = nlohmann::json::array(), kwargs = nlohmann::json::object();
      for (const auto& a : r.call.args.positional) args.push_back(arg_json(a));
      for (const auto& [k, a] : r.call.args.keywords) kwargs[k] = arg_json(a);
      line["args"] = args;
      line["kwargs"] = kwargs;

      std::vector<at::Tensor> inputs;
      for (const auto& s : r.call.slots) inputs.push_back(build_tensor(*s.spec, input_seed(c.seed, s.input, s.element)));
      std::vector<at::Tensor> run_tensors;
      const std::set<std::size_t> written(r.invocation->written_slots.begin(), r.invocation->written_slots.end());
      for (std::size_t s = 0; s < inputs.size(); ++s) run_tensors.push_back(written.count(s) ? inputs[s].clone() : inputs[s]);
      c10::IValue output;
      try {
        output = r.invocation->run(run_tensors, RunContext{});
        line["status"] = "ok";
      } catch (...) {
        const OpError e = op_error_of(std::current_exception());
        line["status"] = "raised";
        line["error_type"] = e.type;
        line["message"] = e.message;
      }
      std::vector<at::Tensor> after;
      for (auto s : r.invocation->written_slots) after.push_back(run_tensors.at(s));
      line["written"] = r.invocation->written_slots;
      save_for_torch_load(outdir + "/" + std::to_string(n) + ".pt",
                          c10::ivalue::Tuple::create({inputs, detached(output), after}));
      std::cout << line.dump() << "\n";
      ++n;
    }
  }
  return 0;
}
