#include "opinfo/importer_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "judge/backend_freedoms_table.h"

namespace opcheck::opinfo {
namespace {

/// Answers the importer's one question over a pipe: it writes a JSON list of its entries' op names and a newline, and
/// reads back the JSON list of those opcheck cannot resolve. EOF (an importer that exits first) ends it quietly.
void answer_names_query(int from_child, int to_child, const UnknownNames& unknown) {
  std::string line;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(from_child, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    line.append(buf, static_cast<std::size_t>(n));
    if (line.find('\n') != std::string::npos) break;
  }
  std::vector<std::string> names;
  try {
    names = nlohmann::json::parse(line.substr(0, line.find('\n'))).get<std::vector<std::string>>();
  } catch (const std::exception&) {
  }
  const std::string answer = nlohmann::json(unknown(names)).dump() + "\n";
  // An importer that died after asking closes the pipe: EPIPE, not a SIGPIPE that would end opcheck unexplained
  // (its exit status is reported after).
  struct sigaction ignore {}, saved {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &saved);
  std::size_t off = 0;
  while (off < answer.size()) {
    const ssize_t n = write(to_child, answer.data() + off, answer.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
  sigaction(SIGPIPE, &saved, nullptr);
}

}  // namespace

int run_importer_process(std::vector<std::string> args, const std::string& pythonpath, const UnknownNames& unknown) {
  int up[2] = {-1, -1}, down[2] = {-1, -1};  // importer -> opcheck, opcheck -> importer
  const bool query = unknown && pipe(up) == 0 && pipe(down) == 0;
  auto close_all = [&] {
    for (int fd : {up[0], up[1], down[0], down[1]})
      if (fd >= 0) close(fd);
  };
  if (!query) close_all();  // none made, or only the first
  // The child's environment is made here: after fork it only calls exec (the exec layer's threads may hold locks).
  // What opcheck's judge answers itself (judge/backend_freedoms_table): the ops whose outputs it compares by shape,
  // dtype and strides only, whose samples are written; the unique ops whose order it takes from the device, for which
  // OpInfo's "order is undefined" skip is not written.
  std::string fresh, unordered;
  for (const std::string& op : uninitialised_output_ops()) fresh += (fresh.empty() ? "" : ",") + op;
  for (const UnorderedUniqueRule& r : unordered_unique_rules())
    unordered += (unordered.empty() ? "" : ",") + std::string(r.op);
  // The variables opcheck sets for the importer; a user's own of these names (and a PYTHONPATH opcheck does not
  // set) never reach it. PYTHONHASHSEED: sample functions that iterate a set of strings (meshgrid's `indexing`) draw
  // in the order of Python's string hashes, so one seed for every import makes two imports write the same bytes.
  std::vector<std::pair<std::string, std::string>> own = {{"PYTHONHASHSEED", "0"},
                                                          {"OPCHECK_OPINFO_UNINITIALISED_OPS", fresh},
                                                          {"OPCHECK_OPINFO_UNORDERED_OPS", unordered}};
  if (!pythonpath.empty()) own.emplace_back("PYTHONPATH", pythonpath);
  if (query) own.emplace_back("OPCHECK_OPINFO_RESOLVE_FDS", std::to_string(up[1]) + "," + std::to_string(down[0]));
  auto replaced = [&](const std::string& kv) {
    const std::string name = kv.substr(0, kv.find('='));
    return name == "PYTHONPATH" || name == "OPCHECK_OPINFO_RESOLVE_FDS" ||
           std::any_of(own.begin(), own.end(), [&](const auto& o) { return o.first == name; });
  };
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (!replaced(*e)) env.push_back(*e);
  for (const auto& [name, value] : own) env.push_back(name + "=" + value);
  // The second CPU run of a sample (uninitialised memory filled) runs in deterministic mode with warn_only, whose
  // "no deterministic implementation" warnings, one per call, say nothing here.
  if (std::getenv("TORCH_CPP_LOG_LEVEL") == nullptr) env.push_back("TORCH_CPP_LOG_LEVEL=ERROR");
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string cannot_run = "opcheck: error: cannot run " + args[0] + ": ";
  const pid_t pid = fork();
  if (pid < 0) {
    if (query) close_all();
    return -1;
  }
  if (pid == 0) {
    if (query) {
      close(up[0]);
      close(down[1]);
    }
    execvpe(argv[0], argv.data(), envp.data());
    const char* why = std::strerror(errno);
    [[maybe_unused]] auto w1 = write(2, cannot_run.data(), cannot_run.size());
    [[maybe_unused]] auto w2 = write(2, why, std::strlen(why));
    [[maybe_unused]] auto w3 = write(2, "\n", 1);
    _exit(127);
  }
  if (query) {
    close(up[1]);
    close(down[0]);
    answer_names_query(up[0], down[1], unknown);
    close(up[0]);
    close(down[1]);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace opcheck::opinfo
