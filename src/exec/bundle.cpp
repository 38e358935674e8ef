#include "exec/bundle.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/text_escape.h"
#include "exec/engine.h"
#include "exec/pickle_io.h"
#include "manifest/manifest_writer.h"
#include "repro/bundle_layout.h"
#include "repro/reproduction.h"

namespace fs = std::filesystem;

namespace opcheck::exec {

using manifest_text::TensorSource;
using repro::bundle_folder_name;
using repro::kBundleDevice;
using repro::kBundleDeviceWritten;
using repro::kBundleFacts;
using repro::kBundleManifest;
using repro::kBundleReadme;
using repro::kBundleReference;
using repro::kBundleReferenceWritten;
using repro::shell_word;

namespace {

// ---- Files ---------------------------------------------------------------------------------------------------

/// Writes `bytes` to `path` through a temporary file and a rename: a reader never sees half a file, and a staged
/// hard link to the manifest's own .pt file is replaced rather than written through.
void write_file(const fs::path& path, const char* data, std::size_t size) {
  const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out.write(data, static_cast<std::streamsize>(size));
    if (!out) throw std::runtime_error("writing " + tmp.string() + " failed (disk full?)");
  }
  fs::rename(tmp, path);
}

void write_file(const fs::path& path, const std::string& text) { write_file(path, text.data(), text.size()); }

/// torch.save's format, which Python's torch.load and opcheck's `init: file` read.
void save_pt(const fs::path& path, const c10::IValue& v) { save_for_torch_load(path, v); }

c10::IValue tensor_list(const std::vector<at::Tensor>& ts) {
  c10::List<at::Tensor> list;
  for (const auto& t : ts) list.push_back(t);
  return list;
}

/// Hard link (cheap, same file system) or copy of a manifest's .pt file into the bundle.
void place_copy(const std::string& from, const fs::path& to) {
  std::error_code ec;
  fs::remove(to, ec);
  fs::create_hard_link(from, to, ec);
  if (ec) fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

/// The opcheck binary this process runs as (workers are forks of it), or plain `opcheck` from elsewhere (tests).
std::string opcheck_command() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return !ec && exe.filename() == "opcheck" ? exe.string() : std::string("opcheck");
}

std::string figures_text(const CompareFigures& f) {
  std::ostringstream os;
  bool any = false;
  auto put = [&](const char* name, const std::optional<double>& v) {
    if (!v) return;
    os << (any ? ", " : "") << name << " " << PyValue::real(*v).repr();
    any = true;
  };
  put("max_abs_diff", f.max_abs_diff);
  put("max_rel_diff", f.max_rel_diff);
  put("pcc", f.pcc);
  if (f.total > 0) os << (any ? ", " : "") << "mismatched " << f.mismatched << " / " << f.total;
  return os.str();
}

nlohmann::json optional_number(const std::optional<double>& v) {
  if (!v) return nullptr;
  if (std::isnan(*v)) return "nan";
  if (std::isinf(*v)) return *v > 0 ? "inf" : "-inf";
  return *v;
}

std::string describe_tensor(const at::Tensor& t) {
  std::ostringstream os;
  os << t.scalar_type() << " " << t.sizes() << " stride " << t.strides() << " offset " << t.storage_offset();
  return os.str();
}

}  // namespace

std::vector<std::string> rerun_device_args(const ExecOptions& opts) { return opts.rerun; }

FailureBundles::FailureBundles(std::string dir, const ExecOptions& opts, const ExecInfo& info)
    : dir_(fs::absolute(dir).lexically_normal().string()), opts_(opts), info_(info) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) std::cerr << "opcheck: cannot create --save-failures folder " << dir_ << ": " << ec.message() << "\n";
}

namespace {

/// What the README and failure.json say about one bundle.
struct BundleFacts {
  const Case* c = nullptr;
  const Result* r = nullptr;  // null while staged
  fs::path folder;
  std::vector<std::string> device_args;
  std::vector<std::pair<std::string, std::string>> environment;
  std::vector<std::pair<std::string, std::string>> files;  // name -> what it holds
  std::vector<std::size_t> written_slots;                   // tensor slots the op writes in place
  const ExecInfo* info = nullptr;
};

/// Where the case was written: the manifest's absolute path and line.
std::string source_of(const Case& c) {
  std::error_code ec;
  const fs::path p = c.loc.file.empty() ? fs::path() : fs::absolute(c.loc.file, ec);
  return (ec ? c.loc.file : p.lexically_normal().string()) + ":" + std::to_string(c.loc.line);
}

std::string rerun_command(const BundleFacts& f) {
  std::vector<std::string> words{opcheck_command(), "run"};
  for (auto& w : repro::input_words({(f.folder / kBundleManifest).string()})) words.push_back(std::move(w));
  words.insert(words.end(), f.device_args.begin(), f.device_args.end());
  words.push_back("-v");
  return repro::environment_prefix(f.environment) + repro::join_words(words);
}

std::string python_command(const BundleFacts& f) {
  std::string cmd = shell_word(opcheck_command()) + " repro --bundle " + shell_word(f.folder.string()) + " --python";
  for (std::size_t i = 0; i + 1 < f.device_args.size(); i += 2)
    if (f.device_args[i] == "--device" || f.device_args[i] == "--device-lib")
      cmd += " " + f.device_args[i] + " " + shell_word(f.device_args[i + 1]);
  return cmd + " > repro.py && python3 repro.py";
}

std::string readme_text(const BundleFacts& f) {
  const Case& c = *f.c;
  std::ostringstream os;
  os << "# opcheck failure bundle: " << printable_text(c.id) << "\n\n";  // a line break would end the heading
  if (f.r) {
    os << "- stage: " << stage_name(f.r->stage) << " (" << outcome_name(f.r->outcome) << ")\n";
  } else {
    os << "- stage: the run did not finish this case. The worker running it crashed or was killed (timeout), or "
          "the run was stopped: see the run's report for its stage. The inputs are the case's recipe, which "
          "rebuilds the same tensors bit for bit.\n";
  }
  os << "- op: " << printable_text(c.op);
  if (f.r && !f.r->resolved_op.empty())
    os << " (" << f.r->resolved_op << (f.r->decomposed ? ", decomposed" : "") << ")";
  os << "\n- device: " << f.info->device_name << " (" << f.info->device
     << (f.info->device_lib.empty() ? "" : ", " + f.info->device_lib) << "), libtorch " << f.info->torch_version
     << "\n";
  if (f.r) {
    const std::string figures = figures_text(f.r->figures);
    if (!figures.empty()) os << "- figures: " << figures << "\n";
  }
  os << "- from: " << printable_text(source_of(c)) << "\n";
  for (const auto& [k, v] : f.environment) os << "- environment: " << k << "=" << printable_text(v) << "\n";
  if (f.r && !f.r->message.empty()) os << "\n## Message\n\n```\n" << f.r->message << "\n```\n";
  os << "\n## Files\n\n";
  os << "- `" << kBundleManifest << "`: the case alone"
     << (f.r && !f.files.empty() ? "; its tensor inputs are the exact tensors the run used" : "") << "\n";
  for (const auto& [name, what] : f.files) os << "- `" << name << "`: " << what << "\n";
  os << "\nThe .pt files are torch.save's format: `torch.load(path, weights_only=True)` in Python reads them (views "
        "keep their stride and storage offset).\n";
  os << "\n## Rerun\n\nThis case alone, on the same device (same stage and figures):\n\n```sh\n"
     << rerun_command(f) << "\n```\n\n"
     << "A standalone PyTorch script that builds the same inputs and calls the op on cpu and on the device:\n\n```sh\n"
     << python_command(f) << "\n```\n";
  return os.str();
}

std::string facts_json(const BundleFacts& f) {
  using nlohmann::json;
  const Case& c = *f.c;
  json j;
  j["case_id"] = c.id;
  j["model"] = c.model;
  j["name"] = c.name;
  j["op"] = c.op;
  j["source"] = source_of(c);
  j["finished"] = f.r != nullptr;
  if (f.r) {
    j["stage"] = stage_name(f.r->stage);
    j["outcome"] = outcome_name(f.r->outcome);
    j["message"] = f.r->message;
    j["resolved_op"] = f.r->resolved_op;
    j["figures"] = {{"max_abs_diff", optional_number(f.r->figures.max_abs_diff)},
                    {"max_rel_diff", optional_number(f.r->figures.max_rel_diff)},
                    {"pcc", optional_number(f.r->figures.pcc)},
                    {"mismatched", f.r->figures.mismatched},
                    {"total", f.r->figures.total}};
    // The worst element, as the run's record has it, so the bundle's figures are the record's.
    if (f.r->figures.has_worst()) {
      j["figures"]["worst_index"] = f.r->figures.worst_index;
      j["figures"]["worst_device"] = optional_number(f.r->figures.worst_device);
      j["figures"]["worst_reference"] = optional_number(f.r->figures.worst_reference);
      if (f.r->figures.worst_golden) j["figures"]["worst_golden"] = *f.r->figures.worst_golden;
    }
    if (!f.r->reference_made.empty()) j["reference_made"] = f.r->reference_made;
    if (!f.r->judge_notes.empty()) j["judge_notes"] = f.r->judge_notes;
    j["input_digests"] = f.r->input_digests;
  } else {
    j["stage"] = nullptr;
  }
  j["device"] = f.info->device;
  j["device_name"] = f.info->device_name;
  j["device_lib"] = f.info->device_lib;
  j["torch_version"] = f.info->torch_version;
  j["rerun_device_args"] = f.device_args;
  j["environment"] = json::object();
  for (const auto& [k, v] : f.environment) j["environment"][k] = v;
  j["written_slots"] = f.written_slots;
  j["files"] = json::object();
  for (const auto& [name, what] : f.files) j["files"][name] = what;
  j["rerun_command"] = rerun_command(f);
  return j.dump(2) + "\n";
}

/// The manifest header: where the case came from and what its inputs are.
std::string manifest_comment(const Case& c, bool saved) {
  return "opcheck failure bundle of " + c.id + " (README.md says why it failed and how to rerun it).\n" +
         (saved ? "Tensor inputs are the exact tensors the failing run used (inputs/*.pt).\n"
                : "Tensor inputs are the case's recipe, which rebuilds the same tensors.\n") +
         "Original: " + source_of(c);
}

/// The recipe form of every tensor; a manifest's own .pt inputs are placed into the bundle.
std::vector<std::vector<TensorSource>> recipe_tensors(const Case& c, const fs::path& folder) {
  std::vector<std::vector<TensorSource>> out(c.inputs.size());
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const Input& in = c.inputs[i];
    if (in.kind == Input::Kind::Value) continue;
    const bool list = in.kind == Input::Kind::TensorList;
    const std::size_t n = list ? in.list.size() : 1;
    for (std::size_t j = 0; j < n; ++j) {
      const TensorSpec& spec = list ? in.list[j] : in.tensor;
      TensorSource b;
      if (spec.init == InitKind::File) {
        // The manifest's own file, in its own format (.pt, .npy or .safetensors).
        const fs::path file = repro::bundle_input_file(i, j, list);
        b.file = fs::path(file).replace_extension(fs::path(spec.file).extension()).string();
        place_copy(spec.file_source(), folder / b.file);
      }
      out[i].push_back(b);
    }
  }
  return out;
}

}  // namespace

void FailureBundles::stage(const Case& c) {
  const fs::path folder = fs::path(dir_) / bundle_folder_name(c.id);
  try {
    std::error_code ec;
    fs::remove_all(folder, ec);  // an older bundle of the case: this run's replaces it
    fs::create_directories(folder / "inputs");
    BundleFacts f;
    f.c = &c;
    f.folder = folder;
    f.device_args = rerun_device_args(opts_);
    f.environment = opts_.rerun_environment;
    f.info = &info_;
    write_file(folder / kBundleManifest,
               manifest_text::case_manifest(c, recipe_tensors(c, folder), manifest_comment(c, false)));
    write_file(folder / kBundleFacts, facts_json(f));
    write_file(folder / kBundleReadme, readme_text(f));
  } catch (const std::exception& e) {
    std::cerr << "opcheck: cannot stage the failure bundle of " << c.id << " in " << folder.string() << ": "
              << e.what() << "\n";
  }
}

void FailureBundles::finish(const Case& c, const Result& r, const CaseEvidence& ev) {
  const fs::path folder = fs::path(dir_) / bundle_folder_name(c.id);
  std::error_code ec;
  if (r.outcome != Outcome::Failed && r.outcome != Outcome::Error && r.outcome != Outcome::NotSupported) {
    fs::remove_all(folder, ec);
    return;
  }
  try {
    fs::create_directories(folder / "inputs");
    BundleFacts f;
    f.c = &c;
    f.r = &r;
    f.folder = folder;
    f.device_args = rerun_device_args(opts_);
    f.environment = opts_.rerun_environment;
    f.info = &info_;
    f.written_slots = ev.written_slots;

    // Inputs: the exact host tensors when they were built, else the recipe (INVALID_CASE, FAILED_INPUT).
    std::vector<std::vector<TensorSource>> tensors;
    const bool saved = !ev.inputs.empty() && ev.inputs.size() == ev.slots.size();
    if (saved) {
      tensors.resize(c.inputs.size());
      for (std::size_t s = 0; s < ev.slots.size(); ++s) {
        const TensorSlot& slot = ev.slots[s];
        const bool list = c.inputs.at(slot.input).kind == Input::Kind::TensorList;
        TensorSource b{repro::bundle_input_file(slot.input, slot.element, list), true};
        save_pt(folder / b.file, ev.inputs[s]);
        f.files.emplace_back(b.file, "input " + std::to_string(slot.input) +
                                         (list ? "[" + std::to_string(slot.element) + "]" : std::string()) + ": " +
                                         describe_tensor(ev.inputs[s]) +
                                         (s < r.input_digests.size() ? ", sha256 " + r.input_digests[s] : ""));
        auto& row = tensors[slot.input];
        if (row.size() <= slot.element) row.resize(slot.element + 1);
        row[slot.element] = b;
      }
    } else {
      tensors = recipe_tensors(c, folder);
    }
    write_file(folder / kBundleManifest, manifest_text::case_manifest(c, tensors, manifest_comment(c, saved)));

    // Outputs: what the reference and the device computed, as the op returned it.
    auto written_note = [&] {
      std::string s;
      for (auto slot : ev.written_slots) s += (s.empty() ? "" : ", ") + std::to_string(ev.slots.at(slot).input);
      return s;
    };
    if (ev.reference && !ev.reference->error) {
      save_pt(folder / kBundleReference, ev.reference->output);
      f.files.emplace_back(kBundleReference, "the CPU reference output");
      if (!ev.reference->written.empty()) {
        save_pt(folder / kBundleReferenceWritten, tensor_list(ev.reference->written));
        f.files.emplace_back(kBundleReferenceWritten, "the inputs the reference wrote in place (inputs " +
                                                          written_note() + "), after the run");
      }
    }
    if (!ev.device_runs.empty()) {
      save_pt(folder / kBundleDevice, ev.device_runs.front().output);
      f.files.emplace_back(kBundleDevice, "the device output (run 1), moved to the host");
      if (!ev.device_runs.front().written.empty()) {
        save_pt(folder / kBundleDeviceWritten, tensor_list(ev.device_runs.front().written));
        f.files.emplace_back(kBundleDeviceWritten, "the inputs the device wrote in place (inputs " + written_note() +
                                                       "), after run 1");
      }
      if (r.stage == Stage::NONDETERMINISTIC && ev.device_runs.size() > 1) {
        const std::string name = "device_run" + std::to_string(ev.device_runs.size()) + ".pt";
        save_pt(folder / name, ev.device_runs.back().output);
        f.files.emplace_back(name, "the device output of the run that differed from run 1");
      }
    }
    write_file(folder / kBundleFacts, facts_json(f));
    write_file(folder / kBundleReadme, readme_text(f));
    std::cerr << "opcheck: failure bundle of " << c.id << ": " << folder.string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "opcheck: cannot write the failure bundle of " << c.id << " in " << folder.string() << ": "
              << e.what() << "\n";
  }
}

}  // namespace opcheck::exec
