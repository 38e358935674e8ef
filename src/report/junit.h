// JUnit XML in pytest's xunit2 shape, one testsuite per file (pytest writes one too), which every CI reader takes,
// torch-spyre's ClickHouse ingest included (it reads only the first testsuite).
#pragma once

#include <string>

#include "opcheck/report.h"
#include "report/atomic_file.h"

namespace opcheck {

/// Writes the XML document: <testsuites name="opcheck"> (pytest 9 names it too) around one
/// <testsuite name="opcheck"> holding every occurrence, the model as classname and the rest of the case id as name
/// (unique in the suite), the suite's time the run's wall time.
/// Mapping (same as pytest -o junit_family=xunit2):
///   passed -> <testcase/>; failed -> <failure>; error -> <error>; skipped -> <skipped type="pytest.skip">;
///   xfailed -> <skipped type="pytest.xfail">; strict xpassed -> <failure type="xfail_strict"
///   message="[XPASS(strict)] reason">; non-strict xpassed -> a bare <testcase/> (pytest's too), written before
///   every other testcase of its suite, with `failures` counting it and the errors (torch-spyre's ingest files
///   the first failures - (failed + errors + xpass) bare testcases as xpass); without non-strict XPASSes
///   `failures` is pytest's failed + strict XPASS.
///   not_supported -> <failure type="NOT_SUPPORTED"> (counted in `failures`: it fails the run), or with
///   --not-supported-ok <skipped type="NOT_SUPPORTED" message="not supported: first line"> (counted in `skipped`).
///   no_device_op -> <skipped type="NO_DEVICE_OP" message="passed without the device: ..."> (counted in `skipped`:
///   a pass that ran no op on the device is no device result).
///   A <failure>'s or <error>'s message is failure_headline (report/figures.h): the first line of the message, the
///   call, the worst element and the repro command; the element's text is the whole message.
/// Every testcase has `tag` properties op__<op, non-alphanumerics as _>, dtype__<torch dtype name>,
/// model__<model>. Differences from pytest: <failure>/<error> also carry type= (the stage, or xfail_strict),
/// per-testcase <properties> hold the case's figures, and characters XML 1.0 cannot hold become `\x1b`-style
/// escapes (pytest writes `#x1B`). A deduplicated occurrence reports time 0 (its run is timed on the case that ran).
void write_junit(const RunReport& report, TextOut& out);

/// `--junit-dir DIR`: one `<model>.xml` per model (each one testsuite named after the model, laid out as above,
/// the file named by junit_file_name), as torch-spyre's CI writes one file per config. Creates DIR; throws
/// ReportError.
void write_junit_dir(const RunReport& report, const std::string& dir);

/// A model's file name in --junit-dir: `<model>.xml` where the model is a file name of letters, digits, `.`, `_` and
/// `-` (not starting with a dot, at most 120 bytes); otherwise the other characters become `_`, the name is cut at
/// 120 bytes, and `-` and 8 hex digits of the model's SHA-256 follow, so distinct models never share a file.
std::string junit_file_name(const std::string& model);

/// Writes the XML document to `path` atomically, streaming it; throws ReportError.
void write_junit_xml(const RunReport& report, const std::string& path);

/// A double as the shortest decimal text that reads back to the same value ("0.1", "1e-05", "nan", "inf").
std::string shortest_number(double v);

}  // namespace opcheck
