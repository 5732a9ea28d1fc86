#include "model_defaults.h"

#include <cstdio>
#include <string_view>

namespace gpuwatch::fake_nvml {
namespace {

constexpr double kMiB = 1048576.0;

struct Family {
  std::string_view match;  // substring of the device name
  unsigned device_id, subsystem_id;
  int cc_major, cc_minor;
  double memory_mib, reserved_mib, bar1_mib;
  double limit_w, min_w;
  unsigned max_sm, max_mem, max_video;
  unsigned pcie_gen;
  const char* vbios;
  bool memory_temperature;
  bool fan;
  ModelTraits traits;
};

// First match wins: more specific names first.
constexpr Family kFamilies[] = {
    {"H200",
     0x233510DE,
     0x18BF10DE,
     9,
     0,
     143771,
     616,
     262144,
     700,
     200,
     1980,
     3201,
     1755,
     5,
     "96.00.A5.00.1A",
     true,
     false,
     {true, true, 0, 83.2, 36, 375, 405, 765}},
    {"H100",
     0x233010DE,
     0x16C110DE,
     9,
     0,
     81559,
     527,
     131072,
     700,
     200,
     1980,
     2619,
     1755,
     5,
     "96.00.99.00.01",
     true,
     false,
     {true, true, 0, 72, 33, 345, 345, 765}},
    {"A100-SXM4-80GB",
     0x20B210DE,
     0x147F10DE,
     8,
     0,
     81920,
     567,
     131072,
     400,
     100,
     1410,
     1593,
     1290,
     4,
     "92.00.45.00.03",
     true,
     false,
     {true, true, 0, 62, 31, 210, 210, 585}},
    {"A100",
     0x20B010DE,
     0x134F10DE,
     8,
     0,
     40960,
     390,
     65536,
     400,
     100,
     1410,
     1215,
     1290,
     4,
     "92.00.25.00.08",
     true,
     false,
     {true, true, 0, 55, 30, 210, 210, 585}},
    {"L40S",
     0x26B910DE,
     0x185110DE,
     8,
     9,
     46068,
     441,
     65536,
     350,
     100,
     2520,
     9001,
     1965,
     4,
     "95.02.66.00.02",
     false,
     true,
     {false, false, 8, 31, 30, 210, 210, 765}},
    {"",
     0x20B510DE,
     0x153310DE,
     8,
     0,
     24576,
     300,
     32768,
     300,
     100,
     1800,
     5001,
     1500,
     4,
     "90.00.00.00.01",
     false,
     false,
     {false, false, 8, 25, 30, 210, 210, 555}},
};

const Family& FindFamily(const std::string& name) {
  for (const Family& f : kFamilies) {
    if (name.find(f.match) != std::string::npos) return f;
  }
  return kFamilies[std::size(kFamilies) - 1];
}

constexpr unsigned kBusIds[] = {0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB};

}  // namespace

std::string MakeUuid(const char* prefix, std::uint64_t seed) {
  const std::uint64_t a = HashString("uuid-a", seed), b = HashString("uuid-b", seed);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s-%08x-%04x-%04x-%04x-%012llx", prefix,
                static_cast<unsigned>(a >> 32), static_cast<unsigned>((a >> 16) & 0xFFFF),
                static_cast<unsigned>(a & 0xFFFF), static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFull));
  return buf;
}

double MigProfileMemoryBytes(const std::string& profile) {
  struct Known {
    std::string_view profile;
    double mib;
  };
  static constexpr Known kKnown[] = {{"1g.10gb", 9856},  {"1g.20gb", 19968}, {"2g.20gb", 19968},
                                     {"3g.40gb", 40192}, {"4g.40gb", 40192}, {"7g.80gb", 80256},
                                     {"1g.18gb", 16384}, {"3g.71gb", 69632}, {"7g.141gb", 140288}};
  for (const Known& k : kKnown) {
    if (profile == k.profile) return k.mib * kMiB;
  }
  unsigned slices = 0, gb = 0;
  if (std::sscanf(profile.c_str(), "%ug.%ugb", &slices, &gb) == 2) return gb * 1024.0 * kMiB;
  return 0;
}

DeviceSpec DefaultDevice(const std::string& name, unsigned index) {
  const Family& f = FindFamily(name);
  DeviceSpec d;
  d.name = name;
  d.traits = f.traits;
  d.uuid = MakeUuid("GPU", 0x6770750000ull + index);
  char buf[64];
  std::snprintf(buf, sizeof buf, "16540240%05u", 76251 + index * 7);
  d.serial = buf;
  std::snprintf(buf, sizeof buf, "00000000:%02X:00.0",
                (kBusIds[index % std::size(kBusIds)] + index / 8) & 0xFFu);
  d.pci_bus_id = buf;
  d.vbios = f.vbios;
  d.pci_device_id = f.device_id;
  d.pci_subsystem_id = f.subsystem_id;
  d.cc_major = f.cc_major;
  d.cc_minor = f.cc_minor;
  d.memory_total_bytes = f.memory_mib * kMiB;
  d.memory_reserved = Series::Constant(f.reserved_mib * kMiB);
  d.bar1_total_bytes = f.bar1_mib * kMiB;
  d.bar1_used = Series::Constant(2 * kMiB);
  d.memory_overhead_bytes = 0;
  d.power_limit_w = d.power_default_w = d.power_max_w = d.power_enforced_w = f.limit_w;
  d.power_min_w = f.min_w;
  d.max_sm_mhz = d.max_graphics_mhz = f.max_sm;
  d.max_mem_mhz = f.max_mem;
  d.max_video_mhz = f.max_video;
  d.pcie_gen_max = d.pcie_gen_current = f.pcie_gen;
  d.pcie_width_max = d.pcie_width_current = 16;
  d.has_memory_temperature = f.memory_temperature;
  if (f.fan) d.fan = Series::Constant(30);
  return d;
}

}  // namespace gpuwatch::fake_nvml
