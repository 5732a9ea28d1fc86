#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "alerts/transport.h"

namespace gpuwatch::alerts {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Appends one JSON line per event and flushes it, so a crash loses nothing
// that was delivered.
class FileTransport final : public Transport {
 public:
  FileTransport(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  Status Deliver(const Event&, std::string_view json, std::stop_token) override {
    std::clearerr(file_.get());
    std::fwrite(json.data(), 1, json.size(), file_.get());
    std::fputc('\n', file_.get());
    if (std::fflush(file_.get()) != 0 || std::ferror(file_.get())) {
      return Status::Unavailable(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
    }
    return Status::Ok();
  }
  std::string Describe() const override { return "file " + path_; }

 private:
  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
};

}  // namespace

Result<std::unique_ptr<Transport>> MakeFileTransport(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "ae");  // append, close-on-exec
  if (f == nullptr) {
    return Status::PermissionDenied(
        fmt::format("cannot open alert file {} for appending: {}", path, std::strerror(errno)));
  }
  return std::unique_ptr<Transport>(std::make_unique<FileTransport>(path, f));
}

}  // namespace gpuwatch::alerts
