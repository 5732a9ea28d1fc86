// A full collection (backend + host attribution) against the fake NVML and a
// fixture /proc tree: processes exiting between NVML's list and the /proc
// read, PIDs from another namespace, PID reuse.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "fake_env.h"
#include "sampler/collect.h"

namespace gpuwatch {
namespace {
namespace fs = std::filesystem;

class ProcTree {
 public:
  ProcTree()
      : root_(fs::temp_directory_path() /
              ("gw-proc-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    fs::create_directories(root_ / "self");
    Write("stat", "cpu 1 1 1 1\nbtime 1795734000\n");
    Write("uptime", "1000.00 2000.00\n");
    Write("self/status", "Name:\tgpuwatch\nNSpid:\t1\n");
  }
  ~ProcTree() { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  void AddProcess(unsigned pid, const std::string& comm, unsigned long start_ticks,
                  unsigned uid = 0) {
    const std::string p = std::to_string(pid);
    Write(p + "/stat", p + " (" + comm + ") S 1 1 1 0 -1 0 0 0 0 0 50 50 0 0 20 0 1 0 " +
                           std::to_string(start_ticks) + " 1000 100 0\n");
    Write(p + "/status", "Name:\t" + comm + "\nUid:\t" + std::to_string(uid) +
                             "\t0\t0\t0\nNSpid:\t" + p + "\nVmRSS:\t1024 kB\n");
    Write(p + "/cmdline", comm + std::string(1, '\0') + "--flag" + std::string(1, '\0'));
    Write(p + "/cgroup", "0::/user.slice\n");
  }
  const fs::path& root() const { return root_; }

 private:
  static inline int counter_ = 0;
  fs::path root_;
};

host::ProcOptions Local(const ProcTree& t) {
  host::ProcOptions o;
  o.proc_dir = t.root();
  o.passwd_file = t.root() / "passwd";
  return o;
}

const ProcessSample* Find(const Snapshot& s, unsigned pid) {
  for (const auto& d : s.devices) {
    for (const auto& p : d.processes) {
      if (p.pid == pid) return &p;
    }
  }
  return nullptr;
}

TEST(Attribution, ProcessExitedBetweenNvmlListAndProcReadIsKeptAndMarked) {
  auto b = testing::OpenFake("fixed.yaml", 100);
  ASSERT_TRUE(b);
  ProcTree tree;
  tree.AddProcess(5001, "python", 5000);  // 5002 and 5003 are gone from /proc
  host::ProcessResolver resolver(Local(tree));
  const Snapshot s = CollectOnce(*b, &resolver, {});
  const ProcessSample* alive = Find(s, 5001);
  const ProcessSample* gone = Find(s, 5002);
  ASSERT_TRUE(alive && gone);
  EXPECT_EQ(alive->host.visibility, HostProcess::Visibility::kVisible);
  EXPECT_EQ(alive->host.name, "python");
  EXPECT_EQ(alive->host.command, "python --flag");
  EXPECT_EQ(gone->host.visibility, HostProcess::Visibility::kExited);
  EXPECT_TRUE(gone->fields[FieldId::kProcessUsedMemoryBytes].is_number())
      << "NVML's memory figure is kept: the process is never dropped";
}

TEST(Attribution, PidsFromAnotherNamespaceAreNeverAttributedLocally) {
  auto b = testing::OpenFake("fixed.yaml", 100);
  ASSERT_TRUE(b);
  ProcTree tree;
  tree.Write("self/status", "Name:\tgpuwatch\nNSpid:\t4242\t7\n");  // we are in a container
  tree.AddProcess(5001, "bash", 10);  // an unrelated local process with the same number
  host::ProcessResolver resolver(Local(tree));
  const Snapshot s = CollectOnce(*b, &resolver, {});
  const ProcessSample* p = Find(s, 5001);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->host.visibility, HostProcess::Visibility::kOtherPidNs);
  EXPECT_TRUE(p->host.command.empty()) << "not the local bash";
  EXPECT_TRUE(p->host.name.empty());
}

TEST(Attribution, HostProcReadsTheHostsPidsFromAContainer) {
  auto b = testing::OpenFake("fixed.yaml", 100);
  ASSERT_TRUE(b);
  ProcTree tree;
  tree.Write("self/status", "Name:\tgpuwatch\nNSpid:\t4242\t7\n");
  tree.AddProcess(5001, "python", 10);
  host::ProcOptions o = Local(tree);
  o.is_host_proc = true;  // --host-proc
  host::ProcessResolver resolver(o);
  const Snapshot s = CollectOnce(*b, &resolver, {});
  const ProcessSample* p = Find(s, 5001);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->host.visibility, HostProcess::Visibility::kVisible);
  EXPECT_EQ(p->host.name, "python");
}

TEST(Attribution, PidReuseGivesANewIdentity) {
  auto b = testing::OpenFake("fixed.yaml", 100);
  ASSERT_TRUE(b);
  ProcTree tree;
  tree.AddProcess(5001, "python", 5000);
  host::ProcessResolver resolver(Local(tree));
  const Snapshot first = CollectOnce(*b, &resolver, {});
  tree.AddProcess(5001, "other", 9000);  // same pid, started later: another process
  const Snapshot second = CollectOnce(*b, &resolver, {});
  const ProcessSample* a = Find(first, 5001);
  const ProcessSample* c = Find(second, 5001);
  ASSERT_TRUE(a && c);
  EXPECT_EQ(a->host.start_ticks, 5000u);
  EXPECT_EQ(c->host.start_ticks, 9000u);
  EXPECT_EQ(c->host.name, "other");
}

TEST(Attribution, DemoFleetShowsUsersContainersAndMig) {
  auto b = testing::OpenDemo(600);
  ASSERT_TRUE(b);
  host::ProcessResolver resolver(testing::DemoHostProc());
  const Snapshot s = CollectOnce(*b, &resolver, {});
  EXPECT_TRUE(s.demo);
  ASSERT_EQ(s.devices.size(), 8u);
  const ProcessSample* alice = Find(s, 41001);
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->host.user, "alice");
  EXPECT_EQ(alice->host.container_runtime, "docker");
  const ProcessSample* bob = Find(s, 41101);
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->host.slurm_job_id, "88123");
  EXPECT_EQ(s.mig_devices.size(), 2u);
  EXPECT_EQ(s.devices[5].fields[FieldId::kMigMode].number(), 1);
}

}  // namespace
}  // namespace gpuwatch
