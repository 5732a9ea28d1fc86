// Transports deliver one alert event somewhere: a log line, a file, a webhook,
// a program. The ActionRunner owns them and calls them from its worker thread
// only, one event at a time.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "analysis/rules/rule.h"
#include "gpuwatch/event.h"
#include "gpuwatch/status.h"

namespace gpuwatch::alerts {

// The rules' vocabulary, which this layer delivers.
using rules::Action;
using rules::CommandAction;
using rules::FileAction;
using rules::LogAction;
using rules::Rule;
using rules::RuleSet;
using rules::WebhookAction;

// Where log lines and the runner's warnings go (default: stderr).
using LogSink = std::function<void(std::string_view line)>;

class Transport {
 public:
  virtual ~Transport() = default;
  // Delivers `event` (`json` is its EventJson). A non-OK Status means it gave
  // up. Long waits (backoff) end early once `stop` is requested.
  virtual Status Deliver(const Event& event, std::string_view json, std::stop_token stop) = 0;
  virtual std::string Describe() const = 0;  // "webhook http://...", for warnings
};

// "[14:23:05] ALERT warning gpu_memory_high: GPU 0: ..." (local time); one
// line, control characters written out (core/printable.h).
std::string LogLine(const Event& event);

std::unique_ptr<Transport> MakeLogTransport(LogSink sink);
// Opens `path` for appending now, so an unwritable path fails before any run.
Result<std::unique_ptr<Transport>> MakeFileTransport(const std::string& path);
Result<std::unique_ptr<Transport>> MakeWebhookTransport(const WebhookAction& action);
std::unique_ptr<Transport> MakeCommandTransport(const CommandAction& action);

}  // namespace gpuwatch::alerts
