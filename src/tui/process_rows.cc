#include "tui/process_rows.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "core/ascii.h"

namespace gpuwatch::tui {
namespace {

std::optional<double> Number(const Reading& r) {
  if (!r.is_number()) return std::nullopt;
  return r.number();
}

std::string Where(const HostProcess& h) {
  if (!h.slurm_job_id.empty()) return "slurm:" + h.slurm_job_id;
  if (!h.pod.empty()) return h.pod_namespace + "/" + h.pod;
  if (!h.pod_uid.empty()) return "pod:" + h.pod_uid.substr(0, 8);
  if (!h.container_id.empty()) {
    return (h.container_runtime.empty() ? std::string("ctr") : h.container_runtime) + ":" +
           h.container_id.substr(0, 12);
  }
  return "";
}

ProcessRow RowOf(const HostView& host, const DeviceSample& d, const ProcessSample& p,
                 std::optional<int> mig, std::chrono::system_clock::time_point now) {
  const HostState& s = host.state;
  ProcessRow r;
  r.key = KeyOf(p);
  r.gpu = d.index;
  r.mig = mig;
  r.sample = &p;
  r.user = p.host.user;
  r.command = p.host.command.empty() ? p.host.name : p.host.command;
  if (p.host.visibility == HostProcess::Visibility::kOtherPidNs) {
    r.command = "(pid in another namespace)";
  } else if (p.host.visibility == HostProcess::Visibility::kExited && r.command.empty()) {
    r.command = "(exited)";
  }
  r.where = Where(p.host);
  r.memory = Number(p.fields[FieldId::kProcessUsedMemoryBytes]);
  r.sm = Number(p.fields[FieldId::kProcessSmUtilizationRatio]);
  r.cpu = Number(p.fields[FieldId::kProcessCpuRatio]);
  r.rss = Number(p.fields[FieldId::kProcessRssBytes]);
  if (p.host.start_time) r.elapsed = now - *p.host.start_time;
  for (const ProcessFrameworkMemory& f : s.framework) {
    if (f.pid != p.pid || f.gpu != d.index) continue;
    r.framework = f.framework;
    if (auto it = f.bytes.find("allocated"); it != f.bytes.end())
      r.framework_allocated = it->second;
    if (auto it = f.bytes.find("reserved"); it != f.bytes.end()) r.framework_reserved = it->second;
  }
  for (const leaks::LeakReport& l : s.leaks) {
    if (l.subject.gpu == d.index && l.subject.process && l.subject.process->pid == p.pid &&
        (l.estimate.suspected || l.estimate.forecast)) {
      r.leaking = true;
    }
  }
  for (const Preallocation& pre : s.preallocated) {
    if (pre.gpu == d.index && pre.process.pid == p.pid) r.preallocated = true;
  }
  if (s.leases) {
    const Reading& uuid = d.fields[FieldId::kUuid];
    if (uuid.is_text()) {
      if (const host::Lease* lease = s.leases->Find(uuid.text())) r.lease = lease->user;
    }
  }
  return r;
}

// Negative, zero or positive as a sorts before, with, or after b on `c`
// (absent values sort as smallest).
int Compare(const ProcessRow& a, const ProcessRow& b, Column c) {
  auto num = [](const std::optional<double>& x, const std::optional<double>& y) {
    const double u = x.value_or(-1), v = y.value_or(-1);
    return u < v ? -1 : u > v ? 1 : 0;
  };
  auto text = [](const std::string& x, const std::string& y) { return x.compare(y); };
  switch (c) {
    case Column::kPid:
      return a.key.pid < b.key.pid ? -1 : a.key.pid > b.key.pid ? 1 : 0;
    case Column::kUser:
      return text(a.user, b.user);
    case Column::kGpu:
      return a.gpu < b.gpu ? -1 : a.gpu > b.gpu ? 1 : 0;
    case Column::kMemory:
      return num(a.memory, b.memory);
    case Column::kSm:
      return num(a.sm, b.sm);
    case Column::kCpu:
      return num(a.cpu, b.cpu);
    case Column::kHostMemory:
      return num(a.rss, b.rss);
    case Column::kTime: {
      auto e = [](const ProcessRow& r) {
        return r.elapsed ? std::chrono::duration<double>(*r.elapsed).count() : -1.0;
      };
      return num(e(a), e(b));
    }
    case Column::kWhere:
      return text(a.where, b.where);
    case Column::kFramework:
      return num(a.framework_allocated, b.framework_allocated);
    case Column::kLease:
      return text(a.lease, b.lease);
    case Column::kCommand:
      return text(a.command, b.command);
  }
  return 0;
}

bool Before(const ProcessRow& a, const ProcessRow& b, const ViewState& state) {
  int c = Compare(a, b, state.sort);
  if (state.reverse) c = -c;
  if (c != 0) return c < 0;
  if (a.gpu != b.gpu) return a.gpu < b.gpu;
  return a.key < b.key;
}

// The rows as families: each process under its nearest ancestor that is in
// the table; processes whose nearest shared ancestor holds no GPU get that
// ancestor as a head row (a launcher: torchrun, mpirun, a shell).
std::vector<ProcessRow> AsTree(std::vector<ProcessRow> rows, const Families& f,
                               const ViewState& state) {
  auto parent_of = [&](std::uint32_t pid) -> std::optional<std::uint32_t> {
    auto it = f.parents.find(pid);
    if (it == f.parents.end() || it->second == 0 || it->second == pid) return std::nullopt;
    return it->second;
  };
  std::set<std::uint32_t> in_table;
  for (const ProcessRow& r : rows) in_table.insert(r.key.pid);
  // Launchers: ancestors (not init) of two or more table processes that are
  // not in the table themselves, nearest first.
  std::map<std::uint32_t, int> below;
  for (std::uint32_t pid : in_table) {
    std::set<std::uint32_t> seen;
    for (auto p = parent_of(pid); p && *p > 1 && seen.insert(*p).second; p = parent_of(*p)) {
      if (in_table.count(*p) != 0) break;
      ++below[*p];
    }
  }
  std::set<std::uint32_t> heads;
  for (const auto& [pid, n] : below) {
    if (n >= 2) heads.insert(pid);
  }
  for (std::uint32_t pid : heads) {
    ProcessRow head;
    head.key.pid = pid;
    head.is_process = false;
    head.gpu = -1;
    head.command = f.name_of ? f.name_of(pid) : "";
    rows.push_back(std::move(head));
  }
  std::set<std::uint32_t> nodes = in_table;
  nodes.insert(heads.begin(), heads.end());
  // The nearest ancestor that is a node.
  auto up = [&](std::uint32_t pid) -> std::optional<std::uint32_t> {
    std::set<std::uint32_t> seen;
    for (auto p = parent_of(pid); p && seen.insert(*p).second; p = parent_of(*p)) {
      if (nodes.count(*p) != 0) return p;
    }
    return std::nullopt;
  };
  std::map<std::optional<std::uint32_t>, std::vector<std::size_t>> children;
  for (std::size_t i = 0; i < rows.size(); ++i) children[up(rows[i].key.pid)].push_back(i);
  for (auto& [parent, list] : children) {
    std::stable_sort(list.begin(), list.end(),
                     [&](std::size_t a, std::size_t b) { return Before(rows[a], rows[b], state); });
  }
  std::vector<ProcessRow> out;
  std::set<std::uint32_t> placed;  // a process on several GPUs has its children once
  const bool unicode = state.unicode;
  std::function<void(std::optional<std::uint32_t>, int, const std::string&)> walk =
      [&](std::optional<std::uint32_t> parent, int depth, const std::string& prefix) {
        auto it = children.find(parent);
        if (it == children.end()) return;
        for (std::size_t k = 0; k < it->second.size(); ++k) {
          const bool last = k + 1 == it->second.size();
          ProcessRow row = rows[it->second[k]];
          row.depth = depth;
          if (depth > 0)
            row.branch = prefix + (last ? (unicode ? "└─ " : "`- ") : (unicode ? "├─ " : "|- "));
          const std::uint32_t pid = row.key.pid;
          out.push_back(std::move(row));
          if (placed.insert(pid).second) {
            walk(pid, depth + 1,
                 depth > 0 ? prefix + (last ? "   " : (unicode ? "│  " : "|  ")) : prefix);
          }
        }
      };
  walk(std::nullopt, 0, "");
  return out;
}

}  // namespace

std::string_view ColumnTitle(Column c) {
  switch (c) {
    case Column::kPid:
      return "PID";
    case Column::kUser:
      return "USER";
    case Column::kGpu:
      return "GPU";
    case Column::kMemory:
      return "GPU-MEM";
    case Column::kSm:
      return "SM%";
    case Column::kCpu:
      return "CPU%";
    case Column::kHostMemory:
      return "HOST-MEM";
    case Column::kTime:
      return "TIME";
    case Column::kWhere:
      return "WHERE";
    case Column::kFramework:
      return "FW-ALLOC/RES";
    case Column::kLease:
      return "LEASE";
    case Column::kCommand:
      return "COMMAND";
  }
  return "";
}

bool Matches(const ProcessRow& row, std::string_view filter) {
  std::istringstream words{std::string(filter)};
  const std::string hay = AsciiLower(row.user + " " + row.command + " " + row.where + " " +
                                     row.framework + " " + std::to_string(row.key.pid));
  for (std::string w; words >> w;) {
    w = AsciiLower(w);
    const std::string gpu = std::to_string(row.gpu);
    if (w == gpu || w == "gpu" + gpu || w == "gpu:" + gpu) continue;
    if (hay.find(w) == std::string::npos) return false;
  }
  return true;
}

std::vector<ProcessRow> BuildRows(const HostView& host, const ViewState& state,
                                  const Families* families,
                                  std::chrono::system_clock::time_point now) {
  std::vector<ProcessRow> rows;
  const Snapshot* s = host.state.snapshot.get();
  if (s == nullptr) return rows;
  for (const DeviceSample& d : s->devices) {
    for (const ProcessSample& p : d.processes) rows.push_back(RowOf(host, d, p, std::nullopt, now));
  }
  for (const DeviceSample& m : s->mig_devices) {
    for (const ProcessSample& p : m.processes) rows.push_back(RowOf(host, m, p, m.mig_index, now));
  }
  if (!state.filter.empty()) {
    std::erase_if(rows, [&](const ProcessRow& r) { return !Matches(r, state.filter); });
  }
  if (state.tree && families != nullptr) return AsTree(std::move(rows), *families, state);
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const ProcessRow& a, const ProcessRow& b) { return Before(a, b, state); });
  return rows;
}

}  // namespace gpuwatch::tui
