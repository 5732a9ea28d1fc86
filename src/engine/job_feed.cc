#include "engine/job_feed.h"

#include <cctype>

namespace gpuwatch::engine {
namespace {

// Lower case, without a "gpu-" prefix.
std::string PlainUuid(std::string_view uuid) {
  std::string s(uuid);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.starts_with("gpu-")) s.erase(0, 4);
  return s;
}

}  // namespace

std::optional<int> GpuOfUuid(const Snapshot& devices, std::string_view uuid) {
  const std::string wanted = PlainUuid(uuid);
  if (wanted.empty()) return std::nullopt;
  for (const DeviceSample& d : devices.devices) {
    const Reading& r = d.fields[FieldId::kUuid];
    if (r.is_text() && PlainUuid(r.text()) == wanted) return d.index;
  }
  return std::nullopt;
}

JobFeed DrainJobs(JobSocket& socket, Pipeline& pipeline, const JobFeedHooks& hooks,
                  const Snapshot* devices) {
  JobFeed out;
  for (auto& r : socket.Drain()) {
    const JobMessage& m = r.message;
    const std::optional<std::uint32_t> pid = r.sender_pid ? r.sender_pid : m.pid;
    if (m.kind == JobMessage::Kind::kMemory) {
      std::optional<int> gpu;
      if (devices != nullptr && !m.uuid.empty()) gpu = GpuOfUuid(*devices, m.uuid);
      if (!gpu) gpu = hooks.gpu ? hooks.gpu(m.device) : m.device;
      FrameworkReading reading{r.time, pid, *gpu, m.framework, {m.bytes.begin(), m.bytes.end()}};
      for (auto& e :
           pipeline.Framework(r.time, reading.gpu, reading.framework, reading.bytes, pid)) {
        out.events.push_back(std::move(e));
      }
      if (hooks.memory) hooks.memory(reading);
    } else if (m.kind == JobMessage::Kind::kMark) {
      if (hooks.mark) hooks.mark(m.mark, m.mark_value);
      std::vector<Event> marked = pipeline.Mark(r.time, m.mark, m.mark_value);
      if (pid) marked.front().process = ProcessKey{*pid, 0};
      for (auto& e : marked) out.events.push_back(std::move(e));
    }
  }
  out.errors = socket.DrainErrors();
  return out;
}

}  // namespace gpuwatch::engine
