// The processes of a job: a root pid and all its descendants, read from a
// /proc tree (parent links in /proc/<pid>/stat). Processes that come and go
// between reads are simply missed or dropped; never an error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>

namespace gpuwatch::host {

// pid -> parent pid, from every numeric entry of `proc_dir`.
std::map<std::uint32_t, std::uint32_t> ReadParents(const std::filesystem::path& proc_dir);

// `root` and every process whose parent chain reaches it. Pure.
std::set<std::uint32_t> Descendants(const std::map<std::uint32_t, std::uint32_t>& parents,
                                    std::uint32_t root);

}  // namespace gpuwatch::host
