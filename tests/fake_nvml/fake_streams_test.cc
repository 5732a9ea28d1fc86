// The fake library's streams: XID events through event sets, and the
// driver's sample buffers read with lastSeenTimeStamp.
#include "fake_nvml_fixture.h"

namespace {

constexpr const char* kStreams = R"(
devices:
  - name: NVIDIA H200
    utilization_gpu: {steps: [[0, 20], [20, 80]]}
    power_instant: {steps: [[0, 300], [10.50, 690], [10.54, 300]]}
    xid:
      - {at: 5s, code: 13}
      - {at: 30s, code: 79}
      - {at: 40s, code: 31}
  - name: NVIDIA H200
)";

nvmlReturn_t Wait(nvmlEventSet_t set, nvmlEventData_t* data) {
  return NVML(nvmlEventSetWait_v2)(set, data, 0);
}

TEST_F(FakeNvml, XidEventsArriveOnceEachAfterRegistration) {
  Start(Write("streams.yaml", kStreams), 10);
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(NVML(nvmlEventSetCreate)(&set), NVML_SUCCESS);
  ASSERT_EQ(NVML(nvmlDeviceRegisterEvents)(Device(0), nvmlEventTypeXidCriticalError, set),
            NVML_SUCCESS);
  ASSERT_EQ(NVML(nvmlDeviceRegisterEvents)(Device(1), nvmlEventTypeXidCriticalError, set),
            NVML_SUCCESS);
  nvmlEventData_t data{};
  EXPECT_EQ(Wait(set, &data), NVML_ERROR_TIMEOUT) << "the XID at 5 s came before registration";

  At(35);
  ASSERT_EQ(Wait(set, &data), NVML_SUCCESS);
  EXPECT_EQ(data.device, Device(0));
  EXPECT_EQ(data.eventType, nvmlEventTypeXidCriticalError);
  EXPECT_EQ(data.eventData, 79u);
  EXPECT_EQ(data.gpuInstanceId, NVML_INVALID_INSTANCE_ID);
  EXPECT_EQ(Wait(set, &data), NVML_ERROR_TIMEOUT) << "delivered once";

  At(60);
  ASSERT_EQ(Wait(set, &data), NVML_SUCCESS);
  EXPECT_EQ(data.eventData, 31u);
  EXPECT_EQ(Wait(set, &data), NVML_ERROR_TIMEOUT);

  EXPECT_EQ(NVML(nvmlEventSetFree)(set), NVML_SUCCESS);
  EXPECT_EQ(Wait(set, &data), NVML_ERROR_INVALID_ARGUMENT) << "a freed set";
}

TEST_F(FakeNvml, EventRegistrationRejectsWhatItCannotDeliver) {
  Start(Write("streams.yaml", kStreams), 0);
  nvmlEventSet_t set = nullptr;
  ASSERT_EQ(NVML(nvmlEventSetCreate)(&set), NVML_SUCCESS);
  EXPECT_EQ(NVML(nvmlDeviceRegisterEvents)(Device(0), 0x1 /* single-bit ECC */, set),
            NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(NVML(nvmlDeviceRegisterEvents)(Device(0), nvmlEventTypeXidCriticalError, nullptr),
            NVML_ERROR_INVALID_ARGUMENT);
  nvmlEventData_t data{};
  EXPECT_EQ(NVML(nvmlEventSetWait_v2)(set, nullptr, 0), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Wait(set, &data), NVML_ERROR_TIMEOUT) << "an empty set has nothing to deliver";
  EXPECT_EQ(NVML(nvmlEventSetFree)(set), NVML_SUCCESS);
}

// Reads every new sample of `type` after `last_seen`, which moves on.
std::vector<nvmlSample_t> Samples(nvmlDevice_t device, int type, unsigned long long& last_seen,
                                  nvmlReturn_t* rc) {
  int value_type = -1;
  unsigned count = 0;
  *rc = NVML(nvmlDeviceGetSamples)(device, type, last_seen, &value_type, &count, nullptr);
  if (*rc != NVML_SUCCESS) return {};
  std::vector<nvmlSample_t> out(count);
  *rc = NVML(nvmlDeviceGetSamples)(device, type, last_seen, &value_type, &count, out.data());
  EXPECT_EQ(value_type, NVML_VALUE_TYPE_UNSIGNED_INT);
  out.resize(count);
  for (const auto& s : out) last_seen = std::max(last_seen, s.timeStamp);
  return out;
}

TEST_F(FakeNvml, PowerSamplesShowA40MsSpikeBetweenOneSecondReads) {
  Start(Write("streams.yaml", kStreams), 10);
  unsigned long long last_seen = 0;
  nvmlReturn_t rc = 0;
  std::vector<nvmlSample_t> first = Samples(Device(0), NVML_TOTAL_POWER_SAMPLES, last_seen, &rc);
  ASSERT_EQ(rc, NVML_SUCCESS);
  EXPECT_EQ(first.size(), 119u) << "the buffer holds the last 119 samples (2.36 s at 20 ms)";

  At(11);
  std::vector<nvmlSample_t> next = Samples(Device(0), NVML_TOTAL_POWER_SAMPLES, last_seen, &rc);
  ASSERT_EQ(rc, NVML_SUCCESS);
  EXPECT_EQ(next.size(), 50u) << "one second of 20 ms samples, none repeated";
  unsigned peak = 0;
  for (const auto& s : next) peak = std::max(peak, s.sampleValue.uiVal);
  EXPECT_EQ(peak, 690000u) << "mW: the 40 ms spike at 10.5 s";
  nvmlUtilization_t u{};
  ASSERT_EQ(NVML(nvmlDeviceGetUtilizationRates)(Device(0), &u), NVML_SUCCESS);

  Samples(Device(0), NVML_TOTAL_POWER_SAMPLES, last_seen, &rc);
  EXPECT_EQ(rc, NVML_ERROR_NOT_FOUND) << "nothing new at the same time";
}

TEST_F(FakeNvml, UtilizationSamplesCoverTheWholeInterval) {
  Start(Write("streams.yaml", kStreams), 15);
  unsigned long long last_seen = 0;
  nvmlReturn_t rc = 0;
  Samples(Device(0), NVML_GPU_UTILIZATION_SAMPLES, last_seen, &rc);
  ASSERT_EQ(rc, NVML_SUCCESS);
  At(25);
  std::vector<nvmlSample_t> s = Samples(Device(0), NVML_GPU_UTILIZATION_SAMPLES, last_seen, &rc);
  ASSERT_EQ(rc, NVML_SUCCESS);
  ASSERT_EQ(s.size(), 50u) << "10 s at 5 samples per second";
  double sum = 0;
  for (const auto& x : s) sum += x.sampleValue.uiVal;
  EXPECT_DOUBLE_EQ(sum / 50, (24 * 20 + 26 * 80) / 50.0)
      << "15.2 s .. 19.8 s at 20 %, 20.0 s .. 25.0 s at 80 %";

  int value_type = 0;
  unsigned count = 0;
  EXPECT_EQ(NVML(nvmlDeviceGetSamples)(Device(0), 7, 0, &value_type, &count, nullptr),
            NVML_ERROR_NOT_SUPPORTED)
      << "sample types the fake does not model";
  std::vector<nvmlSample_t> small(2);
  count = 2;
  EXPECT_EQ(NVML(nvmlDeviceGetSamples)(Device(0), NVML_TOTAL_POWER_SAMPLES, 0, &value_type, &count,
                                       small.data()),
            NVML_ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 119u) << "says how many it holds";
}

TEST_F(FakeNvml, XidEntriesAreCheckedWhenTheScenarioLoads) {
  setenv("GPUWATCH_FAKE_SCENARIO",
         Write("bad_xid.yaml", "devices:\n  - name: NVIDIA H200\n    xid: [{at: 5s}]\n").c_str(),
         1);
  EXPECT_EQ(NVML(nvmlInit_v2)(), NVML_ERROR_UNKNOWN);
  setenv("GPUWATCH_FAKE_SCENARIO",
         Write("bad_xid2.yaml", "devices:\n  - name: NVIDIA H200\n    xid: [{at: 5s, code: 0}]\n")
             .c_str(),
         1);
  EXPECT_EQ(NVML(nvmlInit_v2)(), NVML_ERROR_UNKNOWN);
}

}  // namespace
