// The daemon behind `gpuwatch serve`: samples every GPU, runs the pipeline
// (rules, leaks, diagnoses, history), reads what jobs report on a socket,
// and serves /metrics, the JSON API, live streams and the dashboard
// (src/server). It starts without a driver and keeps retrying with backoff
// (readyz says why), re-reads --web-config when it changes, and reloads its
// outputs and rules when asked. docs/serve.md.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "engine/pipeline.h"
#include "engine/source.h"
#include "server/http_server.h"

namespace gpuwatch::engine {

struct DaemonOptions {
  SourceOptions source;
  std::chrono::milliseconds interval{1000};
  // The listener, /metrics options, allowed hosts, version. Its history,
  // leases, web and API hostname are the daemon's.
  server::HttpOptions http;
  PipelineOptions outputs;  // its hostname and log are the daemon's
  std::string hostname;     // the hostname label; "": the source's
  std::string socket;       // where jobs report (GPUWATCH_SOCKET); "": none
  std::string web_config;   // TLS and basic auth, re-read when it changes; "": none
};

enum class DaemonRequest { kNone, kStop, kReload };

struct Reloaded {
  PipelineOptions outputs;  // the outputs and rules to go on with
  std::string note;         // logged once they are in place ("" none)
};

struct DaemonHooks {
  // What the front end asks for (its signals), polled at least every 200 ms,
  // also while the GPUs are being opened.
  std::function<DaemonRequest()> poll;
  // On kReload: the outputs and rules to go on with; an error keeps the
  // running ones (and is logged).
  std::function<Result<Reloaded>()> reload;
  std::function<void(const std::string&)> log;  // each line the daemon says
};

// Serves until `poll` says kStop. InvalidArgument: an option that does not
// work (outputs, rules, socket, web config, listen address), nothing
// started; another error: the listener could not start.
Status RunDaemon(DaemonOptions options, DaemonHooks hooks);

}  // namespace gpuwatch::engine
