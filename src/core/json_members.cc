#include "core/json_members.h"

#include <fmt/format.h>

#include "core/time_text.h"

namespace gpuwatch {
namespace {

// What a value is, for "got ...": numbers and short strings as they are.
std::string Got(const nlohmann::json& v) {
  if (v.is_number() || v.is_boolean()) return v.dump();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    return s.size() <= 32
               ? nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace)
               : "a string";
  }
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  return std::string(v.type_name());
}

}  // namespace

const nlohmann::json* JsonMembers::Find(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string JsonMembers::Path(std::string_view at, std::string_view key) {
  return at.empty() ? std::string(key) : fmt::format("{}.{}", at, key);
}

std::string JsonMembers::Path(std::string_view at, std::string_view key, std::size_t index) {
  return fmt::format("{}[{}]", Path(at, key), index);
}

void JsonMembers::Wrong(const std::string& path, std::string_view expected, const json& got) {
  if (error_.empty()) error_ = fmt::format("{}: expected {}, got {}", path, expected, Got(got));
}

std::string JsonMembers::Text(const json& object, std::string_view at, std::string_view key,
                              std::string fallback) {
  const json* v = Find(object, key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) {
    Wrong(Path(at, key), "text", *v);
    return fallback;
  }
  return v->get<std::string>();
}

bool JsonMembers::Flag(const json& object, std::string_view at, std::string_view key,
                       bool fallback) {
  const json* v = Find(object, key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) {
    Wrong(Path(at, key), "true or false", *v);
    return fallback;
  }
  return v->get<bool>();
}

std::optional<double> JsonMembers::Number(const json& object, std::string_view at,
                                          std::string_view key) {
  const json* v = Find(object, key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) {
    Wrong(Path(at, key), "a number", *v);
    return std::nullopt;
  }
  return v->get<double>();
}

std::optional<std::chrono::system_clock::time_point> JsonMembers::Time(const json& object,
                                                                       std::string_view at,
                                                                       std::string_view key) {
  const json* v = Find(object, key);
  if (v == nullptr) return std::nullopt;
  const auto t = v->is_string() ? ParseRfc3339(v->get_ref<const std::string&>()) : std::nullopt;
  if (!t) Wrong(Path(at, key), "an RFC 3339 time (2026-11-30T10:03:38.287Z)", *v);
  return t;
}

const nlohmann::json& JsonMembers::Array(const json& object, std::string_view at,
                                         std::string_view key) {
  static const json kEmpty = json::array();
  const json* v = Find(object, key);
  if (v == nullptr) return kEmpty;
  if (!v->is_array()) {
    Wrong(Path(at, key), "an array", *v);
    return kEmpty;
  }
  return *v;
}

const nlohmann::json& JsonMembers::Object(const json& object, std::string_view at,
                                          std::string_view key) {
  static const json kEmpty = json::object();
  const json* v = Find(object, key);
  if (v == nullptr) return kEmpty;
  if (!v->is_object()) {
    Wrong(Path(at, key), "an object", *v);
    return kEmpty;
  }
  return *v;
}

}  // namespace gpuwatch
