// The refused-op list (src/common/refused_ops.*) against every operator schema of the torch opcheck is built with:
// each op whose signature looks like it reaches the machine (an argument named like a file or a socket, a Storage
// argument, a name like a global setter or a file call) must be decided: refused, or allowed with a reason.
#include <gtest/gtest.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/refused_ops.h"

namespace opcheck {
namespace {

std::set<std::string> words_of(const std::string& s) {
  std::set<std::string> out;
  std::string w;
  for (char c : s + "_") {
    if (c == '_' || c == '.' || c == ':') {
      if (!w.empty()) out.insert(w);
      w.clear();
    } else {
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

bool any_of_words(const std::string& s, const std::set<std::string>& words) {
  for (const auto& w : words_of(s))
    if (words.count(w)) return true;
  return false;
}

// Argument names that name a place outside the process; op-name words of file calls and global setters.
const std::set<std::string> kPlaceArgs{"file", "filename", "path", "dir",     "directory", "fd",      "url", "uri",
                                       "host", "port",     "socket", "addr", "address",   "command", "cmd", "env",
                                       "pid"};
const std::set<std::string> kMachineNameWords{"file",  "save",   "load",    "seed",   "thread", "threads", "print",
                                              "record", "default", "global", "env",   "socket", "process", "spawn",
                                              "exec",  "system", "open",    "write",  "read",   "dump",    "cache",
                                              "profiler"};

/// Why a schema looks machine-touching, or "" when it does not.
std::string machine_pattern(const c10::FunctionSchema& s) {
  for (const auto& a : s.arguments()) {
    if (any_of_words(a.name(), kPlaceArgs)) return "argument `" + a.name() + "`";
    if (a.type()->str().find("Storage") != std::string::npos) return "Storage argument `" + a.name() + "`";
  }
  for (const auto& r : s.returns())
    if (r.type()->str().find("Storage") != std::string::npos) return "returns a Storage";
  const std::string& full = s.name();
  if (any_of_words(full.substr(full.find("::") + 2), kMachineNameWords)) return "its name";
  return "";
}

std::string schema_name(const c10::FunctionSchema& s) {
  return s.name() + (s.overload_name().empty() ? "" : "." + s.overload_name());
}

/// Every registered schema: the dispatcher's ops (what opcheck resolves) and the JIT's (torch.ops as Python sees it).
std::map<std::string, c10::FunctionSchema> all_schemas() {
  std::map<std::string, c10::FunctionSchema> out;
  for (const auto& name : c10::Dispatcher::singleton().getAllOpNames()) {
    auto op = c10::Dispatcher::singleton().findSchema(name);
    if (op && op->hasSchema()) out.emplace(schema_name(op->schema()), op->schema());
  }
  for (const auto& op : torch::jit::getAllOperators()) out.emplace(schema_name(op->schema()), op->schema());
  return out;
}

TEST(RefusedOps, EveryMachineTouchingSchemaIsDecided) {
  const auto schemas = all_schemas();
  ASSERT_GT(schemas.size(), 2000u) << "the walk found too few schemas to be torch's";
  std::vector<std::string> undecided;
  std::size_t flagged = 0;
  for (const auto& [name, schema] : schemas) {
    const std::string why = machine_pattern(schema);
    if (why.empty()) continue;
    ++flagged;
    if (!refused_op_reason(name) && !allowed_op_reason(name)) undecided.push_back(name + " (" + why + ")");
  }
  EXPECT_GT(flagged, 10u) << "the patterns flag too little to be checking anything";
  EXPECT_TRUE(undecided.empty()) << "ops that look machine-touching and that src/common/refused_ops.cpp does not "
                                    "decide (refuse, or allow with a reason):\n  "
                                 << [&] {
                                      std::string s;
                                      for (const auto& u : undecided) s += u + "\n  ";
                                      return s;
                                    }();
}

TEST(RefusedOps, FileAndGlobalStateOpsOfThisTorchAreRefused) {
  const auto schemas = all_schemas();
  for (const char* op : {"aten::from_file", "aten::from_file.out", "aten::save", "aten::manual_seed", "aten::seed"}) {
    EXPECT_TRUE(schemas.count(op)) << op << " is not a schema of this torch: review the list against it";
    EXPECT_TRUE(refused_op_reason(op)) << op << " is not refused";
  }
}

TEST(RefusedOps, EveryListedSchemaNameIsOneOfThisTorch) {
  // A stale entry (an op torch renamed) would leave the op it meant undecided; namespaces and Python names aside,
  // every entry names a registered op.
  const auto schemas = all_schemas();
  std::set<std::string> ops;
  for (const auto& [name, schema] : schemas) ops.insert(schema.name()), ops.insert(name);
  for (const auto& d : decided_ops()) {
    const std::string& n = d.name;
    if (n.rfind("torch.", 0) == 0 || n.size() < 2 || n.compare(n.size() - 2, 2, "::") == 0) continue;
    if (n.back() == '*') {
      const std::string prefix = n.substr(0, n.size() - 1);
      EXPECT_TRUE(std::any_of(ops.begin(), ops.end(), [&](const std::string& o) { return o.rfind(prefix, 0) == 0; }))
          << n << " matches no schema of this torch";
      continue;
    }
    EXPECT_TRUE(ops.count(n)) << n << " is no schema of this torch";
  }
}

}  // namespace
}  // namespace opcheck
