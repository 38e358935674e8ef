// CaseRecord and RunInfo <-> JSON: the one encoding shared by the metrics file and the journal.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "opcheck/report.h"
#include "report/json_writer.h"

namespace opcheck {

/// Where a JSON value came from, for located read errors: the file and a JSON pointer (`/cases/3/outcome`).
struct JsonWhere {
  std::string file;
  std::string pointer;
  JsonWhere at(const std::string& key) const;  // escapes `~` and `/` in key as RFC 6901 says
  JsonWhere at(std::size_t i) const { return {file, pointer + "/" + std::to_string(i)}; }
};

/// One occurrence with its Result flattened in (figures and timings as sub-objects), on one line. Numbers
/// follow JsonWriter (NaN and infinities as strings); strings pass through visible_utf8, so invalid UTF-8 shows
/// as `\xNN` instead of breaking the file.
void write_case_record(JsonWriter& w, const CaseRecord& rec);
/// write_case_record on its own: one journal line (without the newline).
std::string case_record_json_line(const CaseRecord& rec);
/// What proves a stored record: SHA-256 over the header line of the file that holds it (the identity of the run that
/// wrote it), a newline and the record's JSON (its case id and dedupe key among them). The journal's bindings and the
/// results cache's entries carry it, so a record edited, cut, or moved under another header fails its check; someone
/// who rewrites the file and recomputes it is out of its scope.
std::string record_digest(const std::string& header_line, std::string_view record_json);
void write_run_info(JsonWriter& w, const RunInfo& info);

/// Inverses of the above; throw ReportError (`file: error: /pointer: what`) on a missing or mistyped field.
CaseRecord case_record_from_json(const nlohmann::json& j, const JsonWhere& where);
RunInfo run_info_from_json(const nlohmann::json& j, const JsonWhere& where);

/// Throws the located ReportError used by every JSON reader of the report stage.
[[noreturn]] void throw_json_error(const JsonWhere& where, const std::string& what, const std::string& fix = {});

}  // namespace opcheck
