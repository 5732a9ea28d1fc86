#include "fake_proc.h"

#include <sys/fsuid.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace gpuwatch::host::testing {

namespace fs = std::filesystem;

FakeProcTree::FakeProcTree()
    : now(std::chrono::steady_clock::time_point{} + std::chrono::hours(1)) {
  std::string templ = (fs::temp_directory_path() / "gpuwatch-host-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  root_ = templ;
  // Others may traverse, so tests running unprivileged hit only the
  // permissions they set themselves.
  fs::permissions(root_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  Write("proc/stat", "cpu  1 2 3 4\nbtime " + std::to_string(kBootTime) + "\nprocesses 10\n");
  SetUptime(10'000.0);
  Write("etc/passwd",
        "root:x:0:0:root:/root:/bin/bash\n"
        "alice:x:1001:1001:Alice:/home/alice:/bin/bash\n"
        "bob:x:1002:1002:Bob:/home/bob:/bin/bash\n");
}

FakeProcTree::~FakeProcTree() {
  std::error_code ec;
  // Give back permissions a test took away, so everything can be removed.
  for (auto it = fs::recursive_directory_iterator(root_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  }
  fs::remove_all(root_, ec);
}

void FakeProcTree::Write(const fs::path& relative, const std::string& text) {
  fs::path path = root_ / relative;
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

void FakeProcTree::Add(const FakeProcess& p) {
  std::string pid = std::to_string(p.pid);
  // Fields 3..52 of a real stat line, with the ones src/host reads set.
  std::string stat = pid + " (" + p.comm + ") " + p.state + " 1 " + pid + " " + pid +
                     " 0 -1 4194560 100 0 0 0 " + std::to_string(p.utime_ticks) + " " +
                     std::to_string(p.stime_ticks) + " 0 0 20 0 4 0 " +
                     std::to_string(p.start_ticks) +
                     " 123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 "
                     "0 0 0 0 0 0 0 0 0\n";
  Write("proc/" + pid + "/stat", stat);
  std::string status =
      "Name:\t" + p.comm + "\nState:\t" + p.state + " (sleeping)\nPid:\t" + pid + "\n";
  if (p.uid) {
    std::string u = std::to_string(*p.uid);
    status += "Uid:\t" + u + "\t" + u + "\t" + u + "\t" + u + "\n";
  }
  status += "NSpid:\t" + pid + "\n";
  if (p.rss_kb) status += "VmRSS:\t" + std::to_string(*p.rss_kb) + " kB\n";
  status += "Threads:\t4\n";
  Write("proc/" + pid + "/status", status);
  // statm in pages; a zombie's is every number 0.
  const std::uint64_t page_kb = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
  const std::uint64_t pages = p.rss_kb ? *p.rss_kb / page_kb : 0;
  Write("proc/" + pid + "/statm",
        p.rss_kb ? std::to_string(pages + 4096) + " " + std::to_string(pages) + " 300 20 0 900 0\n"
                 : "0 0 0 0 0 0 0\n");
  std::string cmdline;
  for (const std::string& a : p.argv) cmdline += a + '\0';
  Write("proc/" + pid + "/cmdline", cmdline);
  Write("proc/" + pid + "/cgroup", p.cgroup);
}

ProcessSample Sample(std::uint32_t pid) {
  ProcessSample p;
  p.pid = pid;
  return p;
}

ProcessSample ResolveOnce(ProcessResolver& r, std::uint32_t pid) {
  ProcessSample p = Sample(pid);
  r.Resolve(p);
  return p;
}

FakeProcess Trainer() {
  FakeProcess p;
  p.pid = 4242;
  p.comm = "python";
  p.uid = 1001;
  p.utime_ticks = 40'000;
  p.stime_ticks = 10'000;
  p.start_ticks = 900'000;
  p.rss_kb = 12 * 1024 * 1024;
  p.argv = {"python", "train.py", "--run-name", "my run", "--rank", "0"};
  return p;
}

void FakeProcTree::Remove(std::uint32_t pid) { fs::remove_all(proc() / std::to_string(pid)); }

void FakeProcTree::SetUptime(double seconds) {
  Write("proc/uptime", std::to_string(seconds) + " 12345.00\n");
}

void FakeProcTree::SetSelfNspid(const std::vector<std::uint32_t>& nspid) {
  std::string status = "Name:\tgpuwatch\nPid:\t7\n";
  if (!nspid.empty()) {
    status += "NSpid:";
    for (std::uint32_t n : nspid) status += "\t" + std::to_string(n);
    status += "\n";
  }
  Write("proc/self/status", status);
}

void FakeProcTree::SetSelfCgroup(const std::string& text) { Write("proc/self/cgroup", text); }

ProcOptions FakeProcTree::Options() const {
  ProcOptions o;
  o.proc_dir = proc();
  o.passwd_file = root_ / "etc" / "passwd";
  o.root_dir = root_;
  o.steady_now = [this] { return now; };
  return o;
}

AsUnprivilegedUser::AsUnprivilegedUser() {
  if (::geteuid() == 0) {
    ::setfsuid(65534);
    switched_ = true;
  }
}

AsUnprivilegedUser::~AsUnprivilegedUser() {
  if (switched_) ::setfsuid(0);
}

}  // namespace gpuwatch::host::testing
