// `opcheck list-models` and `opcheck list-cases`.
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include "cli/cli.h"
#include "common/text_escape.h"

namespace opcheck::cli {
namespace {

int cmd_list_models(const ManifestFlags& f) {
  Loaded l = load_and_select(f);
  print_diagnostics(l.set.diagnostics, /*errors_only=*/true);
  // Names and paths are shown with their control characters made visible, never run by the terminal.
  std::vector<std::pair<std::string, std::string>> shown;  // model, path
  std::size_t name_w = 5, file_w = 4;
  for (const auto& m : l.set.manifests) {
    shown.emplace_back(printable_text(m.model), printable_text(m.path));
    name_w = std::max(name_w, shown.back().first.size());
    file_w = std::max(file_w, shown.back().second.size());
  }
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const Manifest& m = l.set.manifests[i];
    const auto& [model, path] = shown[i];
    std::string kind = m.is_template ? "template" : m.variant.empty() ? "base" : "variant " + m.variant;
    std::cout << model << std::string(name_w + 2 - model.size(), ' ') << path
              << std::string(file_w + 2 - path.size(), ' ') << m.cases.size() << " cases  " << kind << "\n";
  }
  if (l.set.manifests.empty()) {
    std::cerr << "opcheck: no manifests found\n";
    return l.set.diagnostics.has_errors() ? kInterrupted : kNoTests;
  }
  return l.set.diagnostics.has_errors() ? kInterrupted : kOk;
}

int cmd_list_cases(const ManifestFlags& f, bool json) {
  Loaded l = load_and_select(f);
  print_diagnostics(l.diagnostics, /*errors_only=*/true);
  if (l.selected.usage_error) return kUsageError;
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Case* c : l.selected.cases)
      out.push_back({{"id", c->id},
                     {"model", c->model},
                     {"name", c->name},
                     {"op", c->op},
                     {"dtype", dtype_name(case_dtype(*c))},
                     {"marks", c->marks},
                     {"file", c->loc.file},
                     {"line", c->loc.line}});
    std::cout << out.dump(1) << "\n";
  } else {
    std::vector<std::pair<std::string, std::string>> shown;  // id, op: control characters made visible
    std::size_t id_w = 0, op_w = 0;
    for (const Case* c : l.selected.cases) {
      shown.emplace_back(printable_text(c->id), printable_text(c->op));
      id_w = std::max(id_w, shown.back().first.size());
      op_w = std::max(op_w, shown.back().second.size());
    }
    std::string out;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const auto& [id, op] = shown[i];
      out += id;
      out.append(id_w + 2 - id.size(), ' ');
      out += op;
      out.append(op_w + 2 - op.size(), ' ');
      const Case* c = l.selected.cases[i];
      out += "(" + printable_text(c->loc.file) + ":" + std::to_string(c->loc.line) + ")\n";
    }
    // An empty listing says so, as pytest's --collect-only does.
    if (l.selected.cases.empty())
      out = "0 selected" +
            (l.selected.deselected ? " (" + std::to_string(l.selected.deselected) + " deselected)" : "") + "\n";
    std::cout << out;
  }
  if (l.diagnostics.has_errors()) return kInterrupted;
  return l.selected.cases.empty() ? kNoTests : kOk;
}

}  // namespace

void add_list_commands(CLI::App& app, Commands& commands) {
  auto models = std::make_shared<ManifestFlags>();
  auto* list_models = app.add_subcommand("list-models", "One line per manifest: model, file, case count, variant");
  list_models->footer("Example: opcheck list-models   # the manifests shipped with opcheck; --manifests PATH lists yours");
  add_manifest_flags(*list_models, *models, false);
  commands.add(list_models, [models] { return cmd_list_models(*models); });

  auto cases = std::make_shared<ManifestFlags>();
  auto json = std::make_shared<bool>(false);
  auto* list_cases = app.add_subcommand("list-cases", "One line per selected case: model::case  op  (path:line)");
  list_cases->footer("Example: opcheck list-cases --model gpt_oss -m \"attention and not constant\" -k linear\n"
                     "         opcheck list-cases 'gpt_oss::torch.add.*' --deselect gpt_oss::torch.add.3");
  add_manifest_flags(*list_cases, *cases, true);
  add_case_id_args(*list_cases, *cases);
  list_cases->add_flag("--json", *json, "Print a JSON array instead");
  commands.add(list_cases, [cases, json] { return cmd_list_cases(*cases, *json); });
}

}  // namespace opcheck::cli
