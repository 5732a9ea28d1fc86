// libFuzzer target: the /proc and cgroup parsers, which read files that can
// change or be cut short under them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "host/cgroup.h"
#include "host/proc_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuwatch::host;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseStat(text);
  (void)ParseStatus(text);
  (void)ParseStatmResidentPages(text);
  (void)CommandLine(text, "comm");
  (void)ParseBootTime(text);
  (void)ParseUptime(text);
  (void)ParseCgroup(text);
  return 0;
}
