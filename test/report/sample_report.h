// Hand-built runs for the report tests: every outcome, dedupe across models, and text that XML and JSON
// must not lose. The expected figures are spelled out in report_tests.cpp.
#pragma once

#include <string>

#include "opcheck/report.h"

namespace opcheck::testing {

/// Two models (llama: 7 occurrences, granite: 3), all six outcomes, two deduplicated occurrences.
RunReport sample_report();

/// The run equivalent to test/report/pytest_parity/parity_suite.py (one model "parity_suite", one case per
/// pytest outcome, each with captured stderr), for element/attribute parity with pytest's JUnit XML.
RunReport parity_report();

/// What write_junit_xml writes for `report`, read back from a file in a fresh temporary folder: the tests read the
/// document users get.
std::string written_junit_xml(const RunReport& report);

/// What write_metrics_json writes for `report`, read back as written_junit_xml does.
std::string written_metrics_json(const RunReport& report);

/// A run with what issue 22 added to the records: a not_supported case, a failure with its call and worst element,
/// and a warning (for the schema check under Ajv).
RunReport verdicts_report();

}  // namespace opcheck::testing
