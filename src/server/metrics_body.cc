#include "server/metrics_body.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>

#include "core/printable.h"

namespace gpuwatch::server {
namespace {

// Deflates `text` into `out` through `z` (set up for raw deflate: no zlib or
// gzip framing), ending with `flush`: Z_FULL_FLUSH leaves the stream on a
// byte boundary with no final block and no reference back, Z_FINISH writes
// the final block.
void Deflate(z_stream& z, std::string_view text, int flush, std::string& out) {
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  const std::size_t start = out.size();
  out.resize(start + deflateBound(&z, z.avail_in) + 16);
  z.next_out = reinterpret_cast<Bytef*>(out.data() + start);
  z.avail_out = static_cast<uInt>(out.size() - start);
  const int rc = deflate(&z, flush);
  const std::size_t written = out.size() - start - z.avail_out;
  if (rc != Z_OK && rc != Z_STREAM_END) throw std::runtime_error("zlib: deflate failed");
  out.resize(start + written);
}

// Raw deflate of `text` (the published part, once a sample) appended to
// `out`, with a window no larger than the text.
void RawDeflate(std::string_view text, int level, int flush, std::string& out) {
  int window_bits = 9;  // zlib's smallest for raw deflate
  while (window_bits < 15 && (std::size_t{1} << window_bits) < text.size()) ++window_bits;
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, -window_bits, window_bits - 7, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("zlib: deflateInit2 failed");
  }
  try {
    Deflate(z, text, flush, out);
  } catch (...) {
    deflateEnd(&z);
    throw;
  }
  deflateEnd(&z);
}

// The live part's deflate state, one a thread and reset for every scrape:
// setting one up allocates about 64 KiB, which every scrape used to pay.
// Stored, not compressed: the live part is the few kB of counters and lease
// series that change between scrapes, and deflating them even at the fastest
// level took a fifth of a scrape's CPU for about 2 kB less on the wire
// (docs/BENCHMARKS.md, "/metrics under load"). The published part, most of
// the body, is compressed once a sample at the default level.
class LiveDeflater {
 public:
  LiveDeflater() {
    ok_ = deflateInit2(&z_, Z_NO_COMPRESSION, Z_DEFLATED, -13, 1, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~LiveDeflater() {
    if (ok_) deflateEnd(&z_);
  }
  LiveDeflater(const LiveDeflater&) = delete;
  LiveDeflater& operator=(const LiveDeflater&) = delete;

  void Finish(std::string_view text, std::string& out) {
    if (!ok_ || deflateReset(&z_) != Z_OK) throw std::runtime_error("zlib: deflateInit2 failed");
    Deflate(z_, text, Z_FINISH, out);
  }

 private:
  z_stream z_{};
  bool ok_ = false;
};

void PutLittleEndian32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t Crc(std::string_view text) {
  return static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string GzipEnd(const MetricsHead& head, std::string_view tail) {
  std::string out;
  thread_local LiveDeflater deflater;
  deflater.Finish(tail, out);
  const auto crc = static_cast<std::uint32_t>(
      crc32_combine(head.crc, Crc(tail), static_cast<z_off_t>(tail.size())));
  PutLittleEndian32(out, crc);
  PutLittleEndian32(out, static_cast<std::uint32_t>(head.text.size() + tail.size()));
  return out;
}

bool AcceptsGzip(std::string_view header) {
  // The weight of gzip (or x-gzip) when listed, else of *; q=0 refuses.
  std::optional<bool> gzip, any;
  const std::string value = Lower(header);
  std::string_view rest = value;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const std::size_t semi = item.find(';');
    const std::string_view coding = TrimBlanks(item.substr(0, semi));
    bool accepted = true;
    if (semi != std::string_view::npos) {
      std::string_view param = TrimBlanks(item.substr(semi + 1));
      if (param.starts_with("q=")) {
        param.remove_prefix(2);
        accepted = param.find_first_not_of("0.") != std::string_view::npos;  // 0, 0.0, 0.000
      }
    }
    if (coding == "gzip" || coding == "x-gzip") gzip = gzip.value_or(false) || accepted;
    if (coding == "*") any = accepted;
  }
  return gzip.value_or(any.value_or(false));
}

MetricsHead RenderHead(std::uint64_t version, std::string text) {
  MetricsHead head;
  head.version = version;
  head.text = std::move(text);
  // Header: magic, deflate, no flags, no time, no extra flags, OS unknown.
  head.gzip_start.assign("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  // Once a sample, for every scrape after it: the default level.
  RawDeflate(head.text, Z_DEFAULT_COMPRESSION, Z_FULL_FLUSH, head.gzip_start);
  head.crc = Crc(head.text);
  return head;
}

std::shared_ptr<const MetricsHead> MetricsHeads::Get(std::uint64_t version, MetricsFormat format,
                                                     const std::function<std::string()>& render) {
  const auto slot = static_cast<std::size_t>(format == MetricsFormat::kOpenMetrics);
  {
    MutexLock lock(mu_);
    const std::shared_ptr<const MetricsHead>& held = held_[slot];
    if (held != nullptr && held->version >= version) return held;
    // Another scrape renders this publication: the one before serves
    // meanwhile (a sample older, never a wait). Only the first scrape of all
    // waits, for there is nothing to serve yet.
    if (rendering_[slot] && held != nullptr) return held;
    rendered_.Wait(lock, [&]() REQUIRES(mu_) { return !rendering_[slot]; });
    if (held_[slot] != nullptr && held_[slot]->version >= version) return held_[slot];
    rendering_[slot] = true;
  }
  std::shared_ptr<const MetricsHead> head;
  try {
    head = std::make_shared<const MetricsHead>(RenderHead(version, render()));
  } catch (...) {
    MutexLock lock(mu_);
    rendering_[slot] = false;
    rendered_.NotifyAll();
    throw;
  }
  MutexLock lock(mu_);
  rendering_[slot] = false;
  // A scrape that read an older publication than the one held (it raced a
  // newer sample) keeps the newer one for the scrapes after it.
  if (held_[slot] == nullptr || held_[slot]->version < version) held_[slot] = head;
  rendered_.NotifyAll();
  return head;
}

}  // namespace gpuwatch::server
