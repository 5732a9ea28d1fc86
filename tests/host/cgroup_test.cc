#include "host/cgroup.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuwatch::host {
namespace {

const std::string kId = "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a99887766554433221100ffeeddccbbaa99";
const std::string kId2 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string kPod = "8a3f2c1e-5b7d-4e9a-a1c2-3d4e5f6a7b8c";

TEST(ParseCgroup, DockerSystemdScopeOnCgroupV2) {
  CgroupIdentity id = ParseCgroup("0::/system.slice/docker-" + kId + ".scope\n");
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.container_runtime, "docker");
  EXPECT_EQ(id.pod_uid, "");
  EXPECT_EQ(id.slurm_job_id, "");
}

TEST(ParseCgroup, DockerCgroupfsOnV1FindsTheControllerLineAmongOthers) {
  CgroupIdentity id = ParseCgroup("13:misc:/\n12:memory:/docker/" + kId +
                                  "\n11:cpu,cpuacct:/docker/" + kId + "\n0::/\n");
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.container_runtime, "docker");
}

TEST(ParseCgroup, KubepodsCgroupfsGivesPodUidAndContainerWithoutRuntime) {
  CgroupIdentity id = ParseCgroup("/kubepods/burstable/pod" + kPod + "/" + kId);
  EXPECT_EQ(id.pod_uid, kPod);
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.container_runtime, "");
}

TEST(ParseCgroup, KubepodsSystemdContainerdTurnsUnderscoresIntoDashes) {
  std::string underscored = kPod;
  for (char& c : underscored) {
    if (c == '-') c = '_';
  }
  CgroupIdentity id =
      ParseCgroup("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                  underscored + ".slice/cri-containerd-" + kId + ".scope\n");
  EXPECT_EQ(id.pod_uid, kPod);
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.container_runtime, "containerd");
}

TEST(ParseCgroup, GuaranteedQosPodSliceHasNoQosClassInItsName) {
  CgroupIdentity id =
      ParseCgroup("0::/kubepods.slice/kubepods-pod" + kPod + ".slice/crio-" + kId + ".scope");
  EXPECT_EQ(id.pod_uid, kPod);
  EXPECT_EQ(id.container_runtime, "cri-o");
}

TEST(ParseCgroup, CrioScopeIsCriO) {
  CgroupIdentity id = ParseCgroup(
      "0::/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod" +
      kPod + ".slice/crio-" + kId + ".scope\n");
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.container_runtime, "cri-o");
  EXPECT_EQ(id.pod_uid, kPod);
}

TEST(ParseCgroup, ConmonScopeIsNotTheContainer) {
  CgroupIdentity id = ParseCgroup("0::/machine.slice/libpod-conmon-" + kId + ".scope\n");
  EXPECT_EQ(id.container_id, "");
}

TEST(ParseCgroup, PodmanLibpodScope) {
  CgroupIdentity id = ParseCgroup("0::/libpod-" + kId + ".scope\n");
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.container_runtime, "podman");
}

TEST(ParseCgroup, PodmanUnderMachineSliceWithNestedContainerCgroup) {
  CgroupIdentity id = ParseCgroup("0::/machine.slice/libpod-" + kId + ".scope/container\n");
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.container_runtime, "podman");
}

TEST(ParseCgroup, RootlessPodmanUnderUserSlice) {
  CgroupIdentity id = ParseCgroup(
      "0::/user.slice/user-1005.slice/user@1005.service/user.slice/libpod-" + kId + ".scope\n");
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.container_runtime, "podman");
}

TEST(ParseCgroup, SlurmV1JobFromUidJobStepTask) {
  CgroupIdentity id = ParseCgroup(
      "7:devices:/slurm/uid_1000/job_88123/step_0/task_0\n"
      "4:memory:/slurm/uid_1000/job_88123/step_0/task_0\n");
  EXPECT_EQ(id.slurm_job_id, "88123");
  EXPECT_EQ(id.container_id, "");
}

TEST(ParseCgroup, SlurmV2JobUnderSlurmstepdScope) {
  CgroupIdentity id =
      ParseCgroup("0::/system.slice/slurmstepd.scope/job_88123/step_batch/user/task_0\n");
  EXPECT_EQ(id.slurm_job_id, "88123");
}

TEST(ParseCgroup, JobComponentOutsideSlurmIsNotAJob) {
  CgroupIdentity id = ParseCgroup("0::/system.slice/job_42.service\n0::/user/job_7\n");
  EXPECT_EQ(id.slurm_job_id, "");
}

TEST(ParseCgroup, InnermostContainerWinsWhenPodsRunInsideADockerNode) {
  // kind: a Kubernetes node that is itself a docker container.
  CgroupIdentity id =
      ParseCgroup("0::/docker/" + kId2 + "/kubepods/besteffort/pod" + kPod + "/" + kId + "\n");
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.pod_uid, kPod);
}

TEST(ParseCgroup, PathRelativeToAPrivateCgroupNamespaceStillNamesTheContainer) {
  CgroupIdentity id = ParseCgroup("0::/../../system.slice/docker-" + kId + ".scope\n");
  EXPECT_EQ(id.container_id, kId);
  EXPECT_EQ(id.container_runtime, "docker");
}

TEST(ParseCgroup, HostProcessHasNoIdentity) {
  EXPECT_EQ(ParseCgroup("0::/user.slice/user-1000.slice/session-2.scope\n"), CgroupIdentity{});
  EXPECT_EQ(ParseCgroup("0::/system.slice/docker.service\n"), CgroupIdentity{});
  EXPECT_EQ(ParseCgroup(""), CgroupIdentity{});
}

TEST(ParseCgroup, ShortOrNonHexIdsAreNotContainers) {
  EXPECT_EQ(ParseCgroup("0::/system.slice/docker-abc123.scope\n").container_id, "");
  EXPECT_EQ(ParseCgroup("12:memory:/docker/" + std::string(64, 'z') + "\n").container_id, "");
}

}  // namespace
}  // namespace gpuwatch::host
