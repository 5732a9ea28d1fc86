#include "children.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace gpuwatch::fake_nvml {
namespace {

// A process may exit while its /proc files are read (ESRCH): the read error
// ends the text. (Reading through istreambuf_iterator let libstdc++'s
// exception out of the library and aborted the program that loaded it.)
std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// GPUWATCH_SWEEP_VALUE and CUDA_VISIBLE_DEVICES of a process (NUL-separated).
void ReadEnvironment(const std::filesystem::path& dir, Child& child) {
  const std::string env = ReadAll(dir / "environ");
  std::size_t at = 0;
  while (at < env.size()) {
    const auto end = std::min(env.find('\0', at), env.size());
    const std::string_view kv(env.data() + at, end - at);
    if (kv.starts_with("GPUWATCH_SWEEP_VALUE=")) {
      const std::string value(kv.substr(21));
      char* stop = nullptr;
      const double v = std::strtod(value.c_str(), &stop);
      if (!value.empty() && *stop == '\0') child.sweep_value = v;
    } else if (kv.starts_with("CUDA_VISIBLE_DEVICES=")) {
      child.cuda_visible_devices = std::string(kv.substr(21));
    }
    at = end + 1;
  }
}

}  // namespace

std::vector<Child> ChildrenOf(unsigned parent) {
  std::vector<Child> out;
  const std::string wanted = std::to_string(parent);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const std::string stat = ReadAll(entry.path() / "stat");
    // pid (comm) state ppid ... starttime is field 22; comm may hold spaces.
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 > stat.size()) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string state, ppid, skip;
    fields >> state >> ppid;
    if (ppid != wanted) continue;
    for (int i = 5; i < 22 && fields >> skip;) ++i;
    Child c;
    if (!(fields >> c.start_ticks) || state == "Z") continue;
    c.pid = static_cast<unsigned>(std::stoul(name));
    ReadEnvironment(entry.path(), c);
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [](const Child& a, const Child& b) {
    return a.start_ticks != b.start_ticks ? a.start_ticks < b.start_ticks : a.pid < b.pid;
  });
  return out;
}

std::vector<Child> CallerChildren() {
  static std::mutex mu;
  static std::chrono::steady_clock::time_point read_at;
  static std::vector<Child> children;
  std::lock_guard<std::mutex> lock(mu);
  const auto now = std::chrono::steady_clock::now();
  if (read_at == std::chrono::steady_clock::time_point() ||
      now - read_at >= std::chrono::milliseconds(200)) {
    read_at = now;
    children = ChildrenOf(static_cast<unsigned>(getpid()));
  }
  return children;
}

bool SeesDevice(const Child& child, unsigned index, const std::string& uuid) {
  if (!child.cuda_visible_devices) return true;
  const std::string& list = *child.cuda_visible_devices;
  std::size_t at = 0;
  while (at <= list.size()) {
    const auto comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    if (item == std::to_string(index) || (!uuid.empty() && item == uuid)) return true;
    at = comma + 1;
  }
  return false;
}

}  // namespace gpuwatch::fake_nvml
