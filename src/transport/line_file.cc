#include "transport/line_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace gpuwatch {

Result<std::unique_ptr<LineFile>> LineFile::Open(const std::string& path, ErrorHandler on_error,
                                                 std::size_t max_queued) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) {
    return Status::PermissionDenied(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  return std::unique_ptr<LineFile>(new LineFile(f, path, std::move(on_error), max_queued));
}

LineFile::LineFile(std::FILE* file, std::string path, ErrorHandler on_error, std::size_t max_queued)
    : file_(file), path_(std::move(path)), on_error_(std::move(on_error)), max_queued_(max_queued) {
  writer_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

LineFile::~LineFile() { Close(); }

void LineFile::Write(std::string line) {
  std::lock_guard lock(mu_);
  if (closed_) return;
  line += '\n';
  queue_.push_back(std::move(line));
  while (queue_.size() > max_queued_) {
    queue_.pop_front();
    ++dropped_;
  }
  cv_.notify_all();
}

void LineFile::Flush() {
  std::unique_lock lock(mu_);
  cv_.notify_all();
  cv_.wait(lock, [&] { return (queue_.empty() && pending_ == 0) || !writer_.joinable(); });
}

void LineFile::Close() {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  writer_.request_stop();
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  std::fclose(file_);
}

std::uint64_t LineFile::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

std::uint64_t LineFile::failed_writes() const {
  std::lock_guard lock(mu_);
  return failed_;
}

void LineFile::Run(std::stop_token stop) {
  std::vector<std::string> batch;
  while (true) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || stop.stop_requested(); });
      if (queue_.empty() && stop.stop_requested()) return;
      batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
      queue_.clear();
      pending_ = batch.size();
    }
    bool ok = true;
    std::string error;
    for (const auto& line : batch) {
      if (std::fwrite(line.data(), 1, line.size(), file_) != line.size()) {
        ok = false;
        error = std::strerror(errno);
        break;
      }
    }
    if (ok && std::fflush(file_) != 0) {
      ok = false;
      error = std::strerror(errno);
    }
    bool report = false;
    {
      std::lock_guard lock(mu_);
      pending_ = 0;
      if (!ok) {
        failed_ += batch.size();
        report = !failing_;  // say it once per failing stretch
        failing_ = true;
      } else {
        failing_ = false;
      }
      cv_.notify_all();
    }
    if (report && on_error_) {
      on_error_(fmt::format("writing {} failed ({}); lines are dropped until writing works again",
                            path_, error));
    }
    if (!ok) std::clearerr(file_);
  }
}

}  // namespace gpuwatch
