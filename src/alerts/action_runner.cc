#include "alerts/action_runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <limits>

#include "alerts/event_json.h"
#include "core/mutex.h"
#include "core/thread_name.h"

namespace gpuwatch::alerts {
namespace {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

void StderrSink(std::string_view line) {
  std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
}

}  // namespace

Result<std::unique_ptr<ActionRunner>> ActionRunner::Create(const RuleSet& rules,
                                                           ActionRunnerOptions options) {
  if (!options.log) options.log = StderrSink;
  if (options.host.empty()) options.host = HostName();
  if (options.queue_capacity == 0) options.queue_capacity = 1;
  std::unique_ptr<ActionRunner> runner(new ActionRunner(std::move(options)));
  Transport* log = nullptr;
  std::map<std::string, Transport*> files;  // one transport per path
  for (const Rule& rule : rules.rules) {
    std::vector<Transport*>& route = runner->routes_[rule.name];
    for (const Action& action : rule.actions) {
      Transport* t = nullptr;
      if (std::holds_alternative<LogAction>(action)) {
        if (log == nullptr) {
          runner->transports_.push_back(MakeLogTransport(runner->options_.log));
          log = runner->transports_.back().get();
        }
        t = log;
      } else if (const auto* file = std::get_if<FileAction>(&action)) {
        if (auto it = files.find(file->path); it != files.end()) {
          t = it->second;
        } else {
          Result<std::unique_ptr<Transport>> made = MakeFileTransport(file->path);
          if (!made) return made.status().WithContext(rule.where.ToString());
          runner->transports_.push_back(std::move(*made));
          t = files[file->path] = runner->transports_.back().get();
        }
      } else if (const auto* hook = std::get_if<WebhookAction>(&action)) {
        Result<std::unique_ptr<Transport>> made = MakeWebhookTransport(*hook);
        if (!made) return made.status().WithContext(rule.where.ToString());
        runner->transports_.push_back(std::move(*made));
        t = runner->transports_.back().get();
      } else if (const auto* command = std::get_if<CommandAction>(&action)) {
        if (!runner->options_.allow_commands) {
          return Status::InvalidArgument(fmt::format(
              "{}: rule '{}' runs a command; pass --allow-commands to enable command actions",
              rule.where.ToString(), rule.name));
        }
        runner->transports_.push_back(MakeCommandTransport(*command));
        t = runner->transports_.back().get();
      }
      route.push_back(t);
    }
  }
  return runner;
}

ActionRunner::ActionRunner(ActionRunnerOptions options) : options_(std::move(options)) {}

ActionRunner::~ActionRunner() { Stop(); }

void ActionRunner::Submit(Event event) {
  MutexLock lock(mu_);
  ++stats_.submitted;
  if (queue_.size() >= options_.queue_capacity) {
    queue_.pop_front();
    ++stats_.dropped;
  }
  queue_.push_back(std::move(event));
  // An idle daemon holds no thread for actions until there is something to deliver.
  if (!worker_.joinable() && !stopped_) {
    worker_ = std::jthread([this](std::stop_token stop) { Run(stop); });
  }
  wake_.NotifyOne();
}

void ActionRunner::Submit(const std::vector<Event>& events) {
  for (const Event& e : events) Submit(e);
}

void ActionRunner::Stop() {
  std::jthread worker;
  {
    MutexLock lock(mu_);
    stopped_ = true;
    worker = std::move(worker_);
  }
  if (!worker.joinable()) return;
  worker.request_stop();
  wake_.NotifyAll();
  worker.join();
}

ActionStats ActionRunner::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

void ActionRunner::Run(std::stop_token stop) {
  NameThisThread("gw-actions");
  for (;;) {
    Event event;
    std::uint64_t dropped = 0;
    {
      MutexLock lock(mu_);
      wake_.Wait(lock, stop, [this]() REQUIRES(mu_) { return !queue_.empty(); });
      if (queue_.empty()) return;  // stop requested and everything delivered
      event = std::move(queue_.front());
      queue_.pop_front();
      dropped = stats_.dropped;
    }
    if (dropped > dropped_reported_) {
      options_.log(
          fmt::format("gpuwatch: warning: alert queue full, {} event(s) dropped so far", dropped));
      dropped_reported_ = dropped;
    }
    Deliver(event, stop);
  }
}

void ActionRunner::Deliver(const Event& event, std::stop_token stop) {
  auto route = routes_.find(event.source);
  if (route == routes_.end()) return;
  const std::string json = EventJson(event, options_.host);
  for (Transport* t : route->second) {
    Status s = t->Deliver(event, json, stop);
    {
      MutexLock lock(mu_);
      ++(s.ok() ? stats_.delivered : stats_.failed);
    }
    if (!s.ok()) {
      options_.log(fmt::format("gpuwatch: warning: {} for alert {} on GPU {}: {}", t->Describe(),
                               event.source, event.gpu ? std::to_string(*event.gpu) : "-",
                               s.message()));
    }
  }
}

}  // namespace gpuwatch::alerts
