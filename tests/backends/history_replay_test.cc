// ReplayBackend on SQLite histories written by the real store::HistoryWriter:
// what a history plays back (samples, facts, processes, events and marks, an
// open writer's file, what retention removed, MIG and identity notes). Bad and
// damaged histories, and the format sniff: history_replay_faults_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "history_fixture.h"

namespace gpuwatch {
namespace {

using namespace history_test;
using ::testing::HasSubstr;

TEST_F(ReplayDir, HistoryOfTheDemoFleetReplaysAsDemo) {
  const std::string path = File("demo.db");
  {
    auto w = Writer(path);
    w->Append(HistorySample(0));
    auto simulated = std::make_shared<Snapshot>(*HistorySample(1));
    simulated->demo = true;
    w->Append(simulated);
    ASSERT_TRUE(w->Flush().ok());
  }
  auto b = Replay(path);
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->info().demo) << "simulated samples are never shown as real ones";
}

TEST_F(ReplayDir, HistoryPlaysSamplesFactsAndProcessesOfEveryGpu) {
  const std::string path = File("h.db");
  WriteSamples(*Writer(path), 0, 3);

  auto b = Replay(path);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->format(), ReplayBackend::Format::kHistory);
  EXPECT_EQ(b->DeviceCount(), 2);
  EXPECT_EQ(b->samples(), 3u);
  EXPECT_EQ(b->ReadHost()[FieldId::kDeviceCount].number(), 2);
  EXPECT_THAT(b->notes(), ::testing::IsEmpty());
  EXPECT_FALSE(b->info().demo);
  for (int i = 0; i < 3; ++i) {
    DeviceSample d0, d1;
    b->ReadDevice(0, AllFields(), true, d0);
    b->ReadDevice(1, AllFields(), true, d1);
    EXPECT_EQ(*b->SampleTime(), kHistoryT0 + seconds(i));
    EXPECT_EQ(b->Finished(), i == 2);

    EXPECT_EQ(d0.fields[FieldId::kName].text(), "NVIDIA H200") << "facts from the devices table";
    EXPECT_EQ(d0.fields[FieldId::kUuid].text(), "GPU-0aaa");
    EXPECT_EQ(d1.fields[FieldId::kUuid].text(), "GPU-1aaa");
    EXPECT_EQ(d0.fields[FieldId::kMemoryTotalBytes].number(), 150754820096.0);
    EXPECT_EQ(d1.fields[FieldId::kIndex].number(), 1);
    EXPECT_EQ(d0.fields[FieldId::kSerial].missing(), Missing::kNotYetSampled)
        << "a fact the history does not keep is absent, never made up";
    EXPECT_EQ(d0.fields[FieldId::kMemoryUsedBytes].number(), 1e9 * (i + 1));
    EXPECT_EQ(d1.fields[FieldId::kMemoryUsedBytes].number(), 5e8);
    EXPECT_EQ(d1.fields[FieldId::kUtilizationGpuRatio].number(), 0.25);
    EXPECT_FALSE(d0.fields[FieldId::kFanSpeedRatio].ok()) << "N/A stays N/A, never 0";

    ASSERT_EQ(d0.processes.size(), 1u);
    const ProcessSample& p = d0.processes[0];
    EXPECT_EQ(p.pid, 4242u);
    EXPECT_EQ(p.fields[FieldId::kProcessUsedMemoryBytes].number(), 1e8 * (i + 1));
    EXPECT_EQ(p.host.visibility, HostProcess::Visibility::kVisible);
    EXPECT_EQ(p.host.name, "python");
    EXPECT_EQ(p.host.command, "python train.py --lr 0.1");
    EXPECT_EQ(p.host.user, "alice");
    EXPECT_EQ(p.host.start_ticks, 5242u);
    EXPECT_EQ(p.host.start_time, kHistoryT0 - seconds(30));
    EXPECT_EQ(p.host.container_id, "0123456789ab");
    EXPECT_EQ(p.host.container_runtime, "docker");
    EXPECT_EQ(p.host.pod_uid, "pod-1");
    EXPECT_EQ(p.host.slurm_job_id, "4242");

    ASSERT_EQ(d1.processes.size(), 1u);
    EXPECT_EQ(d1.processes[0].pid, 777u);
    EXPECT_EQ(d1.processes[0].host.visibility, HostProcess::Visibility::kOtherPidNs)
        << "recorded without attribution";
  }
}

TEST_F(ReplayDir, HistoryEventsAndMarksComeBackInTimeOrder) {
  const std::string path = File("h.db");
  {
    auto w = Writer(path);
    Event alert;
    alert.time = kHistoryT0 + milliseconds(1500);
    alert.kind = Event::Kind::kAlertFiring;
    alert.severity = Severity::kWarning;
    alert.source = "gpu_hot";
    alert.gpu = 1;
    alert.process = ProcessKey{4242, 5242};
    alert.value = 88;
    alert.message = "GPU-1 is hot";
    w->Append(alert);
    w->AppendMark({kHistoryT0 + milliseconds(1200), store::Mark::Kind::kStep, 120.0, "",
                   ProcessKey{4242, 5242}});
    w->AppendMark({kHistoryT0 + milliseconds(100), store::Mark::Kind::kPhase, std::nullopt, "train",
                   std::nullopt});
    w->AppendMark(
        {kHistoryT0 + milliseconds(2500), store::Mark::Kind::kEpoch, 2.5, "", std::nullopt});
    WriteSamples(*w, 0, 3);
  }

  auto b = Replay(path);
  ASSERT_TRUE(b);
  const std::vector<Event>& e = b->events();
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].kind, Event::Kind::kMark);
  EXPECT_EQ(e[0].time, kHistoryT0 + milliseconds(100));
  EXPECT_EQ(e[0].source, "phase");
  EXPECT_EQ(e[0].message, "phase train");
  EXPECT_FALSE(e[0].value);

  EXPECT_EQ(e[1].source, "step");
  EXPECT_EQ(e[1].message, "step 120");
  EXPECT_EQ(e[1].value, 120.0);
  EXPECT_EQ(e[1].process, (ProcessKey{4242, 5242}));

  EXPECT_EQ(e[2].kind, Event::Kind::kAlertFiring);
  EXPECT_EQ(e[2].time, kHistoryT0 + milliseconds(1500));
  EXPECT_EQ(e[2].severity, Severity::kWarning);
  EXPECT_EQ(e[2].source, "gpu_hot");
  EXPECT_EQ(e[2].gpu, 1);
  EXPECT_EQ(e[2].process, (ProcessKey{4242, 5242}));
  EXPECT_EQ(e[2].value, 88.0);
  EXPECT_EQ(e[2].message, "GPU-1 is hot");

  EXPECT_EQ(e[3].message, "epoch 2.5");
  EXPECT_TRUE(b->framework().empty()) << "the history has no framework table yet";
}

TEST_F(ReplayDir, HistoryAnOpenWriterIsWritingCanBeReplayed) {
  const std::string path = File("live.db");
  auto w = Writer(path);
  ASSERT_TRUE(w);
  WriteSamples(*w, 0, 2);
  auto first = Replay(path);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->samples(), 2u);

  WriteSamples(*w, 2, 5);
  auto second = Replay(path);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->samples(), 5u) << "sees what the writer committed since";
  DeviceSample d;
  second->ReadDevice(0, AllFields(), true, d);
  EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].number(), 1e9);
  EXPECT_EQ(d.processes.size(), 1u);
  WriteSamples(*w, 5, 6);  // the writer goes on after being read
  EXPECT_EQ(w->stats().snapshots_written, 6u);
}

TEST_F(ReplayDir, HistoryRawSamplesRemovedByRetentionAreReplayedWithANote) {
  const std::string path = File("old.db");
  store::HistoryOptions options;
  options.retention.raw = std::chrono::minutes(10);
  options.batch_interval = milliseconds(5);
  auto w = Writer(path, options);
  ASSERT_TRUE(w);
  // One sample a minute for three hours: raw keeps only the last 10 minutes
  // once the minute and hour tiers cover the rest.
  for (int m = 0; m <= 180; ++m) {
    auto s = std::make_shared<Snapshot>();
    s->time = kHistoryT0 + std::chrono::minutes(m);
    s->devices.push_back(Gpu(0, 1e9 + m));
    w->Append(std::move(s));
  }
  ASSERT_TRUE(w->Flush().ok());
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  std::size_t samples = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto b = ReplayBackend::Open({path, 0});
    ASSERT_TRUE(b) << b.error().message();
    samples = (*b)->samples();
    if (samples <= 11) break;  // retention has worked the backlog off
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_LE(samples, 11u) << "retention did not run";
  w.reset();

  auto b = Replay(path);
  ASSERT_TRUE(b);
  EXPECT_GE(*b->SampleTime(), kHistoryT0 + std::chrono::minutes(170));
  DeviceSample d;
  b->ReadDevice(0, AllFields(), false, d);
  EXPECT_GE(d.fields[FieldId::kMemoryUsedBytes].number(), 1e9 + 170);
  ASSERT_EQ(b->notes().size(), 1u);
  EXPECT_THAT(b->notes()[0], HasSubstr("retention"));
  EXPECT_THAT(b->notes()[0], HasSubstr("the history at 2024-01-01T00:00:00Z"));
}

TEST_F(ReplayDir, HistoryMigDevicesAreLeftOutWithANote) {
  const std::string path = File("mig.db");
  {
    auto w = Writer(path);
    auto s = std::make_shared<Snapshot>(*HistorySample(0));
    DeviceSample mig = Gpu(0, 1e6);
    mig.mig_index = 1;
    mig.fields[FieldId::kUuid] = Reading::Text("MIG-0001");
    s->mig_devices.push_back(mig);
    w->Append(s);
    ASSERT_TRUE(w->Flush().ok());
  }
  auto b = Replay(path);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->DeviceCount(), 2) << "whole GPUs only, as in --jsonl recordings";
  DeviceSample d;
  b->ReadDevice(0, AllFields(), true, d);
  EXPECT_EQ(d.fields[FieldId::kMemoryUsedBytes].number(), 1e9) << "the parent, not the MIG device";
  EXPECT_EQ(d.processes.size(), 1u);
  ASSERT_EQ(b->notes().size(), 1u);
  EXPECT_THAT(b->notes()[0], HasSubstr("1 MIG device(s) in the history are not replayed"));
}

TEST_F(ReplayDir, HistoryGpusSeenUnderTwoIdentitiesOrMissingIndicesAreNoted) {
  const std::string path = File("ids.db");
  {
    auto w = Writer(path);
    auto first = std::make_shared<Snapshot>();  // GPU 0's uuid not read yet
    first->time = kHistoryT0;
    first->devices.push_back(Gpu(0, 1e9));
    first->devices[0].fields[FieldId::kUuid] = Reading::Absent(Missing::kFailed);
    first->devices.push_back(Gpu(2, 2e9));
    first->devices[1].fields[FieldId::kName] = Reading::Text("NVIDIA H100");
    auto second = std::make_shared<Snapshot>(*first);
    second->time = kHistoryT0 + seconds(1);
    second->devices[0] = Gpu(0, 3e9);
    w->Append(first);
    w->Append(second);
    ASSERT_TRUE(w->Flush().ok());
  }
  auto b = Replay(path);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->DeviceCount(), 3) << "indices as recorded";
  EXPECT_EQ(b->samples(), 2u);
  DeviceSample d0, d1, d2;
  b->ReadDevice(0, AllFields(), false, d0);
  b->ReadDevice(1, AllFields(), false, d1);
  b->ReadDevice(2, AllFields(), false, d2);
  EXPECT_EQ(d0.fields[FieldId::kMemoryUsedBytes].number(), 1e9);
  EXPECT_EQ(d0.fields[FieldId::kUuid].text(), "GPU-0aaa") << "the identity seen last";
  EXPECT_FALSE(d1.fields[FieldId::kMemoryUsedBytes].ok());
  EXPECT_EQ(d2.fields[FieldId::kName].text(), "NVIDIA H100");
  b->ReadDevice(0, AllFields(), false, d0);
  EXPECT_EQ(d0.fields[FieldId::kMemoryUsedBytes].number(), 3e9) << "one GPU across identities";
  EXPECT_THAT(
      b->notes(),
      ::testing::UnorderedElementsAre(
          "GPU 1 is not in the history: replayed without values",
          "GPU 0 was recorded under 2 identities (index:0, GPU-0aaa): replayed as one GPU"));
}

}  // namespace
}  // namespace gpuwatch
