// --web-config: the exporter-toolkit file format and its errors, bcrypt
// passwords, basic auth over real HTTP, and TLS (server certificate, minimum
// version, required client certificates) with certificates made by the test
// with the openssl command line.
#include "server/web_config.h"

#include <crypt.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../test_dir.h"
#include "server/basic_auth.h"
#include "server/http_server.h"

namespace gpuwatch::server {
namespace {

namespace fs = std::filesystem;

std::string Bcrypt(const std::string& password) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn("$2b$", 4, nullptr, 0, salt, sizeof salt), nullptr);
  crypt_data data{};
  return crypt_r(password.c_str(), salt, &data);
}

class WebConfigTest : public testing::TestDir {
 protected:
  // A CA, a server certificate for 127.0.0.1 signed by it, and a client certificate.
  void MakeCertificates() {
    const std::string d = dir_.string();
    const std::string cmd =
        "cd " + d + " && " +
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 -subj "
        "/CN=test-ca 2>/dev/null && "
        "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "
        "/CN=127.0.0.1 2>/dev/null && "
        "printf 'subjectAltName=IP:127.0.0.1' > san.ext && "
        "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt "
        "-days 1 -extfile san.ext 2>/dev/null && "
        "openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=client "
        "2>/dev/null && "
        "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt "
        "-days 1 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  std::unique_ptr<HttpServer> Serve(const WebConfig& web) {
    HttpOptions o;
    o.port = 0;
    o.web = web;
    o.history = [](const HistoryQuery&) -> Result<nlohmann::json> { return nlohmann::json{}; };
    auto s = HttpServer::Start(o, hub_);
    EXPECT_TRUE(s) << (s ? "" : s.error().message());
    return s ? std::move(*s) : nullptr;
  }
  std::shared_ptr<Hub> hub_ = std::make_shared<Hub>();
};

TEST_F(WebConfigTest, ReadsTheExporterToolkitFormat) {
  const std::string hash = Bcrypt("secret");
  const std::string path = Write("web.yml",
                                 "tls_server_config:\n  cert_file: s.crt\n  key_file: /abs/s.key\n"
                                 "  client_auth_type: RequireAndVerifyClientCert\n"
                                 "  client_ca_file: ca.crt\n  min_version: TLS13\n"
                                 "basic_auth_users:\n  alice: " +
                                     hash + "\n");
  auto c = LoadWebConfig(path);
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->cert_file, (dir_ / "s.crt").string()) << "relative to the file";
  EXPECT_EQ(c->key_file, "/abs/s.key");
  EXPECT_TRUE(c->require_client_cert);
  EXPECT_EQ(c->min_version, 0x0304);
  EXPECT_EQ(c->users.at("alice"), hash);
  EXPECT_TRUE(c->tls());
}

TEST_F(WebConfigTest, AFileThatConfiguresNothingIsAnError) {
  // Not silent plain HTTP: whoever gave --web-config wanted TLS or passwords.
  for (const std::string text : {"", "# nothing\n", "http_server_config:\n  http2: true\n"}) {
    auto c = LoadWebConfig(Write("web.yml", text));
    ASSERT_FALSE(c) << text;
    EXPECT_NE(c.error().message().find("web.yml"), std::string::npos) << c.error().message();
  }
  EXPECT_NE(LoadWebConfig(Write("web.yml", "")).error().message().find("is empty"),
            std::string::npos);
}

TEST_F(WebConfigTest, HashesMustBeWellFormedBcryptOfASaneCost) {
  const std::string good = Bcrypt("x");
  std::string cost31 = good;
  cost31.replace(4, 2, "31");
  std::string cost13 = good;
  cost13.replace(4, 2, "13");
  std::string bad_char = good;
  bad_char.back() = '!';
  const std::pair<std::string, std::string> cases[] = {
      {"$2y$10$abc", "not a bcrypt hash"},    {good.substr(0, 59), "not a bcrypt hash"},
      {bad_char, "not a bcrypt hash"},        {"$2x$10$" + good.substr(7), "not a bcrypt hash"},
      {cost31, "bcrypt cost 31 is above 12"}, {cost13, "bcrypt cost 13 is above 12"},
  };
  for (const auto& [hash, why] : cases) {
    auto c = LoadWebConfig(Write("web.yml", "basic_auth_users:\n  bob: '" + hash + "'\n"));
    ASSERT_FALSE(c) << hash;
    EXPECT_NE(c.error().message().find("web.yml:2:8: basic_auth_users: bob: " + why),
              std::string::npos)
        << c.error().message();
  }
  EXPECT_EQ(BcryptCost(good), 4);
  auto ok = LoadWebConfig(Write("web.yml", "basic_auth_users:\n  bob: '" + good + "'\n"));
  ASSERT_TRUE(ok) << ok.error().message();
}

TEST_F(WebConfigTest, BadFilesNameTheProblemAndWhere) {
  const std::pair<std::string, std::string> cases[] = {
      {"tls_server_config:\n  cert_file: a\n  bogus: 1\n",
       "web.yml:3:3: tls_server_config: unknown key \"bogus\""},
      {"basic_auth_users:\n  bob: plaintext\n",
       "web.yml:2:8: basic_auth_users: bob: not a bcrypt hash"},
      {"tls_server_config:\n  cert_file: a\n", "needs both cert_file and key_file"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS9\n",
       "web.yml:4:16: min_version \"TLS9\""},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: "
       "RequireAndVerifyClientCert\n",
       "needs client_ca_file"},
      {"tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: "
       "VerifyClientCertIfGiven\n",
       "supports NoClientCert and RequireAndVerifyClientCert"},
      {"users: x\n", "web.yml:1:1: unknown key \"users\""},
      {"a: [1\n", "web.yml:"},
  };
  for (const auto& [text, why] : cases) {
    auto c = LoadWebConfig(Write("web.yml", text));
    ASSERT_FALSE(c) << text;
    EXPECT_NE(c.error().message().find(why), std::string::npos) << c.error().message();
  }
  EXPECT_NE(LoadWebConfig("/nonexistent/web.yml")
                .error()
                .message()
                .find("cannot read /nonexistent/web.yml"),
            std::string::npos);
}

TEST(Passwords, BcryptAndBasicAuthHeader) {
  const std::string hash = Bcrypt("s3cret");
  EXPECT_TRUE(CheckPassword("s3cret", hash));
  EXPECT_FALSE(CheckPassword("s3cret ", hash));
  EXPECT_FALSE(CheckPassword("", hash));
  EXPECT_FALSE(CheckPassword("s3cret", "$2b$04$invalid"));
  std::string user, password;
  ASSERT_TRUE(ParseBasicAuth("Basic YWxpY2U6czNjcjp4", user, password));  // alice:s3cr:x
  EXPECT_EQ(user, "alice");
  EXPECT_EQ(password, "s3cr:x");
  EXPECT_FALSE(ParseBasicAuth("Bearer abc", user, password));
  EXPECT_FALSE(ParseBasicAuth("Basic !!!", user, password));
  EXPECT_FALSE(ParseBasicAuth("Basic YWxpY2U=", user, password)) << "no colon";
}

TEST_F(WebConfigTest, BasicAuthGuardsEverythingButTheProbes) {
  WebConfig web;
  web.users["alice"] = Bcrypt("s3cret");
  auto server = Serve(web);
  ASSERT_TRUE(server);
  httplib::Client c("127.0.0.1", server->port());
  auto none = c.Get("/metrics");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_NE(none->get_header_value("WWW-Authenticate").find("Basic realm=\"gpuwatch\""),
            std::string::npos);
  EXPECT_EQ(c.Get("/api/v1/snapshot")->status, 401);
  EXPECT_EQ(c.Get("/")->status, 401);
  EXPECT_EQ(c.Get("/healthz")->status, 200) << "probes stay open";
  c.set_basic_auth("alice", "wrong");
  EXPECT_EQ(c.Get("/metrics")->status, 401);
  c.set_basic_auth("mallory", "s3cret");
  EXPECT_EQ(c.Get("/metrics")->status, 401);
  c.set_basic_auth("alice", "s3cret");
  EXPECT_EQ(c.Get("/metrics")->status, 200);
  server->SetUsers({{"bob", Bcrypt("other")}});
  EXPECT_EQ(c.Get("/metrics")->status, 401) << "new users take effect at once";
}

TEST_F(WebConfigTest, TlsWithAndWithoutClientCertificates) {
  MakeCertificates();
  WebConfig web;
  web.cert_file = (dir_ / "server.crt").string();
  web.key_file = (dir_ / "server.key").string();
  auto server = Serve(web);
  ASSERT_TRUE(server);
  EXPECT_TRUE(server->tls());
  httplib::SSLClient tls("127.0.0.1", server->port());
  tls.set_ca_cert_path((dir_ / "ca.crt").c_str());
  tls.enable_server_certificate_verification(true);
  auto ok = tls.Get("/healthz");
  ASSERT_TRUE(ok) << httplib::to_string(ok.error());
  EXPECT_EQ(ok->status, 200);
  httplib::Client plain("127.0.0.1", server->port());
  plain.set_read_timeout(3, 0);
  auto refused = plain.Get("/healthz");
  EXPECT_TRUE(!refused || refused->status != 200) << "plain HTTP is not served on a TLS port";

  web.client_ca_file = (dir_ / "ca.crt").string();
  web.require_client_cert = true;
  auto mutual = Serve(web);
  ASSERT_TRUE(mutual);
  httplib::SSLClient anonymous("127.0.0.1", mutual->port());
  anonymous.set_ca_cert_path((dir_ / "ca.crt").c_str());
  EXPECT_FALSE(anonymous.Get("/healthz")) << "no client certificate: no connection";
  httplib::SSLClient known("127.0.0.1", mutual->port(), (dir_ / "client.crt").string(),
                           (dir_ / "client.key").string());
  known.set_ca_cert_path((dir_ / "ca.crt").c_str());
  auto with_cert = known.Get("/healthz");
  ASSERT_TRUE(with_cert) << httplib::to_string(with_cert.error());
  EXPECT_EQ(with_cert->status, 200);
}

TEST_F(WebConfigTest, BadCertificatesFailAtStartNamingTheFile) {
  WebConfig web;
  web.cert_file = Write("bad.crt", "not a certificate");
  web.key_file = Write("bad.key", "not a key");
  HttpOptions o;
  o.port = 0;
  o.web = web;
  auto s = HttpServer::Start(o, hub_);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message().find("cannot load cert_file " + web.cert_file), std::string::npos)
      << s.error().message();
}

}  // namespace
}  // namespace gpuwatch::server
