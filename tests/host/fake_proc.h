// A fixture /proc tree in a temporary directory, for src/host tests:
// <root>/proc/{stat,uptime,<pid>/{stat,status,statm,cmdline,cgroup},self/...} and
// <root>/etc/passwd. Removed on destruction.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "host/process_resolver.h"

namespace gpuwatch::host::testing {

struct FakeProcess {
  std::uint32_t pid = 0;
  std::string comm = "python";
  char state = 'S';
  std::uint64_t utime_ticks = 0;
  std::uint64_t stime_ticks = 0;
  std::uint64_t start_ticks = 0;
  std::optional<std::uint32_t> uid = 1001;
  std::optional<std::uint64_t> rss_kb = 1024;
  std::vector<std::string> argv = {"python", "train.py"};
  std::string cgroup = "0::/user.slice/user-1001.slice/session-3.scope\n";
};

class FakeProcTree {
 public:
  static constexpr std::int64_t kBootTime = 1'700'000'000;  // proc/stat btime

  FakeProcTree();
  ~FakeProcTree();
  FakeProcTree(const FakeProcTree&) = delete;
  FakeProcTree& operator=(const FakeProcTree&) = delete;

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path proc() const { return root_ / "proc"; }

  // Writes (or rewrites) proc/<pid>/{stat,status,statm,cmdline,cgroup}.
  void Add(const FakeProcess& p);
  void Remove(std::uint32_t pid);
  void SetUptime(double seconds);
  // proc/self/status with this NSpid line (none when empty).
  void SetSelfNspid(const std::vector<std::uint32_t>& nspid);
  void SetSelfCgroup(const std::string& text);
  // Writes `text` at root()/relative, creating directories.
  void Write(const std::filesystem::path& relative, const std::string& text);

  // proc_dir = proc(), passwd_file = root()/etc/passwd (alice 1001, bob
  // 1002), root_dir = root(), steady_now = now().
  ProcOptions Options() const;

  // The fake steady clock Options() hands out.
  std::chrono::steady_clock::time_point now;

 private:
  std::filesystem::path root_;
};

// A process sample of `pid` before it is resolved, and one resolved by `r`.
ProcessSample Sample(std::uint32_t pid);
ProcessSample ResolveOnce(ProcessResolver& r, std::uint32_t pid);

// pid 4242, "python train.py --run-name my run --rank 0" of uid 1001 (alice):
// with the tree's uptime of 10000 s, started at 9000 s after boot, 500 s of
// CPU so far, 12 GiB resident.
FakeProcess Trainer();

// While alive, file permission checks apply to this thread even when the
// tests run as root (setfsuid drops CAP_DAC_OVERRIDE). A no-op for others.
class AsUnprivilegedUser {
 public:
  AsUnprivilegedUser();
  ~AsUnprivilegedUser();
  AsUnprivilegedUser(const AsUnprivilegedUser&) = delete;
  AsUnprivilegedUser& operator=(const AsUnprivilegedUser&) = delete;

 private:
  bool switched_ = false;
};

}  // namespace gpuwatch::host::testing
