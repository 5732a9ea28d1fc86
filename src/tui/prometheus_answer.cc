// The answers of `top --prometheus`: an /api/v1/query body parsed into
// series (prometheus_fleet.h), and the numbers and times in them. Pure.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/printable.h"
#include "tui/prometheus_fleet.h"

namespace gpuwatch::tui {
namespace {

std::string Excerpt(std::string_view body) {
  std::string e = Printable(body.substr(0, 80));
  return body.empty() ? "an empty body" : "\"" + e + (body.size() > 80 ? "...\"" : "\"");
}

}  // namespace

std::chrono::system_clock::time_point PromTime(double seconds) {
  return std::chrono::system_clock::time_point(std::chrono::round<std::chrono::milliseconds>(
      std::chrono::duration<double>(std::isfinite(seconds) ? seconds : 0)));
}

std::optional<long> WholeLong(std::string_view s) {
  long v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

Result<std::vector<PromSample>> ParseQueryAnswer(std::string_view body) {
  const auto not_prometheus = [&](std::string_view what) {
    return Status::InvalidArgument(
        fmt::format("not a Prometheus API answer: {} ({})", what, Excerpt(body)));
  };
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return not_prometheus("not a JSON object");
  const auto status = j.find("status");
  if (status == j.end() || !status->is_string()) return not_prometheus("no \"status\"");
  if (*status == "error") {
    return Status::InvalidArgument(fmt::format("Prometheus says {}: {}",
                                               Printable(j.value("errorType", "error")),
                                               Printable(j.value("error", "(no detail)"))));
  }
  const auto data = j.find("data");
  if (*status != "success" || data == j.end() || !data->is_object() ||
      !data->value("resultType", nlohmann::json()).is_string() || !data->contains("result")) {
    return not_prometheus("no \"data\" with a \"resultType\" and a \"result\"");
  }
  const std::string type = (*data)["resultType"];
  const nlohmann::json& result = (*data)["result"];
  std::vector<PromSample> out;
  // A [time, "value"] pair.
  const auto point = [](const nlohmann::json& p, PromSample& s) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_string()) return false;
    std::string v = p[1];
    if (v.starts_with('+')) v.erase(0, 1);  // "+Inf"
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), s.value);
    s.time = PromTime(p[0].get<double>());
    return ec == std::errc() && end == v.data() + v.size();
  };
  if (type == "scalar" || type == "string") {
    PromSample s;
    if (!point(result, s)) return not_prometheus("a bad scalar");
    out.push_back(std::move(s));
    return out;
  }
  if ((type != "vector" && type != "matrix") || !result.is_array()) {
    return not_prometheus("an unknown resultType");
  }
  for (const nlohmann::json& r : result) {
    PromSample s;
    const nlohmann::json metric = r.value("metric", nlohmann::json::object());
    for (const auto& [k, v] : metric.items()) {
      if (v.is_string()) s.labels.emplace(k, v.get<std::string>());
    }
    const nlohmann::json values = r.value("values", nlohmann::json::array());
    if (type == "matrix" && (!values.is_array() || values.empty())) continue;
    const nlohmann::json p = type == "vector" ? r.value("value", nlohmann::json()) : values.back();
    if (!point(p, s)) return not_prometheus("a series without a [time, \"value\"]");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gpuwatch::tui
