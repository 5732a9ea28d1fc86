// Reading a small text file a user names (rule files, --config, scenarios):
// only a regular file, at most `max_bytes`. The file is checked with stat
// before it is opened, so a directory, a FIFO or a device such as /dev/zero
// never blocks the reader or fills its memory; errors name the path and say
// what it is instead.
#pragma once

#include <cstddef>
#include <string>

#include "gpuwatch/status.h"

namespace gpuwatch {

// What rule, config and scenario files may hold; the largest shipped is 6 KB.
inline constexpr std::size_t kMaxTextFileBytes = std::size_t{1} << 20;

// Ok when `path` is a regular file of at most `max_bytes`. kNotFound when it
// does not exist, kInvalidArgument when it is something else or too large.
Status CheckTextFile(const std::string& path, std::size_t max_bytes = kMaxTextFileBytes);

// Ok when nothing is at `path` (it will be made) or a regular file is;
// kInvalidArgument naming what is there otherwise (a FIFO, a device...): for
// files opened for writing and reading back, such as a history database.
Status CheckRegularFileOrAbsent(const std::string& path);

// CheckTextFile, then the whole file; kNotFound also when it cannot be read.
Result<std::string> ReadTextFile(const std::string& path,
                                 std::size_t max_bytes = kMaxTextFileBytes);

}  // namespace gpuwatch
