// What top reads of and does to this machine's processes: their families
// (parents) for the tree, a process's cgroup and environment for its view,
// and signals. Signals go to the process top saw, never to a pid reused
// since: the pid is pinned (pidfd) and its start time checked first.
#pragma once

#include <cstdint>
#include <filesystem>

#include "gpuwatch/process_key.h"
#include "gpuwatch/status.h"
#include "tui/process_rows.h"
#include "tui/view.h"

namespace gpuwatch::tui {

Families ReadFamilies(const std::filesystem::path& proc_dir);

// The cgroup always; the environment only when the process is `uid`'s
// (otherwise environment_refused says why).
ProcessDetails ReadDetails(const std::filesystem::path& proc_dir, const ProcessKey& key,
                           std::uint32_t uid);

// Sends `signal` to the process `key` names. kNotFound when it has exited,
// kUnavailable when its pid now belongs to another process,
// kPermissionDenied when the kernel refuses.
Status SendSignal(const std::filesystem::path& proc_dir, const ProcessKey& key, int signal);

}  // namespace gpuwatch::tui
