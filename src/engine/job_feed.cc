#include "engine/job_feed.h"

namespace gpuwatch::engine {

JobFeed DrainJobs(JobSocket& socket, Pipeline& pipeline, const JobFeedHooks& hooks) {
  JobFeed out;
  for (auto& r : socket.Drain()) {
    const JobMessage& m = r.message;
    const std::optional<std::uint32_t> pid = r.sender_pid ? r.sender_pid : m.pid;
    if (m.kind == JobMessage::Kind::kMemory) {
      FrameworkReading reading{r.time,
                               pid,
                               hooks.gpu ? hooks.gpu(m.device) : m.device,
                               m.framework,
                               {m.bytes.begin(), m.bytes.end()}};
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
