// The parsed scenario: what the fake NVML reports, as plain values and time
// series. Built once per nvmlInit by LoadScenario (scenario_parser.h), then
// read-only; every default that depends on the model has already been filled
// in (model_defaults.h), except the dynamic defaults noted per field, which
// device_model.h derives at evaluation time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "memory_expression.h"
#include "series.h"

namespace gpuwatch::fake_nvml {

enum class ProcessType { kCompute, kGraphics };

struct ProcessSpec {
  // The pid, or, with `pid_file`, whatever number that file holds when NVML is
  // asked (binds the scripted process to a real one, e.g. the child of
  // `gpuwatch run`); not listed while the file is missing or empty.
  mutable unsigned pid = 0;
  std::string pid_file;
  // `pid: child`: the oldest running child of the process that loaded this
  // library (the job of `gpuwatch run --demo`); not listed while there is
  // none. Its series run from when that child was first listed.
  bool child_of_caller = false;
  mutable double bound_at_s = 0;
  ProcessType type = ProcessType::kCompute;
  double start_s = 0;  // listed while start <= t < end
  std::optional<double> end_s;
  Series memory_bytes;  // evaluated at the process age t - start
  // `pid: child` with `memory` an expression of bs: bound to the callers's
  // children that a sweep started (GPUWATCH_SWEEP_VALUE in their environment,
  // this device in their CUDA_VISIBLE_DEVICES), the k-th such process of a
  // device to the k-th oldest; listed with what the expression gives for
  // their value, up to what the device has left (what it holds beyond is refused).
  std::optional<MemoryExpression> memory_of_bs;
  mutable double bound_bytes = 0;
  bool memory_unavailable = false;               // usedGpuMemory = NVML_VALUE_NOT_AVAILABLE
  Series sm_util, mem_util, enc_util, dec_util;  // percent, at the process age
  bool util_stale = false;                       // utilization sample stamped far in the past
  std::optional<unsigned> gi, ci;                // MIG instance, when MIG is on
};

struct MigInstanceSpec {
  unsigned gi = 0;
  unsigned ci = 0;
  std::string profile;  // "3g.40gb"
  double memory_total_bytes = 0;
  std::string uuid;  // "MIG-..."
};

struct EccCounters {
  Series corrected_volatile, uncorrected_volatile, corrected_aggregate, uncorrected_aggregate;
};

// An XID critical error the driver reports at scenario time `at_s` (every
// period again under a wall clock).
struct XidSpec {
  double at_s = 0;
  unsigned long long code = 0;
};

struct RemappedRows {
  Series correctable, uncorrectable;
  bool pending = false;
  bool failure = false;
};

// Capabilities of a model family that a scenario does not switch per key.
struct ModelTraits {
  bool mig_capable = false;
  bool row_remapping = false;
  unsigned idle_pstate = 0;
  double idle_power_w = 60;
  double idle_temperature_c = 32;
  unsigned idle_sm_mhz = 210, idle_graphics_mhz = 210, idle_video_mhz = 555;
};

struct DeviceSpec {
  unsigned index = 0;  // position in the scenario (NVML's index)
  // Identity (static).
  std::string name, uuid, serial, pci_bus_id, vbios;
  unsigned pci_device_id = 0, pci_subsystem_id = 0;
  int cc_major = 9, cc_minor = 0;
  ModelTraits traits;

  // Static configuration.
  double memory_total_bytes = 0;
  double bar1_total_bytes = 0;
  double memory_overhead_bytes = 0;  // added to the process sum when memory_used is absent
  double power_limit_w = 0, power_default_w = 0, power_min_w = 0, power_max_w = 0,
         power_enforced_w = 0;
  unsigned max_sm_mhz = 0, max_mem_mhz = 0, max_graphics_mhz = 0, max_video_mhz = 0;
  unsigned pcie_gen_max = 0, pcie_gen_current = 0, pcie_width_max = 0, pcie_width_current = 0;
  bool persistence_mode = true;
  int compute_mode = 0;
  bool ecc_mode = true;
  bool display_active = false;
  std::optional<bool> display_mode;  // absent: NVML_ERROR_DEPRECATED (26)
  bool mig_enabled = false;
  std::vector<MigInstanceSpec> mig_instances;
  std::uint64_t supported_clock_event_reasons = 0x1FF;

  // Dynamic series. Absent means a default derived at evaluation time.
  std::optional<Series> memory_used;  // default: processes + overhead
  Series memory_reserved;
  Series bar1_used;
  std::optional<Series> utilization_gpu;     // default: sum of process sm_util, <= 100
  std::optional<Series> utilization_memory;  // default: 40 % of utilization_gpu
  Series utilization_encoder, utilization_decoder;
  std::optional<Series> temperature_gpu;     // default: idle + 0.45 C per % util
  std::optional<Series> temperature_memory;  // absent with has_memory_temperature false: N/A
  bool has_memory_temperature = true;
  std::optional<Series> power_draw;                    // default: idle + util share of the limit
  std::optional<Series> power_instant, power_average;  // default: power_draw
  std::optional<Series> energy_mj;                     // default: integral of power_draw
  std::optional<Series> clock_sm, clock_mem, clock_graphics, clock_video;  // default: by load
  std::optional<Series> pstate;               // default: P0 busy, traits.idle_pstate idle
  std::optional<Series> clock_event_reasons;  // default: 0x1 (GPU idle) when idle, else 0
  std::optional<Series> fan;                  // absent: NOT_SUPPORTED
  Series pcie_tx_kbps, pcie_rx_kbps;
  EccCounters ecc;
  RemappedRows remapped_rows;
  std::vector<XidSpec> xids;  // sorted by at_s

  std::vector<ProcessSpec> processes;
};

enum class FaultKind { kLost, kNotSupported, kError, kSlow, kHang, kProcessListRace };

struct FaultSpec {
  FaultKind kind = FaultKind::kLost;
  std::optional<unsigned> device;  // absent: every device (and device-less calls)
  double from_s = 0;
  std::optional<double> until_s;   // active while from <= t < until
  std::vector<std::string> calls;  // not_supported, error, slow, hang
  int code = 0;                    // error
  double ms = 0;                   // slow, hang
  unsigned extra = 0;              // process_list_race
  std::string where;               // "file:line:col", for messages
};

enum class ClockMode { kInit, kWall };

struct Scenario {
  std::string path;
  std::string driver_version = "580.159.04";
  std::string nvml_version = "13.580.159.04";
  int cuda_driver_version = 13000;
  int init_error = 0;  // NVML_SUCCESS
  ClockMode clock = ClockMode::kInit;
  double period_s = 3600;
  double time_scale = 1;
  std::vector<DeviceSpec> devices;
  std::vector<FaultSpec> faults;
};

}  // namespace gpuwatch::fake_nvml
