#include "gpuwatch/reading.h"

namespace gpuwatch {

std::string_view MissingName(Missing m) {
  switch (m) {
    case Missing::kNotYetSampled:
      return "not_yet_sampled";
    case Missing::kNotSupported:
      return "not_supported";
    case Missing::kNoPermission:
      return "no_permission";
    case Missing::kDeviceLost:
      return "device_lost";
    case Missing::kImplausible:
      return "implausible";
    case Missing::kFailed:
      return "failed";
  }
  return "failed";
}

Missing MissingFromName(std::string_view name) {
  for (Missing m : {Missing::kNotYetSampled, Missing::kNotSupported, Missing::kNoPermission,
                    Missing::kDeviceLost, Missing::kImplausible, Missing::kFailed}) {
    if (MissingName(m) == name) return m;
  }
  return Missing::kFailed;
}

}  // namespace gpuwatch
