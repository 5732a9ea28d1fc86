// The webhook action in a build without cpp-httplib (GPUWATCH_HTTP=OFF, e.g. a
// machine whose packages lack it): a rule file that asks for a webhook is an
// error before anything starts, not a silent no-op.
#include "alerts/transport.h"

namespace gpuwatch::alerts {

Result<std::unique_ptr<Transport>> MakeWebhookTransport(const WebhookAction& action) {
  return Status::Unavailable("webhook " + action.url +
                             ": this gpuwatch was built without an HTTP client (cpp-httplib); "
                             "use a file or command action, or rebuild with cpp-httplib installed");
}

}  // namespace gpuwatch::alerts
