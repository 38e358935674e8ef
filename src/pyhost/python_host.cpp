// libopcheck_pyhost.so: the embedded CPython of a worker process. The only code that includes Python.h and links
// libpython and libtorch_python; the exec layer loads it on demand (src/exec/python_host.h).
#include <Python.h>

#include <cxxabi.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <torch/csrc/autograd/python_variable.h>
#include <nlohmann/json.hpp>

#include "exec/python_host.h"

namespace opcheck::pyhost {
namespace {

using exec::ArgRef;

/// Holds the GIL for its scope (the host releases it whenever control is back in C++).
class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

/// Owns one reference.
class Ref {
 public:
  explicit Ref(PyObject* p = nullptr) : p_(p) {}
  ~Ref() { Py_XDECREF(p_); }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  PyObject* get() const { return p_; }
  PyObject* release() {
    PyObject* p = p_;
    p_ = nullptr;
    return p;
  }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  PyObject* p_;
};

std::string str_of(PyObject* o) {
  if (o == nullptr) return "";
  Ref s(PyObject_Str(o));
  if (!s) {
    PyErr_Clear();
    return "<unprintable>";
  }
  const char* c = PyUnicode_AsUTF8(s.get());
  return c != nullptr ? c : "";
}

/// The pending Python exception with its traceback, cleared.
std::string fetch_error() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  Ref t(type), v(value), b(tb);
  if (!t) return "unknown Python error";
  Ref traceback(PyImport_ImportModule("traceback"));
  if (traceback) {
    Ref lines(PyObject_CallMethod(traceback.get(), "format_exception", "OOO", t.get(), v ? v.get() : Py_None,
                                  b ? b.get() : Py_None));
    if (lines) {
      std::string text;
      const Py_ssize_t n = PyList_Size(lines.get());
      for (Py_ssize_t i = 0; i < n; ++i) text += str_of(PyList_GetItem(lines.get(), i));
      while (!text.empty() && text.back() == '\n') text.pop_back();
      return text;
    }
  }
  PyErr_Clear();
  return str_of(t.get()) + ": " + str_of(v.get());
}

PyObject* string_list(const std::vector<std::string>& items) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(items.size()));
  for (std::size_t i = 0; i < items.size(); ++i)
    PyList_SetItem(list, static_cast<Py_ssize_t>(i), PyUnicode_FromString(items[i].c_str()));
  return list;
}

/// One argument for _opcheck_host.call: ("t", tensor) | ("l", [tensors]) | ("v", python literal).
PyObject* encode(const ArgRef& a, const std::vector<at::Tensor>& tensors) {
  switch (a.kind) {
    case ArgRef::Kind::Tensor:
      return Py_BuildValue("(sN)", "t", THPVariable_Wrap(tensors.at(a.slots.at(0))));
    case ArgRef::Kind::TensorList: {
      PyObject* list = PyList_New(static_cast<Py_ssize_t>(a.slots.size()));
      for (std::size_t i = 0; i < a.slots.size(); ++i)
        PyList_SetItem(list, static_cast<Py_ssize_t>(i), THPVariable_Wrap(tensors.at(a.slots[i])));
      return Py_BuildValue("(sN)", "l", list);
    }
    case ArgRef::Kind::Value:
      break;
  }
  return Py_BuildValue("(ss)", "v", a.value.repr().c_str());
}

/// A Python result as the dispatcher would return it: Tensor[] lists, tuples for several results, numbers.
c10::IValue to_ivalue(PyObject* o) {
  if (o == Py_None) return c10::IValue();
  if (THPVariable_Check(o)) return THPVariable_Unpack(o);
  if (PyBool_Check(o)) return c10::IValue(o == Py_True);
  if (PyLong_Check(o)) return c10::IValue(static_cast<int64_t>(PyLong_AsLongLong(o)));
  if (PyFloat_Check(o)) return c10::IValue(PyFloat_AsDouble(o));
  if (PyTuple_Check(o)) {  // torch.return_types are tuples too
    std::vector<c10::IValue> items;
    for (Py_ssize_t i = 0; i < PyTuple_Size(o); ++i) items.push_back(to_ivalue(PyTuple_GetItem(o, i)));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (PyList_Check(o)) {
    bool all_tensors = true;
    for (Py_ssize_t i = 0; i < PyList_Size(o); ++i)
      all_tensors = all_tensors && THPVariable_Check(PyList_GetItem(o, i));
    if (all_tensors) {
      c10::List<at::Tensor> list;
      for (Py_ssize_t i = 0; i < PyList_Size(o); ++i) list.push_back(THPVariable_Unpack(PyList_GetItem(o, i)));
      return list;
    }
    c10::impl::GenericList list(c10::AnyType::get());
    for (Py_ssize_t i = 0; i < PyList_Size(o); ++i) list.push_back(to_ivalue(PyList_GetItem(o, i)));
    return list;
  }
  throw exec::PythonError("TypeError", "the compiled call returned a " + std::string(Py_TYPE(o)->tp_name) +
                                           ", which opcheck cannot compare");
}

/// "name (demangled)" for the first `undefined symbol: NAME` in `text` that is a mangled C++ name; "" otherwise.
std::string demangled_undefined_symbol(const std::string& text) {
  const std::string marker = "undefined symbol: ";
  const auto at = text.find(marker);
  if (at == std::string::npos) return {};
  const auto begin = at + marker.size();
  const auto end = text.find_first_of(" \t\n,;()'\"", begin);
  const std::string symbol = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  int status = 0;
  char* name = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
  if (name == nullptr || status != 0) return {};
  std::string out = name;
  std::free(name);
  return out;
}

/// Why the interpreter could not import torch or a device module (_opcheck_host._start_error), as a person acts on it:
/// the first real error (an undefined symbol also demangled), then where (the step, the interpreter, torch's version
/// and folder), a Fix, and the whole traceback last.
std::string start_error_text(const nlohmann::json& e, const exec::PythonHostConfig& config) {
  const std::string first = e.value("first", "");
  const std::string step = e.value("step", "");
  const std::string python = e.value("python", config.python);
  const std::string torch_version = e.value("torch_version", "");
  const std::string torch_path = e.value("torch_path", "");
  // A module that explains its own failure (a setting it reads, with its Fix) keeps that Fix: it is not told to
  // repair its import.
  const std::size_t own_fix = first.find(" Fix: ");
  std::string text = first.substr(0, own_fix);
  const std::string demangled = demangled_undefined_symbol(first);
  if (!demangled.empty()) text += "\n  undefined symbol, demangled: " + demangled;
  const bool autoload = e.value("autoload", false);
  text += "\n  while: " + step;
  text += "\n  interpreter: " + python + " (Python " + e.value("python_version", "") + ")";
  text += "\n  torch: " + (torch_path.empty() ? std::string("not found on its sys.path")
                                               : (torch_version.empty() ? "unknown version" : torch_version) +
                                                     " from " + torch_path);
  std::string fix;
  const auto colon = step.find(':');
  if (own_fix != std::string::npos)
    fix = first.substr(own_fix + 6);
  else if (first.find("already been registered") != std::string::npos)
    fix = "the device was registered before this step, most likely by torch's autoload of the installed backend on "
          "`import torch`: drop --device-import (torch loads the backend itself), or set "
          "TORCH_DEVICE_BACKEND_AUTOLOAD=0 to register it only through --device-import";
  else if (!demangled.empty())
    fix = "the extension was built against another torch than this interpreter's: rebuild it against torch " +
          torch_version + " from " + torch_path + ", or run with the interpreter whose torch it was built for " +
          "(OPCHECK_PYTHON=...)" +
          (autoload ? std::string("; TORCH_DEVICE_BACKEND_AUTOLOAD=0 runs without that backend") : std::string());
  else if (torch_path.empty())
    fix = "install torch in that environment, or name the interpreter opcheck was built with in OPCHECK_PYTHON";
  else if (autoload)
    fix = "repair or reinstall that backend (the error above); TORCH_DEVICE_BACKEND_AUTOLOAD=0 runs without it "
          "(then --device-import MODULE loads it explicitly, with the same error)";
  else if (step.rfind("import ", 0) == 0 && step != "import torch")
    fix = "make `" + python + " -c 'import torch; " + step + "'` succeed (the error above)";
  else if (colon != std::string::npos && step.size() > 2 && step.compare(step.size() - 2, 2, "()") == 0)
    fix = "make `" + python + " -c 'import torch, " + step.substr(0, colon) + "; " + step.substr(0, colon) + "." +
          step.substr(colon + 1) + "'` succeed (the error above)";
  else
    fix = "make `" + python + " -c 'import torch'` succeed (the error above)";
  text += "\n  Fix: " + fix;
  return text + "\n\n" + e.value("traceback", "");
}

class Host final : public exec::PythonHost {
 public:
  bool start(const exec::PythonHostConfig& config, exec::PythonHostFacts& facts, std::string& error) override {
    PyConfig pc;
    PyConfig_InitPythonConfig(&pc);
    pc.install_signal_handlers = 0;  // SIGINT/SIGTERM stay the worker's and the parent's
    pc.parse_argv = 0;
    // The interpreter's own path makes Python find its environment (a virtual environment's pyvenv.cfg and
    // site-packages) and is what sys.executable names, so tools that start Python (inductor) start the right one.
    PyStatus status = PyConfig_SetBytesString(&pc, &pc.program_name, config.python.c_str());
    if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&pc);
    PyConfig_Clear(&pc);
    if (PyStatus_Exception(status)) {
      error = std::string("starting Python (") + config.python +
              ") failed: " + (status.err_msg != nullptr ? status.err_msg : "unknown error");
      return false;
    }
    bool ok = start_runtime(config, facts, error);
    PyEval_SaveThread();  // from here on the GIL is taken only around calls into Python
    return ok;
  }

  c10::IValue call_compiled(const std::string& python_op, const exec::CallArgs& call,
                            const std::vector<at::Tensor>& tensors, const at::Device& device) override {
    Gil gil;
    Ref args(PyList_New(0));
    for (const auto& a : call.positional) {
      Ref item(encode(a, tensors));
      PyList_Append(args.get(), item.get());
    }
    Ref kwargs(PyDict_New());
    for (const auto& [name, a] : call.keywords) {
      Ref item(encode(a, tensors));
      PyDict_SetItemString(kwargs.get(), name.c_str(), item.get());
    }
    Ref result(PyObject_CallMethod(runtime_, "call", "sOOs", python_op.c_str(), args.get(), kwargs.get(),
                                   device.str().c_str()));
    if (!result) throw exec::PythonError("RuntimeError", "opcheck's Python host failed: " + fetch_error());
    const std::string status = str_of(PyTuple_GetItem(result.get(), 0));
    if (status == "ok") return to_ivalue(PyTuple_GetItem(result.get(), 1));
    if (status == "compile") throw exec::CompileError(str_of(PyTuple_GetItem(result.get(), 1)));
    throw exec::PythonError(str_of(PyTuple_GetItem(result.get(), 1)), str_of(PyTuple_GetItem(result.get(), 2)));
  }

  std::pair<std::string, std::vector<at::Tensor>> call_module(const std::string& function, const std::string& request,
                                                              const std::vector<at::Tensor>& tensors) override {
    Gil gil;
    if (module_runtime_ == nullptr) {
      module_runtime_ = PyImport_ImportModule("_opcheck_module");
      if (module_runtime_ == nullptr)
        throw exec::PythonError("ImportError", "importing opcheck's module host failed:\n" + fetch_error());
    }
    Ref list(PyList_New(static_cast<Py_ssize_t>(tensors.size())));
    for (std::size_t i = 0; i < tensors.size(); ++i)
      PyList_SetItem(list.get(), static_cast<Py_ssize_t>(i), THPVariable_Wrap(tensors[i]));
    Ref result(PyObject_CallMethod(module_runtime_, function.c_str(), "sO", request.c_str(), list.get()));
    if (!result) throw exec::PythonError("RuntimeError", "opcheck's module host failed: " + fetch_error());
    std::pair<std::string, std::vector<at::Tensor>> out;
    out.first = str_of(PyTuple_GetItem(result.get(), 0));
    PyObject* items = PyTuple_GetItem(result.get(), 1);  // borrowed
    for (Py_ssize_t i = 0; i < PyList_Size(items); ++i) {
      PyObject* t = PyList_GetItem(items, i);
      if (!THPVariable_Check(t)) throw exec::PythonError("TypeError", "the module host returned a non-tensor");
      out.second.push_back(THPVariable_Unpack(t));
    }
    return out;
  }

  void end_case() override {
    Gil gil;
    Ref r(PyObject_CallMethod(runtime_, "end_case", nullptr));
    if (!r) PyErr_Clear();
  }

  int fork_process() override {
    Gil gil;
    PyOS_BeforeFork();
    const pid_t pid = ::fork();
    if (pid == 0)
      PyOS_AfterFork_Child();
    else
      PyOS_AfterFork_Parent();
    return pid;
  }

 private:
  bool start_runtime(const exec::PythonHostConfig& config, exec::PythonHostFacts& facts, std::string& error) {
    PyObject* path = PySys_GetObject("path");  // borrowed
    for (auto it = config.extra_paths.rbegin(); it != config.extra_paths.rend(); ++it) {
      Ref p(PyUnicode_FromString(it->c_str()));
      PyList_Insert(path, 0, p.get());
    }
    runtime_ = PyImport_ImportModule("_opcheck_host");
    if (runtime_ == nullptr) {
      error = "importing opcheck's Python host module failed:\n" + fetch_error();
      return false;
    }
    Ref imports(string_list(config.imports));
    Ref r(PyObject_CallMethod(runtime_, "start", "Oss", imports.get(), config.compile_backend.c_str(),
                              config.inductor_cache_dir.c_str()));
    if (!r) {
      error = "importing torch and the device modules failed:\n" + fetch_error();
      return false;
    }
    const auto j = nlohmann::json::parse(str_of(r.get()));
    if (j.contains("error")) {
      error = start_error_text(j.at("error"), config);
      return false;
    }
    facts.python_version = j.value("python_version", "");
    facts.torch_version = j.value("torch_version", "");
    facts.torch_path = j.value("torch_path", "");
    facts.privateuse1_name = j.value("privateuse1_name", "");
    for (const auto& [k, v] : j.at("modules").items()) facts.module_versions[k] = v.get<std::string>();
    facts.privateuse1_inductor_codegen = j.value("privateuse1_inductor_codegen", true);
    facts.module_entry_points =
        j.value("module_entry_points", std::map<std::string, std::vector<std::string>>{});
    facts.autoloaded_imports = j.value("autoloaded_imports", std::map<std::string, std::string>{});
    return true;
  }

  PyObject* runtime_ = nullptr;
  PyObject* module_runtime_ = nullptr;  // _opcheck_module, imported on the first module case
};

}  // namespace
}  // namespace opcheck::pyhost

extern "C" __attribute__((visibility("default"))) opcheck::exec::PythonHost* opcheck_create_python_host() {
  return new opcheck::pyhost::Host();
}
