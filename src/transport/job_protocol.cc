#include "transport/job_protocol.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace gpuwatch {
namespace {

std::optional<double> Number(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v;
}

bool ValidWord(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == '/' || c == ':')) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<JobMessage> ParseJobMessage(std::string_view line) {
  if (line.size() > kMaxJobLine)
    return Status::InvalidArgument(fmt::format("line longer than {} bytes", kMaxJobLine));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  JobMessage m;
  std::string_view verb;
  bool first = true;
  while (!line.empty()) {
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty()) break;
    const auto space = line.find(' ');
    const std::string_view token = line.substr(0, space);
    line = space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
    if (first) {
      verb = token;
      first = false;
      if (verb != "hello" && verb != "mem" && verb != "mark") {
        return Status::InvalidArgument(
            fmt::format("unknown message \"{}\" (hello, mem, mark)", verb));
      }
      continue;
    }
    const auto eq = token.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Status::InvalidArgument(fmt::format("\"{}\" is not key=value", token));
    }
    const std::string_view key = token.substr(0, eq), value = token.substr(eq + 1);
    if (!ValidWord(key) || !ValidWord(value)) {
      return Status::InvalidArgument(
          fmt::format("\"{}\": keys and values are words (letters, digits, _-./:)", token));
    }
    m.fields.emplace(std::string(key), std::string(value));
  }
  auto field = [&](std::string_view k) -> const std::string* {
    auto it = m.fields.find(k);
    return it == m.fields.end() ? nullptr : &it->second;
  };
  if (const std::string* pid = field("pid")) {
    const auto n = Number(*pid);
    if (!n || *n != std::floor(*n) || *n > 4294967295.0)
      return Status::InvalidArgument(fmt::format("pid={} is not a pid", *pid));
    m.pid = static_cast<std::uint32_t>(*n);
  }
  if (verb == "hello") {
    m.kind = JobMessage::Kind::kHello;
    return m;
  }
  if (verb == "mark") {
    m.kind = JobMessage::Kind::kMark;
    for (std::string_view k : {"step", "epoch", "phase"}) {
      if (const std::string* v = field(k)) {
        if (!m.mark.empty())
          return Status::InvalidArgument("one mark per line (step, epoch or phase)");
        if (k != "phase" && !Number(*v))
          return Status::InvalidArgument(fmt::format("{}={} is not a number", k, *v));
        m.mark = std::string(k);
        m.mark_value = *v;
      }
    }
    if (m.mark.empty()) return Status::InvalidArgument("mark needs step=N, epoch=N or phase=NAME");
    return m;
  }
  if (verb == "mem") {
    m.kind = JobMessage::Kind::kMemory;
    const std::string* framework = field("framework");
    const std::string* device = field("device");
    if (framework == nullptr) return Status::InvalidArgument("mem needs framework=NAME");
    if (device == nullptr || !Number(*device)) return Status::InvalidArgument("mem needs device=N");
    m.framework = *framework;
    m.device = static_cast<int>(*Number(*device));
    if (const std::string* uuid = field("uuid")) m.uuid = *uuid;
    for (const auto& [k, v] : m.fields) {
      if (k == "framework" || k == "device" || k == "pid" || k == "uuid") continue;
      const auto n = Number(v);
      if (!n) return Status::InvalidArgument(fmt::format("{}={} is not a byte count", k, v));
      m.bytes.emplace(k, *n);
    }
    if (m.bytes.empty())
      return Status::InvalidArgument("mem needs at least one counter (allocated=, reserved=, ...)");
    return m;
  }
  return Status::InvalidArgument(fmt::format("unknown message \"{}\" (hello, mem, mark)", verb));
}

}  // namespace gpuwatch
