#include "report/figures.h"

#include <cstdio>

#include "repro/bundle_layout.h"
#include "report/junit.h"
#include "common/text_escape.h"

namespace opcheck {
namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string figures_text(const CompareFigures& f) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (f.total > 0) add("mismatched " + std::to_string(f.mismatched) + " / " + std::to_string(f.total));
  if (f.max_abs_diff) add("max abs diff " + number_text(*f.max_abs_diff));
  if (f.max_rel_diff) add("max rel diff " + number_text(*f.max_rel_diff));
  if (f.pcc) add("pcc " + number_text(*f.pcc));
  return out;
}

std::string worst_element_text(const CompareFigures& f) {
  if (!f.has_worst()) return {};
  std::string index = "[";
  for (std::size_t i = 0; i < f.worst_index.size(); ++i) index += (i ? ", " : "") + std::to_string(f.worst_index[i]);
  return "worst element at " + index + "]: device " + shortest_number(*f.worst_device) + ", reference " +
         shortest_number(*f.worst_reference) + (f.worst_golden ? ", float64 " + shortest_number(*f.worst_golden) : "");
}

std::string failure_headline(const CaseRecord& rec) {
  std::string out = first_line(rec.result.message);
  auto line = [&](const std::string& text) {
    if (!text.empty()) out += (out.empty() ? "" : "\n") + text;
  };
  if (!rec.call.empty()) line("call: " + rec.call);
  line(worst_element_text(rec.result.figures));
  if (!rec.id.empty()) line("repro: opcheck repro " + repro::shell_word(rec.id));
  return out;
}

}  // namespace opcheck
