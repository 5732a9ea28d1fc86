// The compatibility families of /metrics: dcgm-exporter's names and units
// (--dcgm-compat) and nvidia_gpu_exporter's (--nvidia-smi-compat), beside
// gpuwatch's own, which stay.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <regex>

#include "metrics_test_util.h"

namespace gpuwatch {
namespace {

using namespace metrics_test;

TEST(Metrics, DcgmCompatUsesDcgmNamesAndUnits) {
  const Snapshot s = Fixed();
  MetricsOptions o;
  o.dcgm_compat = true;
  const std::string text = Render(s, o);
  const double used = s.devices[0].fields[FieldId::kMemoryUsedBytes].number();
  const double util = s.devices[0].fields[FieldId::kUtilizationGpuRatio].number();
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(text, m, std::regex("DCGM_FI_DEV_FB_USED\\{gpu=\"0\"[^}]*\\} (\\S+)")));
  EXPECT_DOUBLE_EQ(std::stod(m[1]), used / (1024 * 1024)) << "MiB";
  ASSERT_TRUE(
      std::regex_search(text, m, std::regex("DCGM_FI_DEV_GPU_UTIL\\{gpu=\"0\"[^}]*\\} (\\S+)")));
  EXPECT_DOUBLE_EQ(std::stod(m[1]), util * 100) << "percent";
  EXPECT_NE(text.find("modelName=\"NVIDIA H200\""), std::string::npos);
  EXPECT_NE(text.find("Hostname=\"node1\""), std::string::npos);
  EXPECT_NE(text.find("gpuwatch_memory_used_bytes{"), std::string::npos) << "gpuwatch's own stay";
}

TEST(Metrics, DcgmCountersHaveOneTypeAndOneNameInBothFormats) {
  const Snapshot s = Fixed();
  MetricsOptions o;
  o.dcgm_compat = true;
  const std::string plain = Render(s, o);
  o.format = MetricsFormat::kOpenMetrics;
  const std::string om = Render(s, o);
  EXPECT_NE(plain.find("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION untyped\n"), std::string::npos);
  EXPECT_NE(om.find("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION unknown\n"), std::string::npos);
  EXPECT_EQ(Samples(plain, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION").size(), 2u);
  EXPECT_EQ(Samples(plain, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
            Samples(om, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"));
  EXPECT_NE(plain.find("# TYPE DCGM_FI_DEV_FB_USED gauge\n"), std::string::npos);
  EXPECT_NE(om.find("# TYPE DCGM_FI_DEV_FB_USED gauge\n"), std::string::npos);
}

TEST(Metrics, NvidiaSmiCompatUsesNvidiaGpuExporterNames) {
  const Snapshot s = Fixed();
  EXPECT_EQ(Render(s, {}).find("nvidia_smi_"), std::string::npos) << "opt-in";
  MetricsOptions o;
  o.nvidia_smi_compat = true;
  const std::string text = Render(s, o);
  const std::string uuid = s.devices[0].fields[FieldId::kUuid].text().substr(4);  // no "GPU-"
  const auto one = [&](const std::string& family) {
    const auto lines = Samples(text, family);
    for (const auto& l : lines) {
      if (l.starts_with(family + "{uuid=\"" + uuid + "\"} "))
        return std::stod(l.substr(l.rfind(' ')));
    }
    ADD_FAILURE() << family << " for " << uuid << " missing";
    return 0.0;
  };
  const DeviceFields& f = s.devices[0].fields;
  EXPECT_DOUBLE_EQ(one("nvidia_smi_memory_used_bytes"), f[FieldId::kMemoryUsedBytes].number());
  EXPECT_DOUBLE_EQ(one("nvidia_smi_memory_total_bytes"), f[FieldId::kMemoryTotalBytes].number());
  EXPECT_DOUBLE_EQ(one("nvidia_smi_utilization_gpu_ratio"),
                   f[FieldId::kUtilizationGpuRatio].number());
  EXPECT_DOUBLE_EQ(one("nvidia_smi_temperature_gpu"), f[FieldId::kTemperatureGpuCelsius].number());
  EXPECT_DOUBLE_EQ(one("nvidia_smi_power_draw_watts"), f[FieldId::kPowerDrawWatts].number());
  EXPECT_DOUBLE_EQ(one("nvidia_smi_clocks_current_sm_clock_hz"),
                   f[FieldId::kClockSmHertz].number());
  EXPECT_DOUBLE_EQ(one("nvidia_smi_pstate"), f[FieldId::kPerformanceState].number());
  EXPECT_DOUBLE_EQ(one("nvidia_smi_enforced_power_limit_watts"),
                   f[FieldId::kPowerLimitEnforcedWatts].number());
  EXPECT_NE(text.find("# TYPE nvidia_smi_ecc_errors_corrected_volatile_total gauge\n"),
            std::string::npos)
      << "that exporter's type";
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      text, m, std::regex("nvidia_smi_gpu_info\\{uuid=\"" + uuid + "\"[^}]*\\} 1")));
  EXPECT_NE(m.str().find("name=\"NVIDIA H200\""), std::string::npos) << m.str();
  EXPECT_NE(m.str().find("index=\"0\""), std::string::npos) << m.str();
  EXPECT_NE(
      m.str().find(fmt::format("cuda_version=\"{}\"", s.host[FieldId::kCudaDriverVersion].text())),
      std::string::npos)
      << m.str();
  EXPECT_NE(text.find("gpuwatch_memory_used_bytes{"), std::string::npos) << "gpuwatch's own stay";
  EXPECT_EQ(text.find("nvidia_smi_compute_app_used_memory_bytes"), std::string::npos);
  o.process_metrics = true;
  EXPECT_NE(Render(s, o).find("nvidia_smi_compute_app_used_memory_bytes{pid=\"5001\""),
            std::string::npos);
}

}  // namespace
}  // namespace gpuwatch
