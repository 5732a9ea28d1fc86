// Parsers for the /proc text formats src/host reads. Pure: text in, values
// out; malformed or truncated text gives std::nullopt / empty fields, never an
// exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuwatch::host {

// The fields of /proc/<pid>/stat that src/host uses. Times are clock ticks
// (sysconf(_SC_CLK_TCK)).
struct StatInfo {
  std::string comm;  // may hold spaces and ')'
  char state = '?';
  std::uint32_t ppid = 0;         // field 4
  std::uint64_t utime_ticks = 0;  // field 14
  std::uint64_t stime_ticks = 0;  // field 15
  std::uint64_t start_ticks = 0;  // field 22: since boot
};
// comm is parsed between the first '(' and the LAST ')'.
std::optional<StatInfo> ParseStat(std::string_view text);

struct StatusInfo {
  std::optional<std::uint32_t> uid;     // real uid (first of the Uid line)
  std::optional<std::uint64_t> rss_kb;  // VmRSS; absent for zombies, kernel threads
  std::vector<std::uint32_t> nspid;     // NSpid: outermost namespace first
};
StatusInfo ParseStatus(std::string_view text);

// /proc/<pid>/statm's resident set in pages (its second number): what
// status's VmRSS says, at a fraction of the kernel's work. Nullopt when the
// text is not statm or the process has no memory map (a zombie or a kernel
// thread: every number 0).
std::optional<std::uint64_t> ParseStatmResidentPages(std::string_view text);

// NUL-separated argv as one line: NULs become spaces, trailing NULs dropped.
// Empty (kernel threads, zombies) gives "[comm]", as ps shows them.
std::string CommandLine(std::string_view cmdline, std::string_view comm);

// Whether the proc filesystem mounted at `mount_point`, as /proc/self/mountinfo
// (`mountinfo`) lists it, hides other users' processes (hidepid=1, 2,
// noaccess, invisible, ptraceable). False when it is not listed.
bool HidesProcesses(std::string_view mountinfo, std::string_view mount_point);

// "btime" of /proc/stat: boot time in seconds since the Unix epoch.
std::optional<std::int64_t> ParseBootTime(std::string_view proc_stat);

// First number of /proc/uptime: seconds since boot.
std::optional<double> ParseUptime(std::string_view proc_uptime);

}  // namespace gpuwatch::host
