#include "report/journal.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "report/atomic_file.h"
#include "report/record_json.h"
#include "report/report_error.h"

namespace opcheck {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw ReportError(path + ": error: journal: " + what + ": " + std::strerror(err));
}

// Length of the file up to and including its last newline (0 when it has none).
long complete_length(std::FILE* f) {
  if (std::fseek(f, 0, SEEK_END) != 0) return -1;
  long end = std::ftell(f);
  const long kChunk = 4096;
  char buf[kChunk];
  while (end > 0) {
    const long start = end > kChunk ? end - kChunk : 0;
    std::fseek(f, start, SEEK_SET);
    const auto n = static_cast<long>(std::fread(buf, 1, static_cast<std::size_t>(end - start), f));
    for (long i = n - 1; i >= 0; --i)
      if (buf[i] == '\n') return start + i + 1;
    end = start;
  }
  return 0;
}

// The first line of the file (its header), without its newline; "" when the file has none.
std::string first_line(std::FILE* f) {
  std::string line;
  std::fseek(f, 0, SEEK_SET);
  for (int c; (c = std::fgetc(f)) != EOF && c != '\n';) line += static_cast<char>(c);
  return line;
}

constexpr std::string_view kBindingField = ",\"binding\":\"";  // a record's last field: its record_digest
constexpr std::size_t kBindingHex = 64;

}  // namespace

JournalWriter::JournalWriter(const std::string& path, const RunInfo* header, double fsync_interval_s)
    : path_(path),
      fsync_interval_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(fsync_interval_s))),
      last_sync_(std::chrono::steady_clock::now()) {
  file_ = std::fopen(path.c_str(), "a+b");
  if (!file_) fail(path, "cannot open for appending", errno);
  std::setvbuf(file_, nullptr, _IONBF, 0);  // lines are collected in pending_ and written in one call
  const long keep = complete_length(file_);
  std::fseek(file_, 0, SEEK_END);
  const long size = std::ftell(file_);
  if (keep >= 0 && keep < size) {
    // A killed run left half a line; it is unreadable anyway, and appending after it would spoil the next record.
    if (::ftruncate(::fileno(file_), keep) != 0) fail(path, "cannot cut off the incomplete last line", errno);
  }
  std::fseek(file_, 0, SEEK_END);
  if (header && std::ftell(file_) == 0) {
    JsonWriter w(pending_);
    w.begin_object().field("format", kJournalFormat).field("version", 1).key("run");
    write_run_info(w, *header);
    w.end_object();
    header_line_ = pending_;
    pending_ += '\n';
    write_pending();
  } else {
    header_line_ = first_line(file_);
    std::fseek(file_, 0, SEEK_END);
  }
}

JournalWriter::~JournalWriter() {
  try {
    close();
  } catch (...) {
    // A destructor cannot report; close() explicitly to see the error.
  }
}

void JournalWriter::write_pending() {
  if (!file_) throw ReportError(path_ + ": error: journal: append after close");
  if (pending_.empty()) return;
  if (std::fwrite(pending_.data(), 1, pending_.size(), file_) != pending_.size() || std::fflush(file_) != 0)
    fail(path_, "cannot append", errno);
  pending_.clear();
  const auto now = std::chrono::steady_clock::now();
  if (now - last_sync_ >= fsync_interval_) {
    ::fsync(::fileno(file_));
    last_sync_ = now;
  }
}

void JournalWriter::append(const CaseRecord& rec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) throw ReportError(path_ + ": error: journal: append after close");
  // The record, then its binding: a digest over the journal's header line (the run's identity) and the record's
  // own bytes (its case key among them), which --resume checks before it serves the record.
  std::string record = case_record_json_line(rec);
  const std::string binding = record_digest(header_line_, record);
  record.pop_back();  // its closing brace
  pending_.append(record).append(kBindingField).append(binding).append("\"}\n");
  if (pending_.size() >= kFlushBytes) write_pending();
}

void JournalWriter::flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (file_) write_pending();
}

void JournalWriter::close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!file_) return;
  write_pending();
  std::FILE* f = file_;
  file_ = nullptr;
  // No fsync at close: it would hold up the end of every run for the whole file's write-back, and the reports
  // written next carry the same results. During the run, fsync_interval_s bounds what a power cut loses.
  const bool ok = std::fflush(f) == 0;
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) fail(path_, "cannot close", err);
}

Journal read_journal(const std::string& path) {
  const std::string text = read_file_bytes(path);
  Journal j;
  std::size_t pos = 0;
  int line_no = 0;
  std::string header_line;  // the first line, when it is the header: what each record's binding covers
  while (pos < text.size()) {
    ++line_no;
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      j.truncated_tail = true;
      break;
    }
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const SourceLoc loc{path, line_no, 0};
    // A record's binding is its last field; the record it binds is the line without it.
    const std::size_t tail = kBindingField.size() + kBindingHex + 2;
    const bool has_binding = line.size() > tail &&
                             line.compare(line.size() - tail, kBindingField.size(), kBindingField) == 0 &&
                             line.compare(line.size() - 2, 2, "\"}") == 0;
    const std::string record = has_binding ? line.substr(0, line.size() - tail) + "}" : line;
    nlohmann::json v;
    try {
      v = nlohmann::json::parse(record);
    } catch (const nlohmann::json::parse_error& e) {
      j.diagnostics.error(loc, std::string("journal line is not valid JSON (") + e.what() + "); its record is lost",
                          {}, "rerun the case, or delete the line to drop it");
      continue;
    }
    try {
      const JsonWhere where{path + ":" + std::to_string(line_no), ""};
      if (v.is_object() && v.contains("format")) {
        if (v["format"] != kJournalFormat || !v.contains("run"))
          throw_json_error(where.at("format"), "not an opcheck journal header");
        j.info = run_info_from_json(v["run"], where.at("run"));
        if (line_no == 1) header_line = line;
      } else {
        CaseRecord r = case_record_from_json(v, where);
        const std::string binding = has_binding ? line.substr(line.size() - kBindingHex - 2, kBindingHex) : "";
        if (!j.info || binding != record_digest(header_line, record)) j.unbound_lines.push_back(line_no);
        else j.records.push_back(std::move(r));
      }
    } catch (const ReportError& e) {
      // The diagnostic carries the location itself; keep only the "/pointer: what" part of the message.
      std::string what = e.what();
      const auto at = what.find(": error: ");
      if (at != std::string::npos) what.erase(0, at + 9);
      j.diagnostics.error(loc, "unreadable journal record: " + what + "; its record is lost");
    }
  }
  return j;
}

}  // namespace opcheck
