#include "host/proc_parse.h"

#include <algorithm>
#include <charconv>

namespace gpuwatch::host {
namespace {

template <typename T>
std::optional<T> ParseNumber(std::string_view s) {
  T value{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> SplitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\n') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// Calls f(line) for each line of `text`.
template <typename F>
void ForEachLine(std::string_view text, F f) {
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    f(line);
  }
}

}  // namespace

std::optional<StatInfo> ParseStat(std::string_view text) {
  std::size_t open = text.find('(');
  std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  StatInfo info;
  info.comm = std::string(text.substr(open + 1, close - open - 1));
  // Fields from 3 (state) on, so field N is rest[N - 3].
  std::vector<std::string_view> rest = SplitWhitespace(text.substr(close + 1));
  constexpr std::size_t kState = 3, kPpid = 4, kUtime = 14, kStime = 15, kStart = 22;
  if (rest.size() <= kStart - kState) return std::nullopt;
  if (rest[0].size() != 1) return std::nullopt;
  info.state = rest[0][0];
  info.ppid = ParseNumber<std::uint32_t>(rest[kPpid - kState]).value_or(0);
  auto utime = ParseNumber<std::uint64_t>(rest[kUtime - kState]);
  auto stime = ParseNumber<std::uint64_t>(rest[kStime - kState]);
  auto start = ParseNumber<std::uint64_t>(rest[kStart - kState]);
  if (!utime || !stime || !start) return std::nullopt;
  info.utime_ticks = *utime;
  info.stime_ticks = *stime;
  info.start_ticks = *start;
  return info;
}

StatusInfo ParseStatus(std::string_view text) {
  StatusInfo info;
  ForEachLine(text, [&](std::string_view line) {
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    std::string_view key = line.substr(0, colon);
    std::vector<std::string_view> values = SplitWhitespace(line.substr(colon + 1));
    if (values.empty()) return;
    if (key == "Uid") {
      info.uid = ParseNumber<std::uint32_t>(values[0]);
    } else if (key == "VmRSS") {
      info.rss_kb = ParseNumber<std::uint64_t>(values[0]);
    } else if (key == "NSpid") {
      info.nspid.clear();
      for (std::string_view v : values) {
        if (auto pid = ParseNumber<std::uint32_t>(v)) info.nspid.push_back(*pid);
      }
    }
  });
  return info;
}

std::optional<std::uint64_t> ParseStatmResidentPages(std::string_view text) {
  const std::vector<std::string_view> values = SplitWhitespace(text);
  if (values.size() < 2) return std::nullopt;
  const auto size = ParseNumber<std::uint64_t>(values[0]);
  const auto resident = ParseNumber<std::uint64_t>(values[1]);
  if (!size || !resident || *size == 0) return std::nullopt;
  return resident;
}

std::string CommandLine(std::string_view cmdline, std::string_view comm) {
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.remove_suffix(1);
  if (cmdline.empty()) return "[" + std::string(comm) + "]";
  std::string line(cmdline);
  for (char& c : line) {
    if (c == '\0') c = ' ';
  }
  return line;
}

std::optional<std::int64_t> ParseBootTime(std::string_view proc_stat) {
  std::optional<std::int64_t> btime;
  ForEachLine(proc_stat, [&](std::string_view line) {
    if (!line.starts_with("btime")) return;
    std::vector<std::string_view> f = SplitWhitespace(line);
    if (f.size() == 2 && f[0] == "btime") btime = ParseNumber<std::int64_t>(f[1]);
  });
  return btime;
}

std::optional<double> ParseUptime(std::string_view proc_uptime) {
  std::vector<std::string_view> f = SplitWhitespace(proc_uptime);
  if (f.empty()) return std::nullopt;
  // from_chars, not strtod: independent of the locale a TUI may have set.
  auto value = ParseNumber<double>(f[0]);
  if (!value || *value < 0) return std::nullopt;
  return value;
}

bool HidesProcesses(std::string_view mountinfo, std::string_view mount_point) {
  bool hides = false;
  while (!mountinfo.empty()) {
    const std::size_t nl = mountinfo.find('\n');
    std::string_view line = mountinfo.substr(0, nl);
    mountinfo.remove_prefix(nl == std::string_view::npos ? mountinfo.size() : nl + 1);
    // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
    std::vector<std::string_view> f;
    for (std::size_t at = 0; at <= line.size();) {
      const std::size_t sp = std::min(line.find(' ', at), line.size());
      f.push_back(line.substr(at, sp - at));
      at = sp + 1;
    }
    const auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || f[4] != mount_point || dash == f.end() || f.end() - dash < 4 ||
        dash[1] != "proc")
      continue;
    hides = false;  // the last mount over the point is the one seen
    for (std::string_view opts : {f[5], dash[3]}) {
      std::size_t at = opts.find("hidepid=");
      if (at == std::string_view::npos) continue;
      std::string_view v = opts.substr(at + 8);
      v = v.substr(0, v.find(','));
      hides = v != "0" && v != "off";
    }
  }
  return hides;
}

}  // namespace gpuwatch::host
