// The kubelet's log link names: what is a container's entry, and what is not.
#include "host/kube_pods.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_proc.h"

namespace gpuwatch::host {
namespace {

const std::string kId(64, 'a');

TEST(KubeletLogName, PodNamespaceContainerAndId) {
  std::string id;
  auto ref =
      ParseKubeletLogName("coredns-5d78c9869d-x7k2p_kube-system_coredns-" + kId + ".log", id);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(*ref, (PodRef{"coredns-5d78c9869d-x7k2p", "kube-system", "coredns"}));
  EXPECT_EQ(id, kId);
}

TEST(KubeletLogName, OtherNamesAreNotEntries) {
  std::string id;
  for (const std::string& name : std::vector<std::string>{
           "pod_ns_ctr-" + kId,                            // no .log
           "pod_ns_ctr-" + kId.substr(1) + ".log",         // 63 digits
           "pod_ns_ctr-" + std::string(64, 'G') + ".log",  // not hex
           "pod_ns_ctr_" + kId + ".log",                   // no dash before the id
           "pod_ctr-" + kId + ".log",                      // two parts
           "pod_ns_ctr_x-" + kId + ".log",                 // four parts
           "_ns_ctr-" + kId + ".log",                      // an empty part
           "-" + kId + ".log",
           std::string(".log"),
       }) {
    EXPECT_FALSE(ParseKubeletLogName(name, id).has_value()) << name;
  }
}

TEST(KubePods, FindsByFullIdAndNothingWithoutTheDirectory) {
  testing::FakeProcTree tree;
  tree.Write("links/train_team-a_trainer-" + kId + ".log", "");
  tree.Write("links/README", "");
  KubePods pods(tree.root() / "links");
  ASSERT_TRUE(pods.Find(kId).has_value());
  EXPECT_EQ(pods.Find(kId)->pod, "train");
  EXPECT_FALSE(pods.Find(kId.substr(0, 12)).has_value()) << "a short id names no entry";
  EXPECT_FALSE(pods.Find(std::string(64, 'b')).has_value());
  KubePods none(tree.root() / "missing");
  EXPECT_FALSE(none.Find(kId).has_value());
}

}  // namespace
}  // namespace gpuwatch::host
