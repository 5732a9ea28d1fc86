// The demo host tree (scenarios/demo.host) that `gpuwatch --demo` reads as
// its --host-proc: every demo pid resolves to its user and container.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "host/process_resolver.h"

namespace gpuwatch::host {
namespace {

using Visibility = HostProcess::Visibility;

struct DemoProcess {
  std::uint32_t pid;
  const char* user;
  const char* command_start;
  const char* runtime;  // "" for none
  const char* slurm_job;
  bool has_pod;
};

constexpr DemoProcess kDemo[] = {
    {41001, "alice", "python train.py --model llama-7b --batch-size 16 --rank 0", "docker", "",
     false},
    {41002, "alice", "python train.py --model llama-7b --batch-size 16 --rank 1", "docker", "",
     false},
    {41101, "bob", "python finetune.py --lr 3e-5 --epochs 10", "", "88123", false},
    {41201, "carol", "torchrun --nproc_per_node=1 resnet50.py --amp", "containerd", "", true},
    {41301, "dave", "python etl_train.py --num-workers 0", "", "", false},
    {41401, "erin", "python -m ipykernel_launcher -f /run/user/1005/kernel-7.json", "podman", "",
     false},
    {41402, "erin", "python serve.py --port 8000", "podman", "", false},
    {41501, "frank", "python jax_train.py --config configs/vit.py", "docker", "", false},
};

ProcOptions DemoOptions() {
  ProcOptions o;
  o.proc_dir = GPUWATCH_SOURCE_DIR "/scenarios/demo.host/proc";
  o.is_host_proc = true;
  return o;  // passwd: demo.host/etc/passwd, found beside proc/
}

TEST(DemoHostTree, EveryDemoPidResolvesToItsUserCommandAndContainer) {
  ProcessResolver r(DemoOptions());
  for (const DemoProcess& d : kDemo) {
    SCOPED_TRACE(d.pid);
    ProcessSample p;
    p.pid = d.pid;
    r.Resolve(p);
    EXPECT_EQ(p.host.visibility, Visibility::kVisible);
    EXPECT_EQ(p.host.user, d.user);
    EXPECT_EQ(p.host.command, d.command_start);
    EXPECT_EQ(p.host.container_runtime, d.runtime);
    EXPECT_EQ(p.host.container_id.size(), std::string(d.runtime).empty() ? 0u : 64u);
    EXPECT_EQ(p.host.slurm_job_id, d.slurm_job);
    EXPECT_EQ(p.host.pod_uid.empty(), !d.has_pod);
    EXPECT_TRUE(p.host.start_time.has_value());
    EXPECT_TRUE(p.fields[FieldId::kProcessRssBytes].is_number());
    EXPECT_TRUE(p.fields[FieldId::kProcessCpuRatio].is_number());
  }
}

TEST(DemoHostTree, AlicesRanksShareOneContainerAndErinsDoNot) {
  ProcessResolver r(DemoOptions());
  auto container = [&](std::uint32_t pid) {
    ProcessSample p;
    p.pid = pid;
    r.Resolve(p);
    return p.host.container_id;
  };
  EXPECT_EQ(container(41001), container(41002));
  EXPECT_NE(container(41401), container(41402));
  EXPECT_NE(container(41001), container(41501));
}

TEST(DemoHostTree, CarolsPodUidHasDashes) {
  ProcessResolver r(DemoOptions());
  ProcessSample p;
  p.pid = 41201;
  r.Resolve(p);
  EXPECT_EQ(p.host.pod_uid, "3f1c9a2e-7b4d-4e8a-9c61-2d5f80b7a4e3");
}

TEST(DemoHostTree, DaveKeepsOneCoreBusyAndAliceHoldsAboutTwelveGiB) {
  ProcessResolver r(DemoOptions());
  ProcessSample dave;
  dave.pid = 41301;
  r.Resolve(dave);
  EXPECT_NEAR(dave.fields[FieldId::kProcessCpuRatio].number(), 1.0, 0.01);
  ProcessSample alice;
  alice.pid = 41001;
  r.Resolve(alice);
  double gib = alice.fields[FieldId::kProcessRssBytes].number() / (1024.0 * 1024 * 1024);
  EXPECT_GT(gib, 11.5);
  EXPECT_LT(gib, 12.5);
}

TEST(DemoHostTree, ProcessesStartedHoursBeforeTheTreesNow) {
  ProcessResolver r(DemoOptions());
  // The tree's "now": btime + uptime (make_tree.py).
  const auto tree_now = std::chrono::system_clock::time_point(std::chrono::seconds(1795734000)) +
                        std::chrono::seconds(286200);
  for (const DemoProcess& d : kDemo) {
    SCOPED_TRACE(d.pid);
    ProcessSample p;
    p.pid = d.pid;
    r.Resolve(p);
    ASSERT_TRUE(p.host.start_time.has_value());
    auto age = std::chrono::duration_cast<std::chrono::minutes>(tree_now - *p.host.start_time);
    EXPECT_GT(age.count(), 30);
    EXPECT_LT(age.count(), 30 * 60);
  }
}

}  // namespace
}  // namespace gpuwatch::host
