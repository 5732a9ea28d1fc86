#include "engine/claim.h"

#include <fmt/format.h>
#include <poll.h>
#include <pwd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace gpuwatch::engine {
namespace {

using Clock = std::chrono::steady_clock;
using Kind = ClaimOutcome::Kind;

std::string Ordinal(int n) {
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                       : n % 10 == 1                    ? "st"
                       : n % 10 == 2                    ? "nd"
                       : n % 10 == 3                    ? "rd"
                                                        : "th";
  return std::to_string(n) + suffix;
}

select::Choice ChooseFree(const ClaimRequest& request, const host::LeaseTable& table,
                          const Snapshot& snapshot,
                          const std::optional<std::set<std::string>>& visible) {
  select::Criteria criteria = request.criteria;
  for (auto& [uuid, why] : TakenBy(table)) criteria.taken.emplace(uuid, why);
  return select::Choose(snapshot, criteria, visible);
}

bool Enough(const ClaimRequest& request, const select::Choice& choice) {
  return static_cast<int>(choice.chosen.size()) >= request.criteria.count;
}

// Leases what `choice` chose; returns when (under the lock).
std::chrono::system_clock::time_point AddLeases(const ClaimRequest& request,
                                                const select::Choice& choice, std::uint64_t ticket,
                                                host::LeaseTable& table) {
  const auto now = std::chrono::system_clock::now();
  for (const select::Candidate& c : choice.chosen) {
    host::Lease l;
    l.uuid = c.uuid;
    l.device = c.id;
    l.holders = request.holders;
    l.user = request.user;
    l.command = request.command;
    l.ticket = ticket;
    l.since = now;
    table.leases.push_back(std::move(l));
  }
  return now;
}

// "none of 8 qualifies: 0 leased to pid 12 (alice: train.py); 1 ..." (the
// first few reasons: the line has to fit a terminal).
std::string WhyNot(const select::Choice& choice) {
  std::string out;
  int shown = 0;
  for (const select::Candidate& c : choice.candidates) {
    if (c.reasons.empty() || ++shown > 3) continue;
    out += fmt::format("; {}: {}", c.id, c.reasons.front());
  }
  if (shown > 3) out += fmt::format("; {} more", shown - 3);
  return fmt::format("{} of {} qualif{}{}", choice.chosen.size(), choice.candidates.size(),
                     choice.chosen.size() == 1 ? "ies" : "y", out);
}

// Wakes a waiter as soon as the lease file changes (a job ended, the queue
// moved) instead of at its next poll. Polling stays: a holder killed with -9
// changes no file.
class FileWatch {
 public:
  explicit FileWatch(const std::filesystem::path& dir)
      : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    if (fd_ >= 0 && inotify_add_watch(fd_, dir.c_str(), IN_CLOSE_WRITE | IN_MODIFY) < 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~FileWatch() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileWatch(const FileWatch&) = delete;
  FileWatch& operator=(const FileWatch&) = delete;

  // Sleeps `period`, waking early for a change or when `stop` says so.
  void Nap(std::chrono::milliseconds period, const std::function<int()>& stop) const {
    const auto until = Clock::now() + period;
    while (Clock::now() < until && stop() == 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
      const int slice = static_cast<int>(std::clamp<std::int64_t>(left.count(), 1, 20));
      if (fd_ < 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(slice));
        continue;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, slice) > 0) {
        char buf[4096];
        while (::read(fd_, buf, sizeof buf) > 0) {
        }
        return;
      }
    }
  }

 private:
  int fd_ = -1;
};

}  // namespace

std::string Wants(const select::Criteria& c) {
  std::vector<std::string> limits;
  if (c.min_free_bytes) {
    limits.push_back(fmt::format("≥ {:.1f} GiB free", *c.min_free_bytes / (1024.0 * 1024 * 1024)));
  }
  if (c.max_utilization) {
    limits.push_back(fmt::format("utilization ≤ {:.0f} %", *c.max_utilization * 100));
  }
  if (c.max_memory_utilization) {
    limits.push_back(fmt::format("memory used ≤ {:.0f} %", *c.max_memory_utilization * 100));
  }
  std::string out = fmt::format("{} GPU{}", c.count, c.count == 1 ? "" : "s");
  for (std::size_t i = 0; i < limits.size(); ++i) {
    out += (i == 0 ? " with " : ", ") + limits[i];
  }
  return out;
}

std::map<std::string, std::string> TakenBy(const host::LeaseTable& table) {
  std::map<std::string, std::string> out;
  for (const host::Lease& l : table.leases) {
    const std::uint32_t pid = l.holders.empty() ? 0 : l.holders.front().pid;
    std::string who = l.user;
    if (!l.command.empty()) who += (who.empty() ? "" : ": ") + l.command.substr(0, 60);
    out.emplace(l.uuid, fmt::format("leased to pid {} ({})", pid, who));
  }
  return out;
}

CollectOptions ChoosingReads(const select::Criteria& criteria) {
  CollectOptions collect;
  collect.fields = select::SelectionFields();
  collect.processes = !criteria.free_users.empty();
  return collect;
}

Result<ClaimOutcome> Claim(const ClaimRequest& request, const host::LeaseBook& book,
                           const std::function<Snapshot()>& read_gpus,
                           const std::function<void(const std::string&)>& progress,
                           const std::function<int()>& stop) {
  ClaimOutcome out;
  const auto visible_for = [&](const Snapshot& snap) {
    return select::VisibleDevices(request.cuda_visible_devices, request.cuda_device_order, snap);
  };

  if (!request.lease) {
    const Snapshot snap = read_gpus();
    auto visible = visible_for(snap);
    if (!visible) return visible.error();
    auto table = book.Read();
    if (!table) {
      out.warning = table.error().message() + "; leases are ignored";
      table = host::LeaseTable{};
    }
    out.choice = ChooseFree(request, *table, snap, *visible);
    out.kind = Enough(request, out.choice) ? Kind::kGranted : Kind::kTooFew;
    return out;
  }

  if (!request.wait) {
    const Snapshot snap = read_gpus();
    auto visible = visible_for(snap);
    if (!visible) return visible.error();
    Status written = book.Update(
        [&](host::LeaseTable& t) {
          if (!t.queue.empty()) {
            out.kind = Kind::kQueueAhead;
            out.ahead = static_cast<int>(t.queue.size());
            return;
          }
          out.choice = ChooseFree(request, t, snap, *visible);
          if (!Enough(request, out.choice)) {
            out.kind = Kind::kTooFew;
            return;
          }
          out.kind = Kind::kGranted;
          out.ticket = t.next_ticket++;
          out.granted = AddLeases(request, out.choice, out.ticket, t);
        },
        &out.warning);
    if (!written.ok()) return written;
    return out;
  }

  // Join the queue, then take GPUs when first in it and enough qualify.
  const auto started = Clock::now();
  host::Waiter me;
  me.holder = request.holders.front();
  me.user = request.user;
  me.command = request.command;
  me.count = request.criteria.count;
  me.wants = Wants(request.criteria);
  me.since = std::chrono::system_clock::now();
  const auto join = [&](host::LeaseTable& t) {
    if (me.ticket == 0) me.ticket = t.next_ticket++;
    if (t.Position(me.ticket) == 0) {
      t.queue.push_back(me);
      std::stable_sort(
          t.queue.begin(), t.queue.end(),
          [](const host::Waiter& a, const host::Waiter& b) { return a.ticket < b.ticket; });
    }
  };
  if (Status s = book.Update(join, &out.warning); !s.ok()) return s;
  out.ticket = me.ticket;
  const auto leave = [&](Kind why) -> Result<ClaimOutcome> {
    out.kind = why;
    out.waited = Clock::now() - started;
    Status s = book.Update([&](host::LeaseTable& t) {
      out.ahead = std::max(0, t.Position(me.ticket) - 1);
      t.Remove(me.ticket);
    });
    if (!s.ok()) return s;
    return out;
  };

  const FileWatch watch(book.file().parent_path());
  std::string last_line;
  for (;;) {
    if (const int why = stop(); why != 0) {
      out.signal = why;
      return leave(Kind::kInterrupted);
    }
    if (request.timeout && Clock::now() - started >= *request.timeout) {
      return leave(Kind::kTimedOut);
    }
    int position = 0;
    int waiting = 0;
    auto table = book.Read();
    if (table) {
      position = table->Position(me.ticket);
      waiting = static_cast<int>(table->queue.size());
    }
    if (!table || position == 0) {
      // The file was reset or unreadable, or our holder (select's caller) is
      // gone: take our place again, at the pace of a poll.
      if (Status s = book.Update(join, &out.warning); !s.ok()) return s;
      watch.Nap(request.poll, stop);
      continue;
    }
    std::string line;
    if (position == 1) {
      const Snapshot snap = read_gpus();
      auto visible = visible_for(snap);
      if (!visible) {
        (void)leave(Kind::kTooFew);
        return visible.error();
      }
      bool granted = false;
      Status s = book.Update([&](host::LeaseTable& t) {
        if (t.Position(me.ticket) != 1) return;
        out.choice = ChooseFree(request, t, snap, *visible);
        if (!Enough(request, out.choice)) return;
        t.Remove(me.ticket);  // out of the queue, into the leases
        out.granted = AddLeases(request, out.choice, me.ticket, t);
        granted = true;
      });
      if (!s.ok()) return s;
      if (granted) {
        out.kind = Kind::kGranted;
        out.waited = Clock::now() - started;
        return out;
      }
      line = fmt::format("waiting for {}: first in the queue; {}", me.wants, WhyNot(out.choice));
    } else {
      line = fmt::format("waiting for {}: {} of {} in the queue (#{})", me.wants, Ordinal(position),
                         waiting, me.ticket);
    }
    if (line != last_line) progress(line);
    last_line = line;
    watch.Nap(request.poll, stop);
  }
}

std::string CurrentUser() {
  const uid_t uid = getuid();
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

host::LeaseBook MachineLeaseBook() {
  return host::LeaseBook(host::LeaseDirectory(std::getenv("GPUWATCH_RUNTIME_DIR")),
                         host::ProcessLiveness("/proc"));
}

std::string DeviceList(const select::Choice& choice, bool uuids) {
  std::string list;
  for (const auto& cand : choice.chosen) {
    if (!list.empty()) list += ",";
    list += uuids || cand.mig_index ? cand.uuid : cand.id;
  }
  return list;
}

HeldLeases::~HeldLeases() {
  (void)book_.Update([this](host::LeaseTable& t) { t.Remove(ticket_); });
}

Status HeldLeases::AddHolder(const ProcessKey& holder) {
  return book_.Update([&](host::LeaseTable& t) {
    for (host::Lease& l : t.leases) {
      if (l.ticket == ticket_) l.holders.push_back(holder);
    }
  });
}

}  // namespace gpuwatch::engine
