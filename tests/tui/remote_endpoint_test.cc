// `top --remote`'s addresses: every good form of one address and of a list,
// and each bad one named with what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <string_view>

#include "tui/remote_api.h"

namespace gpuwatch::tui {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string EndpointError(std::string_view address) {
  auto e = ParseEndpoint(address);
  return e ? "" : e.error().message();
}

TEST(ParseEndpoint, ReadsEveryForm) {
  struct Case {
    std::string address, scheme, host;
    int port;
  };
  for (const Case& c :
       std::vector<Case>{{"host1", "http", "host1", 9835},
                         {"host1:9000", "http", "host1", 9000},
                         {"http://host1:9000", "http", "host1", 9000},
                         {"https://gpu-3.example.org", "https", "gpu-3.example.org", 9835},
                         {"HTTPS://h_1:443/", "https", "h_1", 443},
                         {"10.0.0.7:9835", "http", "10.0.0.7", 9835},
                         {"[::1]:9836", "http", "::1", 9836},
                         {"[::1]", "http", "::1", 9835},
                         {"https://[fe80::1ab]:1", "https", "fe80::1ab", 1},
                         {" host1:9835 ", "http", "host1", 9835}}) {
    auto e = ParseEndpoint(c.address);
    ASSERT_TRUE(e) << c.address << ": " << e.error().message();
    EXPECT_EQ(e->scheme, c.scheme) << c.address;
    EXPECT_EQ(e->host, c.host) << c.address;
    EXPECT_EQ(e->port, c.port) << c.address;
    EXPECT_EQ(e->label, std::string(c.address == " host1:9835 " ? "host1:9835" : c.address));
    EXPECT_TRUE(e->user.empty() && e->ca_file.empty() && !e->insecure);
    EXPECT_EQ(e->timeout, 2000ms);
  }
}

TEST(ParseEndpoint, NamesTheAddressAndWhatIsWrong) {
  EXPECT_EQ(EndpointError(""), "remote address is empty");
  const std::pair<std::string, std::string> cases[] = {
      {"ftp://host1", "scheme \"ftp\" is not http or https"},
      {"host1:0", "port \"0\" is not a number from 1 to 65535"},
      {"host1:65536", "port \"65536\" is not a number from 1 to 65535"},
      {"host1:http", "port \"http\" is not a number from 1 to 65535"},
      {"host1:", "no port after \":\""},
      {"::1:9835", "an IPv6 address needs brackets: [::1]:9835"},
      {"http://host1:9835/metrics", "has a path (\"/metrics\")"},
      {"host1/?x=1", "has a path (\"/?x=1\")"},
      {"alice:pw@host1", "credentials do not go in the address"},
      {"[::1:9835", "\"[\" without \"]\""},
      {"[host1]:9835", "\"host1\" is not an IPv6 address"},
      {"[::1]9835", "text after \"]\" that is not \":port\""},
      {"ho$t", "\"ho$t\" is not a host name or address"},
      {"http://", "no host"},
      {":9835", "no host"},
  };
  for (const auto& [address, why] : cases) {
    const std::string error = EndpointError(address);
    EXPECT_THAT(error, HasSubstr("remote address \"" + address + "\": ")) << address;
    EXPECT_THAT(error, HasSubstr(why)) << address;
  }
}

TEST(ParseEndpoints, ReadsAListAndNamesEmptyEntriesAndDuplicates) {
  auto two = ParseEndpoints("h1:9835, https://h2");
  ASSERT_TRUE(two) << two.error().message();
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].label, "h1:9835");
  EXPECT_EQ((*two)[1].label, "https://h2");
  EXPECT_EQ((*two)[1].port, 9835);
  EXPECT_TRUE(ParseEndpoints("h1,https://h1:9835")) << "another scheme: another daemon";

  auto message = [](std::string_view list) {
    auto r = ParseEndpoints(list);
    return r ? "" : r.error().message();
  };
  EXPECT_EQ(message(""), "remote list is empty");
  EXPECT_EQ(message("h1,,h2"), "remote list \"h1,,h2\": entry 2 is empty");
  EXPECT_EQ(message("h1,"), "remote list \"h1,\": entry 2 is empty");
  EXPECT_EQ(message(",h1"), "remote list \",h1\": entry 1 is empty");
  EXPECT_EQ(message("h1:9835,http://h1"),
            "remote list \"h1:9835,http://h1\": \"h1:9835\" and \"http://h1\" are the same daemon");
  EXPECT_EQ(message("GPU1,gpu1:9835"),
            "remote list \"GPU1,gpu1:9835\": \"GPU1\" and \"gpu1:9835\" are the same daemon");
  EXPECT_THAT(message("h1,h2:99999"), HasSubstr("remote address \"h2:99999\": port"));
}

}  // namespace
}  // namespace gpuwatch::tui
