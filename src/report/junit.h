// JUnit XML in pytest's xunit2 shape, one testsuite per model, so every CI reader takes it.
#pragma once

#include <string>

#include "opcheck/report.h"
#include "report/atomic_file.h"

namespace opcheck {

/// Writes the XML document. Mapping (same as pytest -o junit_family=xunit2):
///   passed -> <testcase/>; failed -> <failure>; error -> <error>; skipped -> <skipped type="pytest.skip">;
///   xfailed -> <skipped type="pytest.xfail">; xpassed -> <failure message="[XPASS(strict)] reason">.
/// Differences from pytest: <failure>/<error> also carry type= (the stage, or XPASS), per-testcase
/// <properties> hold the case's figures, and characters XML 1.0 cannot hold become `\x1b`-style escapes
/// (pytest writes `#x1B`). A deduplicated occurrence reports time 0 (its run is timed on the case that ran).
void write_junit(const RunReport& report, TextOut& out);

/// The XML document as text.
std::string junit_xml_text(const RunReport& report);

/// Writes the XML document to `path` atomically, streaming it; throws ReportError.
void write_junit_xml(const RunReport& report, const std::string& path);

/// A double as the shortest decimal text that reads back to the same value ("0.1", "1e-05", "nan", "inf").
std::string shortest_number(double v);

}  // namespace opcheck
