#include "export/history_document.h"

#include <algorithm>

#include "export/api_documents.h"

namespace gpuwatch {

nlohmann::json SeriesDocument(const store::Series& series, int device,
                              std::chrono::milliseconds step) {
  using nlohmann::json;
  json t = json::array();
  std::vector<json> avg(series.fields.size(), json::array()), min = avg, max = avg;
  auto v = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  for (const auto& point : series.points) {
    t.push_back(std::chrono::duration<double>(point.time.time_since_epoch()).count());
    for (std::size_t i = 0; i < series.fields.size(); ++i) {
      avg[i].push_back(v(point.values[i].avg));
      min[i].push_back(v(point.values[i].min));
      max[i].push_back(v(point.values[i].max));
    }
  }
  json fields = json::object();
  for (std::size_t i = 0; i < series.fields.size(); ++i) {
    fields[std::string(Info(series.fields[i]).key)] = {
        {"avg", std::move(avg[i])}, {"min", std::move(min[i])}, {"max", std::move(max[i])}};
  }
  return json{{"schema", kApiSchema},
              {"device", device},
              {"tier", store::TierName(series.tier)},
              {"step_seconds", series.tier == store::Tier::kRaw && step.count() == 0
                                   ? 0.0
                                   : std::max({static_cast<double>(step.count()) / 1000.0,
                                               series.tier == store::Tier::kMinute ? 60.0 : 0.0,
                                               series.tier == store::Tier::kHour ? 3600.0 : 0.0})},
              {"t", std::move(t)},
              {"fields", std::move(fields)}};
}

}  // namespace gpuwatch
