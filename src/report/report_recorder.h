// ReportRecorder: what the HTML report charts, kept while a job runs (or a
// recording plays) in bounded memory. Samples go into time buckets; when
// there are more than `max_points` buckets, neighbours are merged and the
// bucket width doubles, so a week-long job costs what a short one does.
// Memory and temperature keep the highest value of a bucket (OOM and
// throttling happen at peaks), utilization and power the mean. Events become
// annotations. Single-threaded.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/job/job_summary.h"
#include "gpuwatch/event.h"
#include "gpuwatch/snapshot.h"

namespace gpuwatch::report {

inline constexpr std::string_view kReportSchema = "gpuwatch.report/1";

struct ReportOptions {
  std::size_t max_points = 4000;   // per series
  std::size_t max_processes = 40;  // charted: the job's first, then by peak memory
  std::size_t max_annotations = 1000;
  std::size_t max_step_marks = 200;  // more step marks than this are counted, not drawn
};

// What the header of the report says.
struct ReportMeta {
  std::string title;
  std::string hostname;
  std::string source;  // "run", "recording FILE", "history FILE"
  std::string demo;    // the demo scenario; empty: real GPUs
};

class ReportRecorder {
 public:
  explicit ReportRecorder(ReportOptions options = {});

  // One snapshot; `job` marks the pids of the job (nullptr: no job).
  void Observe(const Snapshot& snapshot, const std::set<std::uint32_t>* job = nullptr);
  void AddEvent(const Event& event);
  void AddFramework(std::chrono::system_clock::time_point time, int gpu,
                    const std::string& framework,
                    const std::map<std::string, double, std::less<>>& bytes);

  // The report's data (schema gpuwatch.report/1, docs/report.md); `summary`
  // rows and the run's JSON (`job`, may be null) are included as given.
  nlohmann::json ToJson(const ReportMeta& meta, const std::vector<SummaryRow>& summary,
                        const nlohmann::json& job) const;

  std::size_t buckets() const { return buckets_.size(); }
  double bucket_seconds() const { return width_s_; }

 private:
  // One aggregate: max or mean of what fell into a bucket.
  struct Agg {
    double max = 0;
    double sum = 0;
    std::uint32_t count = 0;
    void Add(double v);
    void Merge(const Agg& o);
  };
  struct DeviceAgg {
    Agg memory, utilization, power, temperature;
  };
  struct Bucket {
    double t = 0;  // unix seconds of its first sample
    std::map<int, DeviceAgg> devices;
    std::map<std::size_t, Agg> processes;  // by process slot
    std::map<std::size_t, Agg> framework;  // by framework slot
    void Merge(const Bucket& o);
  };
  struct ProcessInfo {
    int gpu = 0;
    ProcessKey key;
    std::string command;
    std::string user;
    bool job = false;
    double peak = 0;
  };
  struct FrameworkInfo {
    int gpu = 0;
    std::string framework;
    std::string kind;
  };
  struct DeviceInfo {
    std::string name;
    std::string uuid;
    std::optional<double> total;
  };

  Bucket& BucketAt(double t);
  void Compact();

  ReportOptions options_;
  double width_s_ = 0;  // 0: one bucket per sample until the first compaction
  std::optional<double> origin_;
  std::vector<Bucket> buckets_;
  std::map<int, DeviceInfo> devices_;
  std::map<std::pair<int, ProcessKey>, std::size_t> process_slots_;
  std::vector<ProcessInfo> processes_;
  std::map<std::tuple<int, std::string, std::string>, std::size_t> framework_slots_;
  std::vector<FrameworkInfo> framework_;
  std::vector<Event> annotations_;
  std::size_t step_marks_ = 0;
  std::size_t annotations_dropped_ = 0;
};

}  // namespace gpuwatch::report
