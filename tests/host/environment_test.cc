#include "host/environment.h"

#include <gtest/gtest.h>

#include "fake_proc.h"

namespace gpuwatch::host {
namespace {

using testing::FakeProcTree;

EnvironmentProbe ProbeOf(const FakeProcTree& tree) {
  EnvironmentProbe probe;
  probe.proc_dir = tree.proc();
  probe.root_dir = tree.root();
  return probe;
}

TEST(DetectEnvironment, BareHostIsNotAContainerAndSharesThePidNamespace) {
  FakeProcTree tree;
  tree.SetSelfNspid({4321});
  tree.SetSelfCgroup("0::/user.slice/user-1000.slice/session-2.scope\n");
  Environment env = DetectEnvironment(ProbeOf(tree));
  EXPECT_FALSE(env.in_container);
  EXPECT_EQ(env.container_runtime, "");
  EXPECT_FALSE(env.own_pid_namespace);
  EXPECT_EQ(env.pid_namespace_depth, 1);
}

TEST(DetectEnvironment, TwoNspidEntriesMeanAChildPidNamespace) {
  FakeProcTree tree;
  tree.SetSelfNspid({98765, 1});
  Environment env = DetectEnvironment(ProbeOf(tree));
  EXPECT_TRUE(env.own_pid_namespace);
  EXPECT_EQ(env.pid_namespace_depth, 2);
}

TEST(DetectEnvironment, MissingNspidIsTakenAsDepthOne) {
  FakeProcTree tree;
  tree.SetSelfNspid({});
  Environment env = DetectEnvironment(ProbeOf(tree));
  EXPECT_FALSE(env.own_pid_namespace);
  EXPECT_EQ(env.pid_namespace_depth, 1);
}

TEST(DetectEnvironment, DockerenvMarksDocker) {
  FakeProcTree tree;
  tree.Write(".dockerenv", "");
  Environment env = DetectEnvironment(ProbeOf(tree));
  EXPECT_TRUE(env.in_container);
  EXPECT_EQ(env.container_runtime, "docker");
}

TEST(DetectEnvironment, ContainerenvMarksPodman) {
  FakeProcTree tree;
  tree.Write("run/.containerenv", "engine=\"podman-4.3.1\"\n");
  Environment env = DetectEnvironment(ProbeOf(tree));
  EXPECT_TRUE(env.in_container);
  EXPECT_EQ(env.container_runtime, "podman");
}

TEST(DetectEnvironment, KubernetesServiceVariableMarksKubernetes) {
  FakeProcTree tree;
  EnvironmentProbe probe = ProbeOf(tree);
  probe.kubernetes_service_host = "10.96.0.1";
  Environment env = DetectEnvironment(probe);
  EXPECT_TRUE(env.in_container);
  EXPECT_EQ(env.container_runtime, "kubernetes");
}

TEST(DetectEnvironment, OwnCgroupNamesTheRuntimeOverMarkerFiles) {
  FakeProcTree tree;
  tree.Write(".dockerenv", "");
  tree.SetSelfCgroup(
      "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1c2d3e4f_0000_1111_"
      "2222_333344445555.slice/cri-containerd-"
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope\n");
  Environment env = DetectEnvironment(ProbeOf(tree));
  EXPECT_TRUE(env.in_container);
  EXPECT_EQ(env.container_runtime, "containerd");
}

}  // namespace
}  // namespace gpuwatch::host
