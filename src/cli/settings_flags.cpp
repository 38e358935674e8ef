// The flags of a run's settings that `run`, `repro` and `shrink` share, registered from the settings table
// (settings/run_settings.h: setting_fields), so that a rerun line printed by one is read the same way by the others and
// no flag is spelled twice.
#include <CLI/CLI.hpp>

#include "cli/cli.h"

namespace opcheck::cli {

CLI::Validator positive_finite(const char* what) {
  return CLI::Validator([what](std::string& text) { return positive_finite_error(text, what); }, "> 0");
}

CLI::Validator whole_number(const char* what, long long least) {
  return CLI::Validator([what, least](std::string& text) { return whole_number_error(text, what, least); },
                        ">= " + std::to_string(least));
}

void add_settings_flags(CLI::App& app, RunSettings& s) {
  for (const SettingField& f : setting_fields()) {
    if (f.flag == nullptr) continue;
    const SettingField* field = &f;  // the table is static: it outlives every parse
    const auto set = [field, &s](const std::string& v) {
      if (std::string error = field->set(s, v); !error.empty()) throw CLI::ValidationError(error);
    };
    if (f.is_switch) {
      app.add_flag_function(f.flag, [set](std::int64_t) { set(""); }, f.help);
      continue;
    }
    CLI::Option* opt =
        f.repeatable
            ? app.add_option_function<std::vector<std::string>>(
                     f.flag, [set](const std::vector<std::string>& values) { for (const auto& v : values) set(v); },
                     f.help)
                  ->allow_extra_args(false)
            : app.add_option_function<std::string>(f.flag, set, f.help);
    if (*f.type_name) opt->type_name(f.type_name);
    if (*f.default_text) opt->default_str(f.default_text);
  }
}

std::vector<std::string> given_setting_flags(const CLI::App& app) {
  std::vector<std::string> given;
  for (const auto& flag : setting_flags())
    if (app.count(flag) > 0) given.push_back(flag);
  return given;
}

}  // namespace opcheck::cli
