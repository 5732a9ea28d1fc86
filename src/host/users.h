// uid -> user name through a passwd file (the host's, when a host root is
// mounted). Not thread-safe: one owner.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace gpuwatch::host {

// name:password:uid:gid:... lines; the first entry for a uid wins (as
// getpwuid). Malformed lines are skipped.
std::map<std::uint32_t, std::string> ParsePasswd(std::string_view text);

class UserTable {
 public:
  // `use_nss`: after a miss in the file, ask the C library (getpwuid_r), which
  // also knows LDAP/SSSD users. Only right when `passwd_file` is this
  // system's own /etc/passwd, not a mounted host's.
  UserTable(std::filesystem::path passwd_file, bool use_nss);

  // The user name of `uid`, or the uid as text when nobody has it. The file
  // is read on first use and again, on a miss, when its mtime has changed
  // (users added while gpuwatch runs).
  std::string Name(std::uint32_t uid);

  const std::filesystem::path& passwd_file() const { return passwd_file_; }

 private:
  void LoadIfChanged();

  std::filesystem::path passwd_file_;
  bool use_nss_;
  std::filesystem::file_time_type loaded_mtime_{};
  bool loaded_ = false;
  std::map<std::uint32_t, std::string> names_;  // from the file
  std::map<std::uint32_t, std::string> nss_;    // from getpwuid_r, and misses
};

}  // namespace gpuwatch::host
