// The processes a process leaves behind: its children as /proc lists them, and ending them when it ends.
#pragma once

#include <sys/types.h>

#include <vector>

namespace opcheck {

/// The pids of the children of `parent`, from /proc (each entry's stat names its parent); none when /proc cannot be
/// read.
std::vector<pid_t> child_processes(pid_t parent);

/// Ends (SIGKILL) and reaps every child of this process, round by round: a process opcheck is the reaper of
/// (PR_SET_CHILD_SUBREAPER) becomes its child when its own parent ends, so each round hands the next ones over. For
/// the end of a run, whose workers are done: what is left is what something else started (a --device-import
/// module's helper) and would outlive opcheck in its process group.
void end_child_processes();

}  // namespace opcheck
