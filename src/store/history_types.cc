#include "store/history_types.h"

namespace gpuwatch::store {

std::string_view MarkKindName(Mark::Kind k) {
  switch (k) {
    case Mark::Kind::kStep:
      return "step";
    case Mark::Kind::kEpoch:
      return "epoch";
    case Mark::Kind::kPhase:
      return "phase";
  }
  return "step";
}

std::string_view TierName(Tier t) {
  switch (t) {
    case Tier::kRaw:
      return "raw";
    case Tier::kMinute:
      return "minute";
    case Tier::kHour:
      return "hour";
  }
  return "raw";
}

}  // namespace gpuwatch::store
