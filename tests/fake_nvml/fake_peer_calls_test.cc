// The entry points only other monitors call (nvml_peer_calls.cc): present,
// and answering as a driver does, so that nvtop runs on the fake.
#include <cstring>

#include "fake_nvml_fixture.h"

namespace {

// The first nvmlPciInfo_t, as a caller of nvmlDeviceGetPciInfo lays it out.
struct PciInfoV1 {
  char busId[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  unsigned int reserved[4];
};

TEST_F(FakeNvml, TheFirstPciInfoFillsOnlyItsOwnFiftyTwoBytes) {
  Start(Scenario("fixed.yaml"), 100);
  using Fn = nvmlReturn_t (*)(nvmlDevice_t, PciInfoV1*);
  const auto get = Resolve<Fn>(Library(), "nvmlDeviceGetPciInfo");
  ASSERT_NE(get, nullptr);
  // A caller's struct with a canary right after it: the first struct is 52
  // bytes, the later one 68; writing the later one would reach the canary.
  struct {
    PciInfoV1 pci;
    unsigned char canary[16];
  } buffer;
  std::memset(&buffer, 0xAB, sizeof buffer);
  ASSERT_EQ(get(Device(0), &buffer.pci), NVML_SUCCESS);
  EXPECT_STREQ(buffer.pci.busId, "0000:18:00.0");
  EXPECT_EQ(buffer.pci.domain, 0u);
  EXPECT_EQ(buffer.pci.bus, 0x18u);
  EXPECT_EQ(buffer.pci.device, 0u);
  EXPECT_EQ(buffer.pci.pciDeviceId, 0x233510DEu);
  EXPECT_EQ(buffer.pci.reserved[0], 0u);
  EXPECT_EQ(buffer.pci.reserved[3], 0u);
  for (unsigned char c : buffer.canary) EXPECT_EQ(c, 0xAB);
  EXPECT_EQ(get(Device(0), nullptr), NVML_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeNvml, TemperatureThresholdsAreNotSupported) {
  Start(Scenario("fixed.yaml"), 100);
  using Fn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned*);
  const auto get = Resolve<Fn>(Library(), "nvmlDeviceGetTemperatureThreshold");
  ASSERT_NE(get, nullptr);
  unsigned value = 7;
  EXPECT_EQ(get(Device(0), 0, &value), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(value, 7u);
  EXPECT_EQ(get(Device(0), 0, nullptr), NVML_ERROR_INVALID_ARGUMENT);
}

}  // namespace
