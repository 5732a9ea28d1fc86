// Remote daemons (a thread each, so one that does not answer holds back only
// itself) and Prometheus (one thread: a few queries cover the fleet).
#include <fmt/format.h>

#include "tui/feed.h"
#include "tui/prometheus_fleet.h"
#include "tui/remote_api.h"

namespace gpuwatch::tui {
namespace {

// Sleeps `d` in short steps, so that Stop is quick; false once stopped.
bool Pause(const std::atomic<bool>& stop, std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (!stop && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !stop;
}

class RemoteFeed final : public Feed {
 public:
  RemoteFeed(std::vector<RemoteEndpoint> endpoints, std::chrono::milliseconds interval) {
    {
      MutexLock lock(mu_);
      model_.kind = SourceKind::kRemote;
      model_.interval = interval;
      for (const RemoteEndpoint& e : endpoints) {
        HostView h;
        h.state.label = e.label;
        model_.hosts.push_back(std::move(h));
      }
    }
    for (std::size_t i = 0; i < endpoints.size(); ++i) {
      threads_.emplace_back([this, i, e = endpoints[i], interval] { Loop(i, e, interval); });
    }
  }
  ~RemoteFeed() override { Stop(); }

  void Stop() override {
    if (stop_.exchange(true)) return;
    for (std::thread& t : threads_) t.join();
  }

 private:
  void Loop(std::size_t i, RemoteEndpoint endpoint, std::chrono::milliseconds interval) {
    RemoteHost host(std::move(endpoint));
    HostState state;
    {
      MutexLock lock(mu_);
      state = model_.hosts[i].state;
    }
    do {
      std::vector<Event> events;
      const bool answered = host.Refresh(state, events);
      state.label = host.endpoint().label;
      Write([&](TopModel& m) {
        HostView& h = m.hosts[i];
        const bool fresh = answered && state.snapshot &&
                           (!h.state.snapshot || h.state.snapshot->time != state.snapshot->time);
        h.state = state;
        if (fresh) h.history.Add(*state.snapshot);
        for (const Event& e : events) h.AddEvent(e);
      });
    } while (Pause(stop_, interval));
  }

  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

class PrometheusFeed final : public Feed {
 public:
  PrometheusFeed(PrometheusSource source, std::chrono::milliseconds interval) {
    {
      MutexLock lock(mu_);
      model_.kind = SourceKind::kPrometheus;
      model_.source_detail = source.url;
      model_.interval = interval;
    }
    thread_ = std::thread([this, s = std::move(source), interval] { Loop(s, interval); });
  }
  ~PrometheusFeed() override { Stop(); }

  void Stop() override {
    if (stop_.exchange(true)) return;
    thread_.join();
  }

 private:
  void Loop(const PrometheusSource& source, std::chrono::milliseconds interval) {
    do {
      auto fleet = FetchFleet(source);
      Write([&](TopModel& m) {
        if (!fleet) {
          // Prometheus itself did not answer: every host keeps its last values.
          for (HostView& h : m.hosts) h.state.down = fleet.error().message();
          if (m.hosts.empty()) {
            HostView h;
            h.state.label = source.url;
            h.state.down = fleet.error().message();
            m.hosts.push_back(std::move(h));
          }
          return;
        }
        std::erase_if(m.hosts, [](const HostView& h) { return !h.state.snapshot; });
        for (HostState& s : *fleet) {
          auto it = std::find_if(m.hosts.begin(), m.hosts.end(),
                                 [&](const HostView& h) { return h.state.label == s.label; });
          if (it == m.hosts.end()) {
            m.hosts.emplace_back();
            it = std::prev(m.hosts.end());
          }
          const bool fresh =
              s.snapshot && (!it->state.snapshot || it->state.snapshot->time != s.snapshot->time);
          if (!s.snapshot) s.snapshot = it->state.snapshot;  // down: keep what it last had
          it->state = std::move(s);
          if (fresh) it->history.Add(*it->state.snapshot);
        }
      });
    } while (Pause(stop_, interval));
  }

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

std::unique_ptr<Feed> StartRemoteFeed(std::vector<RemoteEndpoint> endpoints,
                                      std::chrono::milliseconds interval) {
  return std::make_unique<RemoteFeed>(std::move(endpoints), interval);
}

std::unique_ptr<Feed> StartPrometheusFeed(PrometheusSource source,
                                          std::chrono::milliseconds interval) {
  return std::make_unique<PrometheusFeed>(std::move(source), interval);
}

}  // namespace gpuwatch::tui
