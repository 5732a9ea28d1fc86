#include "core/driver_calls.h"

#include <fmt/format.h>

#include <map>

#include "core/mutex.h"

namespace gpuwatch {
namespace {

struct Registry {
  Mutex mu;
  unsigned long long next GUARDED_BY(mu) = 1;
  std::map<unsigned long long, DriverCall> calls GUARDED_BY(mu);  // by id: the oldest first
};

Registry& Calls() {
  static Registry* r = new Registry;  // never destroyed: a hung thread may outlive main
  return *r;
}

}  // namespace

DriverCallScope::DriverCallScope(std::string what) {
  Registry& r = Calls();
  MutexLock lock(r.mu);
  id_ = r.next++;
  r.calls.emplace(id_, DriverCall{std::move(what), std::chrono::steady_clock::now()});
}

DriverCallScope::~DriverCallScope() {
  Registry& r = Calls();
  MutexLock lock(r.mu);
  r.calls.erase(id_);
}

std::optional<DriverCall> OldestDriverCall() {
  Registry& r = Calls();
  MutexLock lock(r.mu);
  if (r.calls.empty()) return std::nullopt;
  return r.calls.begin()->second;
}

std::string DescribeCall(std::string_view what, std::chrono::milliseconds age) {
  return fmt::format("{} has not returned for {} s", what,
                     std::chrono::duration_cast<std::chrono::seconds>(age).count());
}

std::optional<std::string> DescribeHungCall(std::chrono::milliseconds min_age) {
  const auto call = OldestDriverCall();
  if (!call) return std::nullopt;
  const auto age = std::chrono::steady_clock::now() - call->since;
  if (age < min_age) return std::nullopt;
  return DescribeCall(call->what, std::chrono::duration_cast<std::chrono::milliseconds>(age));
}

}  // namespace gpuwatch
