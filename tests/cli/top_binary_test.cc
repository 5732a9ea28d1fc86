// gpuwatch-top as a file: the libraries it loads, its packed relocations and
// the layout of its text (src/cli/CMakeLists.txt, scripts/top_layout.py). What
// it runs: oneshot_test.cc and tests/tui.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli_util.h"

namespace gpuwatch::cli {
namespace {

using testing::Needed;
using testing::ReadElf;

// gpuwatch-top draws this machine's GPUs without HTTP and TLS (cpp-httplib
// sets OpenSSL up as it loads, megabytes resident before main), and where
// yaml-cpp's archive is installed, without a shared C++ runtime.
TEST(TopBinary, LoadsNeitherHttpNorTls) {
  const std::string top = Needed(std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch-top");
  const std::string full = Needed(std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch-full");
  ASSERT_NE(top.find("libncursesw"), std::string::npos) << "readelf -d found nothing: " << top;
  std::vector<const char*> absent = {"libcpp-httplib", "libssl", "libcrypto",
                                     "libz.",          "libfmt", "libsqlite3"};
#if GPUWATCH_TOP_STATIC_RUNTIME
  absent.insert(absent.end(), {"libyaml-cpp", "libstdc++", "libgcc_s"});
#endif
  for (const char* lib : absent) {
    EXPECT_NE(full.find(lib), std::string::npos) << lib << " not even in\n" << full;
    EXPECT_EQ(top.find(lib), std::string::npos) << lib << " in\n" << top;
  }
}

#if GPUWATCH_TOP_RELR
// src/cli/relr_mark.cc: gpuwatch-top's relative relocations are packed
// (DT_RELR), and it needs the glibc version under which glibc applies them
// (without it, it would not start; it runs in every tmux test).
TEST(TopBinary, PacksItsRelativeRelocations) {
  const std::string top = std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch-top";
  const std::string full = std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch-full";
  EXPECT_NE(ReadElf("-d", top, "(RELR)"), "");
  EXPECT_NE(ReadElf("-V", top, "GLIBC_ABI_DT_RELR"), "");
  // One 24-byte entry each where they are not packed, as in gpuwatch-full.
  const auto relocations = [](const std::string& binary) {
    const std::string lines = ReadElf("-rW", binary, "R_X86_64_RELATIVE");
    return std::count(lines.begin(), lines.end(), '\n');
  };
  EXPECT_GT(relocations(full), 1000);
  EXPECT_LT(relocations(top), 100);
}
#endif

#if GPUWATCH_TOP_LAYOUT
// scripts/top_layout.py: the functions top runs (src/cli/top_layout.txt) come
// first in gpuwatch-top's text, so that it touches few pages of its binary.
// Fails when the link did not lay them out, or when the list names functions
// gpuwatch-top no longer has (rewrite it with the script).
TEST(TopBinary, LaysOutTheCodeTopRunsFirst) {
  std::set<std::string> listed;
  std::ifstream layout(std::string(GPUWATCH_SOURCE_DIR) + "/src/cli/top_layout.txt");
  for (std::string line; std::getline(layout, line);) {
    if (!line.empty() && line[0] != '#') listed.insert(line);
  }
  ASSERT_GT(listed.size(), 300u) << "src/cli/top_layout.txt is missing or nearly empty";
  // One pass over `nm -S -t d`: "ADDRESS SIZE TYPE NAME" for a symbol with a
  // size, "ADDRESS TYPE NAME" for one without, "U NAME" for one undefined.
  FILE* p =
      popen(("nm -S -t d " + std::string(GPUWATCH_BINARY_DIR) + "/gpuwatch-top").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::map<unsigned long long, unsigned long long> functions, laid_out;  // address: size
  std::set<std::string> defined;
  char name[4096];
  unsigned long long address = 0, size = 0;
  char type = 0;
  char buf[4200];
  while (fgets(buf, sizeof buf, p) != nullptr) {
    if (std::sscanf(buf, "%llu %llu %c %4095s", &address, &size, &type, name) == 4) {
      defined.insert(name);
      if (std::string_view("tTwW").find(type) == std::string_view::npos) continue;
      functions[address] = size;
      if (listed.count(name) != 0) laid_out[address] = size;  // aliases share an address
    } else if (std::sscanf(buf, "%llu %c %4095s", &address, &type, name) == 3) {
      defined.insert(name);
    }
  }
  pclose(p);
  ASSERT_FALSE(functions.empty()) << "nm found no function in gpuwatch-top";
  std::size_t found = 0;
  for (const auto& [addr, n] : laid_out) found += n > 0 ? 1 : 0;
  ASSERT_GT(found, listed.size() / 2);
  unsigned long long bytes = 0, end = 0;
  for (const auto& [addr, n] : laid_out) {
    bytes += n;
    end = std::max(end, addr + n);
  }
  // Every listed function lies in one block at the start of the text, little
  // larger than the functions themselves (a section that holds several, the
  // alignment between them); unordered, they would span the whole text.
  const unsigned long long span = end - functions.begin()->first;
  EXPECT_LE(span, bytes + bytes / 4 + 64 * 1024)
      << "the functions of top_layout.txt span " << span << " bytes of gpuwatch-top's text for "
      << bytes << " bytes of code: not laid out together";
  // Names gone since the list was written (renamed, inlined): a few is normal.
  std::size_t gone = 0;
  for (const auto& n : listed) gone += defined.count(n) == 0 ? 1 : 0;
  EXPECT_LE(gone * 10, listed.size())
      << gone << " of the " << listed.size()
      << " functions in src/cli/top_layout.txt are gone from gpuwatch-top: rewrite it with "
         "scripts/top_layout.py";
}
#endif

}  // namespace
}  // namespace gpuwatch::cli
