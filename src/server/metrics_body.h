// The bodies of /metrics: the published part of the document
// (export/prometheus.h) is rendered once per publication and format, kept as
// text and as deflate blocks that end on a byte boundary without a final
// block; a scrape renders only the small live part and joins the two into
// one gzip member (RFC 1952), the live part in stored blocks. So a scrape
// costs the live part, whatever the number of GPUs and processes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/mutex.h"
#include "export/metrics_writer.h"

namespace gpuwatch::server {

struct MetricsHead {
  std::uint64_t version = 0;  // the publication it renders
  std::string text;
  // The start of a gzip member (RFC 1952): its header and text's deflate
  // blocks, flushed to a byte boundary, no final block.
  std::string gzip_start;
  std::uint32_t crc = 0;  // CRC-32 of text
};

// What follows head.gzip_start to make one gzip member whose content is
// head.text then tail: tail's deflate blocks, the final one last, and the
// trailer (CRC-32 and length of the whole).
std::string GzipEnd(const MetricsHead& head, std::string_view tail);
// Whether an Accept-Encoding header value takes gzip: gzip or x-gzip listed
// without q=0, or else * without q=0.
bool AcceptsGzip(std::string_view accept_encoding);
// A head of `text`, the published part of publication `version`.
MetricsHead RenderHead(std::uint64_t version, std::string text);

// The newest head per format. Thread-safe.
class MetricsHeads {
 public:
  // The head of publication `version` in `format`: rendered by `render` (the
  // published part's text) when it is not held, by one scrape however many
  // ask at the same time; while it renders, the others get the head held
  // (the publication before: no scrape waits on another's render but the
  // very first ones).
  std::shared_ptr<const MetricsHead> Get(std::uint64_t version, MetricsFormat format,
                                         const std::function<std::string()>& render);

 private:
  Mutex mu_;
  CondVar rendered_;
  std::shared_ptr<const MetricsHead> held_[2] GUARDED_BY(mu_);
  bool rendering_[2] GUARDED_BY(mu_) = {false, false};
};

}  // namespace gpuwatch::server
