// What the resolver reads of a process once (its user, command line and
// cgroup) and what it reads every sample (stat for CPU and identity, statm
// for RSS): the first is read again after an exec, after
// ProcessResolver::kIdentityRefresh, and while it was incomplete.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

#include "fake_proc.h"
#include "host/proc_parse.h"
#include "host/process_resolver.h"

namespace gpuwatch::host {
namespace {

using testing::FakeProcess;
using testing::FakeProcTree;
using testing::ResolveOnce;
using testing::Trainer;

constexpr double kMiB = 1024.0 * 1024.0;

double Rss(const ProcessSample& p) { return p.fields[FieldId::kProcessRssBytes].number(); }

// The trainer as another user with another command line, cgroup and RSS.
FakeProcess Changed(FakeProcess p) {
  p.uid = 1002;
  p.argv = {"python", "eval.py"};
  p.cgroup = "0::/slurm/uid_1002/job_77/step_0\n";
  p.rss_kb = 3 * 1024;
  return p;
}

// A tree with `proc` in it, and a resolver that has seen it in one sample.
class ProcessIdentity : public ::testing::Test {
 protected:
  ProcessResolver& SeenOnce(const FakeProcess& first) {
    tree.Add(first);
    resolver.emplace(tree.Options());
    first_ = ResolveOnce(*resolver, first.pid);
    resolver->EndSample();
    return *resolver;
  }
  const ProcessSample& first() const { return first_; }

  FakeProcTree tree;
  FakeProcess proc = Trainer();
  std::optional<ProcessResolver> resolver;

 private:
  ProcessSample first_;
};

TEST_F(ProcessIdentity, RssIsReadEverySampleAndTheRestOnceUntilTheRefresh) {
  ProcessResolver& r = SeenOnce(proc);
  EXPECT_EQ(first().host.user, "alice");

  tree.Add(Changed(proc));
  tree.now += ProcessResolver::kIdentityRefresh - std::chrono::seconds(1);
  ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_DOUBLE_EQ(Rss(p), 3 * kMiB) << "RSS from statm, every sample";
  EXPECT_EQ(p.host.user, "alice") << "the user as first read, until the refresh";
  EXPECT_EQ(p.host.command, "python train.py --run-name my run --rank 0");
  EXPECT_EQ(p.host.slurm_job_id, "");
  r.EndSample();

  tree.now += std::chrono::seconds(1);
  p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.host.user, "bob");
  EXPECT_EQ(p.host.command, "python eval.py");
  EXPECT_EQ(p.host.slurm_job_id, "77");
  EXPECT_DOUBLE_EQ(Rss(p), 3 * kMiB);
}

TEST_F(ProcessIdentity, AnExecIsSeenAtOnce) {
  proc.comm = "bash";
  proc.argv = {"bash", "run.sh"};
  ProcessResolver& r = SeenOnce(proc);
  EXPECT_EQ(first().host.command, "bash run.sh");
  proc.comm = "python";  // exec keeps the pid and the start time, and changes comm
  proc.argv = {"python", "train.py"};
  tree.Add(proc);
  const ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.host.name, "python");
  EXPECT_EQ(p.host.command, "python train.py");
}

TEST_F(ProcessIdentity, AProcessCaughtBeforeItsCommandLineIsReadAgain) {
  proc.argv = {};
  ProcessResolver& r = SeenOnce(proc);
  EXPECT_EQ(first().host.command, "[python]");
  proc.argv = {"python", "train.py"};
  tree.Add(proc);
  EXPECT_EQ(ResolveOnce(r, 4242).host.command, "python train.py");
}

TEST_F(ProcessIdentity, WhatWasReadIsForgottenWithASampleThatDidNotListIt) {
  ProcessResolver& r = SeenOnce(proc);
  r.EndSample();  // a sample in which 4242 was not listed
  tree.Add(Changed(proc));
  EXPECT_EQ(ResolveOnce(r, 4242).host.user, "bob") << "read again, before the refresh";
}

TEST_F(ProcessIdentity, AReusedPidIsReadAsTheNewProcessItIs) {
  ProcessResolver& r = SeenOnce(proc);
  FakeProcess successor = Changed(proc);
  successor.start_ticks += 500;
  tree.Add(successor);
  const ProcessSample p = ResolveOnce(r, 4242);
  EXPECT_EQ(p.host.user, "bob");
  EXPECT_EQ(p.host.command, "python eval.py");
}

TEST_F(ProcessIdentity, WithoutStatmRssComesFromStatusAndAZombieHasNone) {
  ProcessResolver& r = SeenOnce(proc);
  std::filesystem::remove(tree.proc() / "4242" / "statm");  // a sparse tree
  EXPECT_DOUBLE_EQ(Rss(ResolveOnce(r, 4242)), 12 * 1024 * kMiB);
  r.EndSample();
  proc.rss_kb.reset();  // a zombie: statm all 0, no VmRSS
  tree.Add(proc);
  const ProcessSample zombie = ResolveOnce(r, 4242);
  const Reading& rss = zombie.fields[FieldId::kProcessRssBytes];
  EXPECT_FALSE(rss.is_number());
  EXPECT_NE(rss.detail().find("zombie"), std::string::npos) << rss.detail();
}

TEST_F(ProcessIdentity, AProcessThatExitsIsExitedThoughItsIdentityIsKnown) {
  ProcessResolver& r = SeenOnce(proc);
  tree.Remove(4242);
  EXPECT_EQ(ResolveOnce(r, 4242).host.visibility, HostProcess::Visibility::kExited);
}

TEST(ParseStatm, ResidentPagesAndNoneForAZombieOrNotStatm) {
  EXPECT_EQ(ParseStatmResidentPages("4242 1234 300 20 0 900 0\n"), 1234u);
  EXPECT_EQ(ParseStatmResidentPages("0 0 0 0 0 0 0\n"), std::nullopt);
  EXPECT_EQ(ParseStatmResidentPages(""), std::nullopt);
  EXPECT_EQ(ParseStatmResidentPages("12"), std::nullopt);
  EXPECT_EQ(ParseStatmResidentPages("Name:\tpython\n"), std::nullopt);
  EXPECT_EQ(ParseStatmResidentPages("10 -5 0"), std::nullopt);
}

}  // namespace
}  // namespace gpuwatch::host
