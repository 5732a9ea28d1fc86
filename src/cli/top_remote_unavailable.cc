// `top --remote / --prometheus` in a build without cpp-httplib.
#include "cli/top_remote.h"

namespace gpuwatch::cli {

Result<StartTopFeed> ParseTopRemote(const TopRemoteArgs&) {
  return Status::InvalidArgument(
      "--remote and --prometheus need HTTP: this gpuwatch was built without cpp-httplib");
}

}  // namespace gpuwatch::cli
