#include "host/process_tree.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <system_error>

#include "host/proc_parse.h"

namespace gpuwatch::host {

std::map<std::uint32_t, std::uint32_t> ReadParents(const std::filesystem::path& proc_dir) {
  std::map<std::uint32_t, std::uint32_t> parents;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(proc_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() ||
        !std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isdigit(c); })) {
      continue;
    }
    std::ifstream in(it->path() / "stat");
    std::stringstream text;
    text << in.rdbuf();
    if (auto stat = ParseStat(text.str())) {
      parents[static_cast<std::uint32_t>(std::stoul(name))] = stat->ppid;
    }
  }
  return parents;
}

std::set<std::uint32_t> Descendants(const std::map<std::uint32_t, std::uint32_t>& parents,
                                    std::uint32_t root) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> children;
  for (const auto& [pid, ppid] : parents) children[ppid].push_back(pid);
  std::set<std::uint32_t> out{root};
  std::vector<std::uint32_t> todo{root};
  while (!todo.empty()) {
    const std::uint32_t p = todo.back();
    todo.pop_back();
    auto it = children.find(p);
    if (it == children.end()) continue;
    for (std::uint32_t c : it->second) {
      if (out.insert(c).second) todo.push_back(c);  // a cycle cannot loop forever
    }
  }
  return out;
}

}  // namespace gpuwatch::host
