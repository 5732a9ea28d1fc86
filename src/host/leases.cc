#include "host/leases.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>

#include "host/proc_files.h"
#include "host/proc_parse.h"

namespace gpuwatch::host {
namespace {

using nlohmann::json;
using std::chrono::system_clock;

constexpr int kFormatVersion = 1;

// What the parser keeps of a file within kMaxLeaseFileBytes: a lease is about
// a dozen JSON values, a waiter eleven, nested at most 6 deep.
constexpr std::size_t kMaxValues = kMaxLeaseEntries * 2 * 16;
constexpr int kMaxDepth = 8;

std::string TooLarge(std::string_view size) {
  return fmt::format("lease file: {} bytes, more than the {} ({} MiB) a lease file may hold", size,
                     kMaxLeaseFileBytes, kMaxLeaseFileBytes >> 20);
}

std::string TooMany(std::size_t n, const char* what) {
  return fmt::format("lease file: {} {}, more than the {} a lease file may hold", n, what,
                     kMaxLeaseEntries);
}

// The document, keeping at most kMaxValues values nested at most kMaxDepth
// deep: past either bound nothing more is kept and `over` names the bound.
json ParseBounded(std::string_view text, std::string& over) {
  std::size_t values = 0;
  const json::parser_callback_t keep = [&](int depth, json::parse_event_t event, json&) {
    if (!over.empty()) return false;
    if (event == json::parse_event_t::key || event == json::parse_event_t::object_end ||
        event == json::parse_event_t::array_end) {
      return true;
    }
    if (depth > kMaxDepth) {
      over = fmt::format("lease file: nested deeper than {}", kMaxDepth);
    } else if (++values > kMaxValues) {
      over = fmt::format("lease file: more than {} values (at most {} leases and {} waiters)",
                         kMaxValues, kMaxLeaseEntries, kMaxLeaseEntries);
    }
    return over.empty();
  };
  return json::parse(text, keep);
}

std::int64_t Nanos(const timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

LeaseFileStamp StampOf(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size, Nanos(st.st_mtim), Nanos(st.st_ctim)};
}

std::int64_t Millis(system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

system_clock::time_point FromMillis(std::int64_t ms) {
  return system_clock::time_point(std::chrono::milliseconds(ms));
}

json HolderJson(const ProcessKey& h) { return json::array({h.pid, h.start_ticks}); }

// Typed reads of one entry; the error names where (`at`) and what.
class Entry {
 public:
  Entry(const json& j, std::string at) : j_(j), at_(std::move(at)) {
    if (!j_.is_object()) throw std::invalid_argument(at_ + ": expected an object");
  }
  std::string Text(const char* key) const {
    const json& v = Get(key);
    if (!v.is_string()) throw std::invalid_argument(Where(key) + ": expected a string");
    return v.get<std::string>();
  }
  std::uint64_t Unsigned(const char* key) const {
    const json& v = Get(key);
    if (!v.is_number_unsigned()) throw std::invalid_argument(Where(key) + ": expected a count");
    return v.get<std::uint64_t>();
  }
  std::int64_t Integer(const char* key) const {
    const json& v = Get(key);
    if (!v.is_number_integer()) throw std::invalid_argument(Where(key) + ": expected an integer");
    return v.get<std::int64_t>();
  }
  // Milliseconds since the Unix epoch, up to the year 2200: system_clock
  // counts nanoseconds in 64 bits, which end in 2262.
  system_clock::time_point Time(const char* key) const {
    const std::int64_t ms = Integer(key);
    if (ms < 0 || ms > 7'258'118'400'000) {
      throw std::invalid_argument(Where(key) + ": expected a time in ms since 1970");
    }
    return FromMillis(ms);
  }
  ProcessKey Holder(const json& v, const std::string& where) const {
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_unsigned() ||
        !v[1].is_number_unsigned() || v[0].get<std::uint64_t>() > 0xffffffffu) {
      throw std::invalid_argument(where + ": expected [pid, start_ticks]");
    }
    return {static_cast<std::uint32_t>(v[0].get<std::uint64_t>()), v[1].get<std::uint64_t>()};
  }
  const json& Get(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end()) throw std::invalid_argument(Where(key) + ": missing");
    return *it;
  }
  std::string Where(const char* key) const { return at_ + "." + key; }

 private:
  const json& j_;
  std::string at_;
};

// The lease file of a directory we may have to create for every user.
Status EnsureDirectory(const std::filesystem::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      return Status::Unavailable(fmt::format("{}: {}", dir.string(), std::strerror(errno)));
    }
    std::error_code ec;
    std::filesystem::create_directories(dir.parent_path(), ec);  // a GPUWATCH_RUNTIME_DIR's
    if (::mkdir(dir.c_str(), 01777) != 0 && errno != EEXIST) {
      return Status::Unavailable(
          fmt::format("cannot create {}: {}", dir.string(), std::strerror(errno)));
    }
    ::chmod(dir.c_str(), 01777);  // past the umask; fails harmlessly if another user made it
    if (::lstat(dir.c_str(), &st) != 0) {
      return Status::Unavailable(fmt::format("{}: {}", dir.string(), std::strerror(errno)));
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(
        fmt::format("{} is not a directory (a symbolic link is refused)", dir.string()));
  }
  return Status::Ok();
}

// An open, locked lease file; unlocks and closes on destruction.
class LockedFile {
 public:
  ~LockedFile() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;

  // kNotFound when !create and the file is absent.
  static Result<std::unique_ptr<LockedFile>> Open(const std::filesystem::path& file, bool create) {
    const int flags = (create ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    const int fd = ::open(file.c_str(), flags, 0666);
    if (fd < 0) {
      const std::string why = fmt::format("{}: {}", file.string(), std::strerror(errno));
      return errno == ENOENT ? Status::NotFound(why) : Status::Unavailable(why);
    }
    auto out = std::unique_ptr<LockedFile>(new LockedFile(fd));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      return Status::InvalidArgument(fmt::format("{} is not a regular file", file.string()));
    }
    if (create && st.st_uid == ::geteuid() && (st.st_mode & 0777) != 0666) ::fchmod(fd, 0666);
    while (::flock(fd, create ? LOCK_EX : LOCK_SH) != 0) {
      if (errno != EINTR) {
        return Status::Unavailable(
            fmt::format("cannot lock {}: {}", file.string(), std::strerror(errno)));
      }
    }
    return out;
  }

  // The whole text; InvalidArgument naming the bound, and nothing more read,
  // past kMaxLeaseFileBytes.
  Result<std::string> ReadAll() const {
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && static_cast<std::uint64_t>(st.st_size) > kMaxLeaseFileBytes) {
      return Status::InvalidArgument(TooLarge(std::to_string(st.st_size)));
    }
    std::string text;
    char buf[8192];
    off_t at = 0;
    for (;;) {
      const std::size_t want = std::min(sizeof buf, kMaxLeaseFileBytes + 1 - text.size());
      const ssize_t n = ::pread(fd_, buf, want, at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::Unavailable(std::strerror(errno));
      if (n == 0) return text;
      text.append(buf, static_cast<std::size_t>(n));
      at += n;
      if (text.size() > kMaxLeaseFileBytes) {  // it grew while read
        return Status::InvalidArgument(TooLarge(fmt::format("over {}", kMaxLeaseFileBytes)));
      }
    }
  }

  LeaseFileStamp Stamp() const {
    struct stat st {};
    ::fstat(fd_, &st);
    return StampOf(st);
  }

  Status Replace(std::string_view text) const {
    if (::ftruncate(fd_, 0) != 0) return Status::Unavailable(std::strerror(errno));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n =
          ::pwrite(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::Unavailable(std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
    return Status::Ok();
  }

 private:
  explicit LockedFile(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace

int LeaseTable::Prune(const std::function<bool(const ProcessKey&)>& alive) {
  const std::size_t before = leases.size() + queue.size();
  std::erase_if(leases, [&](const Lease& l) {
    return std::none_of(l.holders.begin(), l.holders.end(), alive);
  });
  std::erase_if(queue, [&](const Waiter& w) { return !alive(w.holder); });
  return static_cast<int>(before - leases.size() - queue.size());
}

const Lease* LeaseTable::Find(std::string_view uuid) const {
  for (const Lease& l : leases) {
    if (l.uuid == uuid) return &l;
  }
  return nullptr;
}

int LeaseTable::Position(std::uint64_t ticket) const {
  for (std::size_t i = 0; i < queue.size(); ++i) {
    if (queue[i].ticket == ticket) return static_cast<int>(i) + 1;
  }
  return 0;
}

int LeaseTable::Remove(std::uint64_t ticket) {
  const std::size_t before = leases.size() + queue.size();
  std::erase_if(leases, [&](const Lease& l) { return l.ticket == ticket; });
  std::erase_if(queue, [&](const Waiter& w) { return w.ticket == ticket; });
  return static_cast<int>(before - leases.size() - queue.size());
}

std::string LeaseTableToJson(const LeaseTable& table) {
  json leases = json::array();
  for (const Lease& l : table.leases) {
    json holders = json::array();
    for (const ProcessKey& h : l.holders) holders.push_back(HolderJson(h));
    leases.push_back({{"uuid", l.uuid},
                      {"device", l.device},
                      {"holders", holders},
                      {"user", l.user},
                      {"command", l.command},
                      {"ticket", l.ticket},
                      {"since_ms", Millis(l.since)}});
  }
  json queue = json::array();
  for (const Waiter& w : table.queue) {
    queue.push_back({{"ticket", w.ticket},
                     {"holder", HolderJson(w.holder)},
                     {"user", w.user},
                     {"command", w.command},
                     {"count", w.count},
                     {"wants", w.wants},
                     {"since_ms", Millis(w.since)}});
  }
  json out = {{"version", kFormatVersion},
              {"next_ticket", table.next_ticket},
              {"leases", leases},
              {"queue", queue}};
  return out.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

Result<LeaseTable> ParseLeaseTable(std::string_view text) {
  LeaseTable table;
  if (text.size() > kMaxLeaseFileBytes) {
    return Status::InvalidArgument(TooLarge(std::to_string(text.size())));
  }
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return table;
  try {
    std::string over;
    const json root = ParseBounded(text, over);
    if (!over.empty()) return Status::InvalidArgument(over);
    const Entry top(root, "lease file");
    if (!top.Get("version").is_number_integer() || top.Integer("version") != kFormatVersion) {
      return Status::InvalidArgument(
          fmt::format("lease file: version {} is not {}", top.Integer("version"), kFormatVersion));
    }
    table.next_ticket = top.Unsigned("next_ticket");
    const json& leases = top.Get("leases");
    const json& queue = top.Get("queue");
    if (!leases.is_array() || !queue.is_array()) {
      return Status::InvalidArgument("lease file: leases and queue must be lists");
    }
    if (leases.size() > kMaxLeaseEntries)
      return Status::InvalidArgument(TooMany(leases.size(), "leases"));
    if (queue.size() > kMaxLeaseEntries)
      return Status::InvalidArgument(TooMany(queue.size(), "waiters"));
    for (std::size_t i = 0; i < leases.size(); ++i) {
      const Entry e(leases[i], fmt::format("leases[{}]", i));
      Lease l;
      l.uuid = e.Text("uuid");
      l.device = e.Text("device");
      const json& holders = e.Get("holders");
      if (!holders.is_array() || holders.empty()) {
        throw std::invalid_argument(e.Where("holders") + ": expected a non-empty list");
      }
      for (std::size_t k = 0; k < holders.size(); ++k) {
        l.holders.push_back(e.Holder(holders[k], fmt::format("{}[{}]", e.Where("holders"), k)));
      }
      l.user = e.Text("user");
      l.command = e.Text("command");
      l.ticket = e.Unsigned("ticket");
      l.since = e.Time("since_ms");
      table.leases.push_back(std::move(l));
    }
    for (std::size_t i = 0; i < queue.size(); ++i) {
      const Entry e(queue[i], fmt::format("queue[{}]", i));
      Waiter w;
      w.ticket = e.Unsigned("ticket");
      w.holder = e.Holder(e.Get("holder"), e.Where("holder"));
      w.user = e.Text("user");
      w.command = e.Text("command");
      const std::uint64_t count = e.Unsigned("count");
      if (count < 1 || count > 4096) {
        throw std::invalid_argument(e.Where("count") + ": expected 1 to 4096");
      }
      w.count = static_cast<int>(count);
      w.wants = e.Text("wants");
      w.since = e.Time("since_ms");
      table.queue.push_back(std::move(w));
    }
  } catch (const json::exception& e) {
    return Status::InvalidArgument(fmt::format("lease file: {}", e.what()));
  } catch (const std::invalid_argument& e) {
    return Status::InvalidArgument(fmt::format("lease file: {}", e.what()));
  }
  std::sort(table.queue.begin(), table.queue.end(),
            [](const Waiter& a, const Waiter& b) { return a.ticket < b.ticket; });
  for (const Lease& l : table.leases) table.next_ticket = std::max(table.next_ticket, l.ticket + 1);
  for (const Waiter& w : table.queue) table.next_ticket = std::max(table.next_ticket, w.ticket + 1);
  return table;
}

bool ProcessLiveness::Alive(const ProcessKey& holder) const {
  auto stat = ReadWholeFile(proc_ / std::to_string(holder.pid) / "stat");
  if (!stat) {
    // hidepid=2 hides other users' processes: ask the kernel whether the pid
    // exists (EPERM: it does, and is not ours). Only our own /proc can.
    if (proc_ == "/proc" && holder.pid > 0) {
      return ::kill(static_cast<pid_t>(holder.pid), 0) == 0 || errno == EPERM;
    }
    return false;
  }
  const auto info = ParseStat(*stat);
  if (!info) return false;
  if (info->state == 'Z' || info->state == 'X') return false;
  return info->start_ticks == holder.start_ticks;
}

Result<ProcessKey> ProcessLiveness::Identify(std::uint32_t pid) const {
  auto stat = ReadWholeFile(proc_ / std::to_string(pid) / "stat");
  if (!stat) return Status::NotFound(fmt::format("no process {}: {}", pid, stat.error().message()));
  const auto info = ParseStat(*stat);
  if (!info) return Status::NotFound(fmt::format("process {}: unreadable stat", pid));
  return ProcessKey{pid, info->start_ticks};
}

std::filesystem::path LeaseDirectory(const char* runtime_dir_env) {
  if (runtime_dir_env != nullptr && *runtime_dir_env != '\0') return runtime_dir_env;
  std::error_code ec;
  if (std::filesystem::is_directory("/dev/shm", ec)) return "/dev/shm/gpuwatch";
  return "/tmp/gpuwatch";
}

Status EnsureRuntimeDirectory(const std::filesystem::path& dir) { return EnsureDirectory(dir); }

LeaseBook::LeaseBook(std::filesystem::path directory, ProcessLiveness liveness)
    : directory_(std::move(directory)),
      file_(directory_ / "leases.json"),
      liveness_(std::move(liveness)) {}

Status LeaseBook::Update(const std::function<void(LeaseTable&)>& change,
                         std::string* warning) const {
  if (Status s = EnsureDirectory(directory_); !s.ok()) return s;
  auto file = LockedFile::Open(file_, /*create=*/true);
  if (!file) return file.error();
  auto text = (*file)->ReadAll();
  if (!text && text.error().code() != Status::Code::kInvalidArgument)
    return Status::Unavailable(fmt::format("{}: {}", file_.string(), text.error().message()));
  // Over the bounds is corrupt too.
  auto table = text ? ParseLeaseTable(*text) : Result<LeaseTable>(text.error());
  if (!table) {
    if (warning != nullptr) {
      *warning = fmt::format("{}: {}; starting from an empty table", file_.string(),
                             table.error().message());
    }
    table = LeaseTable{};
  }
  table->Prune([this](const ProcessKey& h) { return liveness_.Alive(h); });
  change(*table);
  if (table->leases.size() > kMaxLeaseEntries || table->queue.size() > kMaxLeaseEntries) {
    return Status::Unavailable(
        fmt::format("{}: {} leases and {} waiters would be more than the {} of each a lease file "
                    "may hold; not written",
                    file_.string(), table->leases.size(), table->queue.size(), kMaxLeaseEntries));
  }
  const std::string updated = LeaseTableToJson(*table);
  if (updated.size() > kMaxLeaseFileBytes) {
    return Status::Unavailable(fmt::format("{}: {}; not written", file_.string(),
                                           TooLarge(std::to_string(updated.size()))));
  }
  if (text && updated == *text) return Status::Ok();  // no write, so no wake-up for the watchers
  return (*file)->Replace(updated);
}

Result<LeaseTable> LeaseBook::Load(std::optional<LeaseFileStamp>& stamp) const {
  stamp.reset();
  auto file = LockedFile::Open(file_, /*create=*/false);
  if (!file) {
    if (file.error().code() == Status::Code::kNotFound) return LeaseTable{};
    return file.error();
  }
  stamp = (*file)->Stamp();
  auto text = (*file)->ReadAll();
  if (!text) return text.error().WithContext(file_.string());
  auto table = ParseLeaseTable(*text);
  if (!table) return table.error().WithContext(file_.string());
  return table;
}

Result<LeaseTable> LeaseBook::Read() const {
  std::optional<LeaseFileStamp> stamp;
  auto table = Load(stamp);
  if (table) table->Prune([this](const ProcessKey& h) { return liveness_.Alive(h); });
  return table;
}

LeaseCache::LeaseCache(LeaseBook book, std::function<void(const std::string&)> warn,
                       std::chrono::nanoseconds settle)
    : book_(std::move(book)), warn_(std::move(warn)), settle_(settle) {}

Result<LeaseTable> LeaseCache::Read() {
  MutexLock lock(mu_);
  struct stat st {};
  const bool unchanged =
      ::lstat(book_.file_.c_str(), &st) == 0 && settled_ && stamp_ && *stamp_ == StampOf(st);
  if (!unchanged) {
    std::optional<LeaseFileStamp> stamp;
    table_ = book_.Load(stamp);
    ++loads_;
    const std::int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    stamp_ = stamp;
    settled_ = stamp && now_ns - stamp->changed_ns >= settle_.count();
    if (!table_ && warn_ &&
        (table_.error().message() != warned_message_ || stamp != warned_stamp_)) {
      warned_message_ = table_.error().message();
      warned_stamp_ = stamp;
      warn_(warned_message_);
    }
  }
  if (!table_) return table_.error();
  LeaseTable table = *table_;
  lock.Unlock();
  table.Prune([this](const ProcessKey& h) { return book_.liveness_.Alive(h); });
  return table;
}

std::uint64_t LeaseCache::loads() const {
  MutexLock lock(mu_);
  return loads_;
}

}  // namespace gpuwatch::host
