// /metrics' bodies: the gzip member joined from a cached head and a fresh
// tail inflates (zlib, as Prometheus' Go client does) to the two texts in
// order; Accept-Encoding is read as RFC 9110 says; a head is rendered once
// per publication; and over a real socket a gzip scrape carries the same
// document as a plain one, with the live part fresh on every scrape.
#include "server/metrics_body.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <zlib.h>

#include <future>
#include <thread>

#include "../backends/fake_env.h"
#include "sampler/collect.h"
#include "server/http_server.h"

namespace gpuwatch::server {
namespace {

// Inflates a whole gzip member; "" and a failure when it is not one.
std::string Gunzip(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + 15), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char buf[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END) << "not one whole gzip member";
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the member";
  inflateEnd(&z);
  return out;
}

std::string Lines(int n, const std::string& what) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += what + "{gpu=\"" + std::to_string(i % 8) + "\"} " + std::to_string(i * 7919 % 100003) +
           "\n";
  return out;
}

TEST(MetricsBody, AJoinedMemberInflatesToTheHeadThenTheTail) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Lines(20000, "gpuwatch_memory_used_bytes"), Lines(40, "gpuwatch_exporter_scrapes_total")},
      {"", "# EOF\n"},
      {Lines(3, "a"), ""},
      {"", ""},
  };
  for (const auto& [head_text, tail] : cases) {
    const MetricsHead head = RenderHead(7, head_text);
    EXPECT_EQ(head.version, 7u);
    EXPECT_EQ(head.text, head_text);
    const std::string gz = head.gzip_start + GzipEnd(head, tail);
    EXPECT_EQ(Gunzip(gz), head_text + tail) << head_text.size() << " + " << tail.size();
    if (head_text.size() > 100000) {
      EXPECT_LT(gz.size(), (head_text.size() + tail.size()) / 4) << "it compresses";
    }
  }
}

TEST(MetricsBody, AcceptEncodingTakesGzipUnlessItsWeightIsZero) {
  for (const char* yes : {"gzip", "gzip, deflate", "deflate, gzip;q=0.5", "GZIP", "x-gzip", "*",
                          "br;q=1.0, gzip;q=0.8, *;q=0.1", "*;q=0, gzip", "gzip; q=0.001"}) {
    EXPECT_TRUE(AcceptsGzip(yes)) << yes;
  }
  for (const char* no : {"", "identity", "deflate, br", "gzip;q=0", "gzip;q=0.000", "*;q=0",
                         "gzip;q=0, *", "gzipx", "identity, *;q=0"}) {
    EXPECT_FALSE(AcceptsGzip(no)) << no;
  }
}

TEST(MetricsBody, AHeadIsRenderedOncePerPublicationAndFormat) {
  MetricsHeads heads;
  int renders = 0;
  const auto render = [&](std::string text) {
    return [&renders, text] {
      ++renders;
      return text;
    };
  };
  EXPECT_EQ(heads.Get(1, MetricsFormat::kPrometheus, render("one"))->text, "one");
  EXPECT_EQ(heads.Get(1, MetricsFormat::kPrometheus, render("again"))->text, "one");
  EXPECT_EQ(renders, 1);
  EXPECT_EQ(heads.Get(1, MetricsFormat::kOpenMetrics, render("om one"))->text, "om one");
  EXPECT_EQ(renders, 2) << "each format has its own head";
  EXPECT_EQ(heads.Get(2, MetricsFormat::kPrometheus, render("two"))->text, "two");
  EXPECT_EQ(renders, 3);
  // A scrape that still holds publication 1 gets the newer head held: no render.
  EXPECT_EQ(heads.Get(1, MetricsFormat::kPrometheus, render("late one"))->text, "two");
  EXPECT_EQ(heads.Get(2, MetricsFormat::kPrometheus, render("not again"))->text, "two");
  EXPECT_EQ(renders, 3);
}

TEST(MetricsBody, WhileOneScrapeRendersANewHeadTheOthersGetTheOneHeldAtOnce) {
  MetricsHeads heads;
  heads.Get(1, MetricsFormat::kPrometheus, [] { return std::string("one"); });
  std::promise<void> rendering, finish;
  std::thread slow([&] {
    const auto head = heads.Get(2, MetricsFormat::kPrometheus, [&] {
      rendering.set_value();
      finish.get_future().wait();
      return std::string("two");
    });
    EXPECT_EQ(head->text, "two");
  });
  rendering.get_future().wait();
  int others = 0;
  // Publication 2 is being rendered: the scrapes meanwhile get 1, none renders.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(heads
                  .Get(2, MetricsFormat::kPrometheus,
                       [&] {
                         ++others;
                         return std::string("rendered twice");
                       })
                  ->text,
              "one");
  }
  finish.set_value();
  slow.join();
  EXPECT_EQ(others, 0);
  EXPECT_EQ(heads.Get(2, MetricsFormat::kPrometheus, [] { return std::string("again"); })->text,
            "two");
}

TEST(MetricsBody, EveryScrapeOnOneThreadGetsAWholeMemberFromTheReusedDeflater) {
  const MetricsHead head = RenderHead(1, Lines(500, "gpuwatch_memory_used_bytes"));
  for (int i = 0; i < 50; ++i) {
    const std::string tail = Lines(i * 7, "gpuwatch_exporter_scrapes_total");
    EXPECT_EQ(Gunzip(head.gzip_start + GzipEnd(head, tail)), head.text + tail) << i;
  }
  // A tail larger than the deflater's window still round-trips.
  const std::string big = Lines(5000, "gpuwatch_lease_info");
  EXPECT_EQ(Gunzip(head.gzip_start + GzipEnd(head, big)), head.text + big);
}

class MetricsOverHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = testing::OpenFake("fixed.yaml", 100);
    snapshot_ = std::make_shared<Snapshot>(CollectOnce(*backend, nullptr, CollectOptions{}));
    HttpOptions o;
    o.port = 0;
    o.api.hostname = "node1";
    o.version = "test";
    auto s = HttpServer::Start(o, hub_);
    ASSERT_TRUE(s) << s.error().message();
    server_ = std::move(*s);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
    client_->set_decompress(false);  // the bytes as sent
  }
  // The body of one scrape, inflated when it came as gzip.
  std::string Scrape(bool gzip, httplib::Headers extra = {}) {
    if (gzip) extra.emplace("Accept-Encoding", "gzip");
    auto r = client_->Get("/metrics", extra);
    EXPECT_TRUE(r);
    if (!r) return "";
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->get_header_value("Content-Encoding"), gzip ? "gzip" : "");
    EXPECT_EQ(r->get_header_value("Vary"), "Accept-Encoding");
    return gzip ? Gunzip(r->body) : r->body;
  }
  static std::string WithoutScrapeCount(const std::string& text) {
    std::string out;
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t end = text.find('\n', at);
      const std::string line = text.substr(at, end - at);
      if (!line.starts_with("gpuwatch_exporter_scrapes_total") &&
          !line.starts_with("gpuwatch_exporter_last_sample_age_seconds")) {
        out += line + "\n";
      }
      at = end == std::string::npos ? text.size() : end + 1;
    }
    return out;
  }
  std::shared_ptr<Snapshot> snapshot_;
  std::shared_ptr<Hub> hub_ = std::make_shared<Hub>();
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(MetricsOverHttp, AGzipScrapeCarriesThePlainDocumentWithAFreshLivePart) {
  hub_->Publish(snapshot_, {}, {}, {});
  const std::string plain = Scrape(false);
  const std::string first = Scrape(true);
  const std::string second = Scrape(true);
  ASSERT_NE(plain.find("gpuwatch_memory_used_bytes{gpu=\"0\""), std::string::npos);
  EXPECT_EQ(WithoutScrapeCount(first), WithoutScrapeCount(plain));
  EXPECT_NE(first.find("gpuwatch_exporter_scrapes_total{hostname=\"node1\"} 2\n"),
            std::string::npos)
      << "the live part counts this scrape";
  EXPECT_NE(second.find("gpuwatch_exporter_scrapes_total{hostname=\"node1\"} 3\n"),
            std::string::npos)
      << "and the next, over the same cached head";

  // A new publication renders a new head.
  EXPECT_EQ(first.find("gpuwatch_alert_active"), std::string::npos);
  rules::ActiveAlert alert;
  alert.rule = "memory_high";
  alert.gpu = 1;
  hub_->Publish(snapshot_, {alert}, {}, {});
  for (bool gzip : {true, false}) {
    EXPECT_NE(Scrape(gzip).find("gpuwatch_alert_active{rule=\"memory_high\",severity=\"warning\","
                                "gpu=\"1\",hostname=\"node1\"} 1\n"),
              std::string::npos)
        << (gzip ? "gzip" : "plain");
  }
}

TEST_F(MetricsOverHttp, OpenMetricsInGzipEndsOnce) {
  hub_->Publish(snapshot_, {}, {}, {});
  const std::string om = Scrape(true, {{"Accept", "application/openmetrics-text; version=1.0.0"}});
  EXPECT_TRUE(om.ends_with("# EOF\n"));
  EXPECT_EQ(om.find("# EOF"), om.size() - 6) << "one # EOF, at the end";
  EXPECT_NE(om.find("# TYPE gpuwatch_exporter_scrapes counter"), std::string::npos);
}

}  // namespace
}  // namespace gpuwatch::server
