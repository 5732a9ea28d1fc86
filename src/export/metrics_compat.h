// Other exporters' names on /metrics, for the dashboards built on them:
// dcgm-exporter's DCGM_FI_* (--dcgm-compat) and nvidia_gpu_exporter's
// nvidia_smi_* (--nvidia-smi-compat). Both derive from the field catalogue
// (dcgm_alias, smi_name); docs/metrics.md lists what each emits. Pure.
#pragma once

#include <string>

#include "export/metrics_writer.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::metrics {

// dcgm-exporter's names, labels and units (MiB, %, MHz, mJ, KB/s). Its
// counters do not end in _total, so they are typed unknown (untyped) in both
// formats: the same sample name whichever format Prometheus negotiates.
void AddDcgm(Writer& w, const Snapshot& s, const std::string& hostname);

// nvidia_gpu_exporter's names: nvidia_smi_<query field>[_<unit>] in base
// units (bytes, ratio, watts, hertz as _clock_hz), labelled by `uuid` without
// its "GPU-" prefix, plus nvidia_smi_gpu_info with the identity labels.
// With `processes`, nvidia_smi_compute_app_used_memory_bytes per process.
void AddNvidiaSmi(Writer& w, const Snapshot& s, bool processes);

// nvidia_gpu_exporter's name for a catalogue field, "" when it has none.
std::string NvidiaSmiName(const FieldInfo& f);

}  // namespace gpuwatch::metrics
