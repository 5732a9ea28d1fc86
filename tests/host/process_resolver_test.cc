#include "host/process_resolver.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "fake_proc.h"

namespace gpuwatch::host {
namespace {

using testing::FakeProcess;
using testing::FakeProcTree;
using testing::ResolveOnce;
using testing::Sample;
using testing::Trainer;
using Visibility = HostProcess::Visibility;
using std::chrono::seconds;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

TEST(ProcessResolver, ReadsNameCommandUserStartTimeAndRss) {
  FakeProcTree tree;
  tree.Add(Trainer());
  ProcessResolver r(tree.Options());
  ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.host.visibility, Visibility::kVisible);
  EXPECT_EQ(p.host.name, "python");
  EXPECT_EQ(p.host.command, "python train.py --run-name my run --rank 0");
  EXPECT_EQ(p.host.uid, 1001u);
  EXPECT_EQ(p.host.user, "alice");
  EXPECT_EQ(p.host.start_ticks, 900'000u);
  ASSERT_TRUE(p.host.start_time.has_value());
  // btime + 900000 ticks / 100 per second.
  EXPECT_EQ(std::chrono::duration_cast<seconds>(p.host.start_time->time_since_epoch()).count(),
            FakeProcTree::kBootTime + 9000);
  const Reading& rss = p.fields[FieldId::kProcessRssBytes];
  ASSERT_TRUE(rss.is_number());
  EXPECT_DOUBLE_EQ(rss.number(), 12 * kGiB);
}

TEST(ProcessResolver, FirstSightCpuIsTheAverageSinceStart) {
  FakeProcTree tree;
  tree.Add(Trainer());
  ProcessResolver r(tree.Options());
  ProcessSample p = ResolveOnce(r, 4242);
  // 500 s of CPU over 1000 s of life.
  ASSERT_TRUE(p.fields[FieldId::kProcessCpuRatio].is_number());
  EXPECT_DOUBLE_EQ(p.fields[FieldId::kProcessCpuRatio].number(), 0.5);
}

TEST(ProcessResolver, LaterCpuIsTheDeltaBetweenResolveCalls) {
  FakeProcTree tree;
  FakeProcess proc = Trainer();
  tree.Add(proc);
  ProcessResolver r(tree.Options());
  (void)ResolveOnce(r, 4242);
  r.EndSample();
  proc.utime_ticks += 350;  // 4 s of CPU in 2 s
  proc.stime_ticks += 50;
  tree.Add(proc);
  tree.now += seconds(2);
  ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_DOUBLE_EQ(p.fields[FieldId::kProcessCpuRatio].number(), 2.0);
}

TEST(ProcessResolver, ProcessOnTwoGpusGetsTheSameCpuTwiceInOneSample) {
  FakeProcTree tree;
  FakeProcess proc = Trainer();
  tree.Add(proc);
  ProcessResolver r(tree.Options());
  (void)ResolveOnce(r, 4242);
  r.EndSample();
  proc.utime_ticks += 200;
  tree.Add(proc);
  tree.now += seconds(2);
  ProcessSample gpu0 = ResolveOnce(r, 4242);
  tree.now += std::chrono::microseconds(30);
  ProcessSample gpu1 = ResolveOnce(r, 4242);
  EXPECT_DOUBLE_EQ(gpu0.fields[FieldId::kProcessCpuRatio].number(), 1.0);
  EXPECT_EQ(gpu1.fields[FieldId::kProcessCpuRatio], gpu0.fields[FieldId::kProcessCpuRatio]);
}

TEST(ProcessResolver, ReusedPidIsANewIdentityWithNoCpuDeltaAcrossIt) {
  FakeProcTree tree;
  tree.Add(Trainer());
  ProcessResolver r(tree.Options());
  ProcessSample before = ResolveOnce(r, 4242);
  r.EndSample();
  // The trainer exited; a new process got pid 4242 at uptime 9990 s.
  FakeProcess other;
  other.pid = 4242;
  other.comm = "bash";
  other.uid = 1002;
  other.start_ticks = 999'000;
  other.utime_ticks = 59'000;  // 600 s of CPU over its 10 s of life: 60 threads
  other.stime_ticks = 1'000;
  other.argv = {"bash"};
  tree.Add(other);
  tree.now += seconds(2);
  ProcessSample after = ResolveOnce(r, 4242);
  EXPECT_NE(after.host.start_ticks, before.host.start_ticks);
  EXPECT_EQ(after.host.user, "bob");
  EXPECT_EQ(after.host.name, "bash");
  // Its own average since start; a delta from the trainer's counters would
  // read (60000 - 50000) ticks / 2 s = 50.
  EXPECT_DOUBLE_EQ(after.fields[FieldId::kProcessCpuRatio].number(), 60.0);
}

TEST(ProcessResolver, EndSampleForgetsProcessesNotSeenSinceTheLastOne) {
  FakeProcTree tree;
  FakeProcess proc = Trainer();
  tree.Add(proc);
  ProcessResolver r(tree.Options());
  (void)ResolveOnce(r, 4242);
  r.EndSample();
  r.EndSample();  // a sample in which 4242 was not listed
  proc.utime_ticks += 200;
  tree.Add(proc);
  tree.SetUptime(10'002.0);
  tree.now += seconds(2);
  ProcessSample p = ResolveOnce(r, 4242);
  // Forgotten, so first sight again: 502 s over 1002 s, not 2 s over 2 s.
  EXPECT_NEAR(p.fields[FieldId::kProcessCpuRatio].number(), 502.0 / 1002.0, 1e-12);
}

TEST(ProcessResolver, CommWithParenthesesAndSpaces) {
  FakeProcTree tree;
  FakeProcess proc = Trainer();
  proc.comm = "my) (job";
  proc.argv = {};
  tree.Add(proc);
  ProcessResolver r(tree.Options());
  ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.host.name, "my) (job");
  EXPECT_EQ(p.host.command, "[my) (job]");
  EXPECT_EQ(p.host.start_ticks, 900'000u);
  EXPECT_DOUBLE_EQ(p.fields[FieldId::kProcessCpuRatio].number(), 0.5);
}

TEST(ProcessResolver, ZombieHasBracketedCommandAndRssNotSupported) {
  FakeProcTree tree;
  FakeProcess proc = Trainer();
  proc.state = 'Z';
  proc.argv = {};
  proc.rss_kb.reset();
  tree.Add(proc);
  ProcessResolver r(tree.Options());
  ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.host.visibility, Visibility::kVisible);
  EXPECT_EQ(p.host.command, "[python]");
  EXPECT_EQ(p.fields[FieldId::kProcessRssBytes].ok(), false);
  EXPECT_EQ(p.fields[FieldId::kProcessRssBytes].missing(), Missing::kNotSupported);
}

TEST(ProcessResolver, UnknownUidIsShownAsTheNumber) {
  FakeProcTree tree;
  FakeProcess proc = Trainer();
  proc.uid = 31337;
  tree.Add(proc);
  ProcessResolver r(tree.Options());
  EXPECT_EQ(ResolveOnce(r, 4242).host.user, "31337");
}

TEST(ProcessResolver, PasswdDefaultsToTheEtcBesideAMountedHostProc) {
  FakeProcTree tree;
  tree.Add(Trainer());
  tree.Write("etc/passwd", "hostalice:x:1001:1001::/home/a:/bin/sh\n");
  ProcOptions options = tree.Options();
  options.passwd_file.clear();
  ProcessResolver r(options);
  EXPECT_EQ(ResolveOnce(r, 4242).host.user, "hostalice");
}

TEST(ProcessResolver, ContainerPodAndJobComeFromTheCgroupFile) {
  FakeProcTree tree;
  FakeProcess proc = Trainer();
  const std::string id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  proc.cgroup = "0::/kubepods/burstable/pod8a3f2c1e-5b7d-4e9a-a1c2-3d4e5f6a7b8c/crio-" + id + "\n";
  tree.Add(proc);
  FakeProcess job = Trainer();
  job.pid = 5000;
  job.cgroup = "4:memory:/slurm/uid_1001/job_777/step_0/task_0\n";
  tree.Add(job);
  ProcessResolver r(tree.Options());
  ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.host.container_id, id);
  EXPECT_EQ(p.host.container_runtime, "cri-o");
  EXPECT_EQ(p.host.pod_uid, "8a3f2c1e-5b7d-4e9a-a1c2-3d4e5f6a7b8c");
  EXPECT_EQ(ResolveOnce(r, 5000).host.slurm_job_id, "777");
}

// On a Kubernetes node the kubelet's log links name the container's pod,
// namespace and container; a pod started later is found at its first sight.
TEST(ProcessResolver, PodNamespaceAndContainerComeFromTheKubeletLogLinks) {
  FakeProcTree tree;
  FakeProcess proc = Trainer();
  const std::string id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  proc.cgroup = "0::/kubepods/burstable/pod8a3f2c1e-5b7d-4e9a-a1c2-3d4e5f6a7b8c/crio-" + id + "\n";
  tree.Add(proc);
  tree.Write("var/log/containers/other-pod_default_app-" + std::string(64, 'e') + ".log", "");
  ProcOptions options = tree.Options();
  ProcessResolver r(options);
  ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.host.pod, "") << "not listed yet";
  tree.Write("var/log/containers/train-7f9c4_team-a_trainer-" + id + ".log", "");
  std::filesystem::last_write_time(
      tree.root() / "var/log/containers",
      std::filesystem::last_write_time(tree.root() / "var/log/containers") + seconds(2));
  p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.host.pod, "train-7f9c4");
  EXPECT_EQ(p.host.pod_namespace, "team-a");
  EXPECT_EQ(p.host.container_name, "trainer");
  EXPECT_EQ(p.host.container_id, id);
}

TEST(ProcessResolver, ExitedProcessIsKeptAndMarkedExited) {
  FakeProcTree tree;
  ProcessResolver r(tree.Options());
  ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.pid, 4242u);
  EXPECT_EQ(p.host.visibility, Visibility::kExited);
  EXPECT_EQ(p.host.command, "");
  EXPECT_FALSE(p.fields[FieldId::kProcessRssBytes].ok());
  EXPECT_FALSE(p.fields[FieldId::kProcessCpuRatio].ok());
  EXPECT_NE(p.fields[FieldId::kProcessCpuRatio].missing(), Missing::kNotYetSampled);
}

TEST(ProcessResolver, UnreadableProcessIsNoPermission) {
  FakeProcTree tree;
  tree.Add(Trainer());
  std::filesystem::permissions(tree.proc() / "4242", std::filesystem::perms::none);
  ProcessResolver r(tree.Options());
  ProcessSample p;
  {
    testing::AsUnprivilegedUser unprivileged;
    p = ResolveOnce(r, 4242);
  }
  EXPECT_EQ(p.host.visibility, Visibility::kNoPermission);
  EXPECT_EQ(p.host.user, "");
  EXPECT_EQ(p.fields[FieldId::kProcessRssBytes].missing(), Missing::kNoPermission);
  EXPECT_EQ(p.fields[FieldId::kProcessCpuRatio].missing(), Missing::kNoPermission);
}

TEST(ProcessResolver, UnreadableStatusKeepsTheProcessButNotItsRss) {
  FakeProcTree tree;
  tree.Add(Trainer());
  std::filesystem::permissions(tree.proc() / "4242" / "status", std::filesystem::perms::none);
  ProcessResolver r(tree.Options());
  ProcessSample p;
  {
    testing::AsUnprivilegedUser unprivileged;
    p = ResolveOnce(r, 4242);
  }
  EXPECT_EQ(p.host.visibility, Visibility::kVisible);
  EXPECT_EQ(p.host.name, "python");
  EXPECT_FALSE(p.host.uid.has_value());
  EXPECT_EQ(p.fields[FieldId::kProcessRssBytes].missing(), Missing::kNoPermission);
  EXPECT_TRUE(p.fields[FieldId::kProcessCpuRatio].is_number());
}

TEST(ProcessResolver, InAChildPidNamespaceEveryPidIsAnUnseenHostPid) {
  FakeProcTree tree;
  tree.SetSelfNspid({70001, 12});
  tree.Add(Trainer());  // a local pid 4242 exists, but it is not NVML's 4242
  ProcessResolver r(tree.Options());
  EXPECT_TRUE(r.environment().own_pid_namespace);
  ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.pid, 4242u);
  EXPECT_EQ(p.host.visibility, Visibility::kOtherPidNs);
  EXPECT_EQ(p.host.name, "");
  EXPECT_EQ(p.host.user, "");
  EXPECT_EQ(p.host.command, "");
  EXPECT_EQ(p.host.start_ticks, 0u);
  EXPECT_FALSE(p.fields[FieldId::kProcessRssBytes].ok());
  EXPECT_NE(p.fields[FieldId::kProcessRssBytes].detail().find("host pid 4242"), std::string::npos);
}

TEST(ProcessResolver, MountedHostProcIsReadEvenFromAChildPidNamespace) {
  FakeProcTree tree;
  tree.SetSelfNspid({70001, 12});
  tree.Add(Trainer());
  ProcOptions options = tree.Options();
  options.is_host_proc = true;
  ProcessResolver r(options);
  ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.host.visibility, Visibility::kVisible);
  EXPECT_EQ(p.host.user, "alice");
}

TEST(ProcessResolver, ResolvesItselfFromTheRealProc) {
  ProcOptions options;  // the real /proc
  ProcessResolver r(options);
  if (r.pids_in_other_namespace()) GTEST_SKIP() << "test runs in a child PID namespace";
  ProcessSample p = ResolveOnce(r, static_cast<std::uint32_t>(::getpid()));
  EXPECT_EQ(p.host.visibility, Visibility::kVisible);
  EXPECT_EQ(p.host.uid, static_cast<std::uint32_t>(::getuid()));
  EXPECT_NE(p.host.command.find("host_test"), std::string::npos);
  EXPECT_GT(p.fields[FieldId::kProcessRssBytes].number_or(0), 0.0);
  EXPECT_GE(p.fields[FieldId::kProcessCpuRatio].number_or(-1), 0.0);
}

}  // namespace
}  // namespace gpuwatch::host
