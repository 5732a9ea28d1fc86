// libFuzzer target: the lease file, which every local user can write. A table
// that parses must serialize to text that parses to the same table.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "host/leases.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuwatch::host;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto table = ParseLeaseTable(text);
  if (!table) return 0;
  const std::string once = LeaseTableToJson(*table);
  auto again = ParseLeaseTable(once);
  if (!again || LeaseTableToJson(*again) != once) std::abort();
  (void)table->Position(1);
  (void)table->Remove(1);
  return 0;
}
