// /api/v1/stream (server_impl.h): server-sent events, a snapshot per sample
// and every event, resumable with Last-Event-ID.
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <memory>

#include "server/server_impl.h"

namespace gpuwatch::server {
namespace {

using nlohmann::json;

// One SSE message. `id` is the sequence of the newest event the client has
// had with it (events: their own; snapshots: the newest before them), so the
// Last-Event-ID a client reconnects with says which events it missed.
std::string SseMessage(std::uint64_t id, std::string_view event, const json& data) {
  return fmt::format("id: {}\nevent: {}\ndata: {}\n\n", id, event,
                     data.dump(-1, ' ', false, json::error_handler_t::replace));
}

// The Last-Event-ID a reconnecting client sends: nullopt when absent, an
// error naming the header when it is not a sequence this server sends.
Result<std::optional<std::uint64_t>> LastEventId(const httplib::Request& req) {
  if (!req.has_header("Last-Event-ID")) return std::optional<std::uint64_t>();
  const std::string v = req.get_header_value("Last-Event-ID");
  std::uint64_t id = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), id);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
    return Status::InvalidArgument(fmt::format(
        "header Last-Event-ID: \"{}\" is not an event id (the decimal id: of a message this "
        "stream sent)",
        v.substr(0, 64)));
  }
  return std::optional<std::uint64_t>(id);
}

}  // namespace

void AddStreamRoute(HttpServer::Impl& impl) {
  HttpServer::Impl* self = &impl;
  impl.server->Get("/api/v1/stream", [self](const httplib::Request& req, httplib::Response& res) {
    const auto resume = LastEventId(req);
    if (!resume) return SendError(res, 400, resume.error().message());
    if (self->streams.fetch_add(1) >= self->options.max_streams) {
      self->streams.fetch_sub(1);
      res.set_header("Retry-After", "5");
      return SendError(res, 503, "too many live streams; try again later");
    }
    res.set_header("X-Accel-Buffering", "no");
    struct Cursor {
      std::uint64_t version = 0;
      std::uint64_t events = 0;
      bool started = false;
      std::optional<std::uint64_t> resume;  // Last-Event-ID: replay the events after it
    };
    auto cursor = std::make_shared<Cursor>();
    cursor->resume = *resume;
    // The events after the cursor, each with its id; moves the cursor on.
    auto events_after = [self, cursor](std::uint64_t after) {
      std::string out;
      std::uint64_t newest = 0;
      for (const auto& e : self->hub->SequencedEventsAfter(after, &newest)) {
        out += SseMessage(e.sequence, "event", EventDocument(e.event));
      }
      cursor->events = newest;
      return out;
    };
    res.set_chunked_content_provider(
        "text/event-stream",
        [self, cursor, events_after](std::size_t, httplib::DataSink& sink) {
          if (!cursor->started) {
            cursor->started = true;
            std::string first = "retry: 2000\n\n";
            if (cursor->resume) {
              // Newer than every event here: the daemon restarted and numbers
              // from 1 again, so all it keeps are new to the client.
              const std::uint64_t after =
                  *cursor->resume > self->hub->event_count() ? 0 : *cursor->resume;
              first += events_after(after);
            } else {
              cursor->events = self->hub->event_count();
            }
            const auto held = self->hub->Latest();
            const Published& p = *held;
            cursor->version = p.version;
            const auto leases = self->ReadLeases();
            first +=
                SseMessage(cursor->events, "snapshot",
                           SnapshotDocument(p, self->options.api, leases ? &*leases : nullptr));
            return sink.write(first.data(), first.size());
          }
          if (self->hub->stopped() || self->stopping) return false;
          if (!self->hub->Wait(
                  cursor->version, cursor->events,
                  std::chrono::duration_cast<std::chrono::milliseconds>(self->options.keepalive))) {
            static const std::string kKeepalive = ": keepalive\n\n";
            return sink.write(kKeepalive.data(), kKeepalive.size());
          }
          if (self->hub->stopped() || self->stopping) return false;
          std::string out = events_after(cursor->events);
          const auto held = self->hub->Latest();
          const Published& p = *held;
          if (p.version > cursor->version) {
            cursor->version = p.version;
            const auto leases = self->ReadLeases();
            out += SseMessage(cursor->events, "snapshot",
                              SnapshotDocument(p, self->options.api, leases ? &*leases : nullptr));
          }
          return out.empty() || sink.write(out.data(), out.size());
        },
        [self](bool) { self->streams.fetch_sub(1); });
  });
}

}  // namespace gpuwatch::server
