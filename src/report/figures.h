// A case's comparison figures and its call in words, one wording for the console, JUnit and the HTML page.
#pragma once

#include <string>

#include "opcheck/report.h"

namespace opcheck {

/// "mismatched 3 / 64, max abs diff 0.5, max rel diff 0.25, pcc 0.99": the figures a comparison recorded (see
/// CompareFigures for what each one means); "" when it recorded none.
std::string figures_text(const CompareFigures& f);

/// "worst element at [0, 3, 7]: device 1.5, reference 1.25" (values written so that they read back exactly); ""
/// when the comparison did not locate one.
std::string worst_element_text(const CompareFigures& f);

/// The lines a failure's short account is made of, each present only when known: the message's first line, "call:
/// op(bf16[1,32,64], ...)", the worst element, "repro: opcheck repro ID". JUnit's failure message and the HTML row
/// use it, so a CI page shows the real error, the call and how to rerun it without opening the log.
std::string failure_headline(const CaseRecord& rec);

}  // namespace opcheck
