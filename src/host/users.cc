#include "host/users.h"

#include <pwd.h>

#include <charconv>
#include <system_error>
#include <vector>

#include "host/proc_files.h"

namespace gpuwatch::host {

std::map<std::uint32_t, std::string> ParsePasswd(std::string_view text) {
  std::map<std::uint32_t, std::string> names;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.empty() || line.front() == '#') continue;
    std::size_t c1 = line.find(':');
    if (c1 == 0 || c1 == std::string_view::npos) continue;
    std::size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    std::size_t c3 = line.find(':', c2 + 1);
    if (c3 == std::string_view::npos) continue;
    std::string_view uid_text = line.substr(c2 + 1, c3 - c2 - 1);
    std::uint32_t uid = 0;
    auto [end, ec] = std::from_chars(uid_text.data(), uid_text.data() + uid_text.size(), uid);
    if (ec != std::errc() || end != uid_text.data() + uid_text.size() || uid_text.empty()) {
      continue;
    }
    names.try_emplace(uid, line.substr(0, c1));
  }
  return names;
}

UserTable::UserTable(std::filesystem::path passwd_file, bool use_nss)
    : passwd_file_(std::move(passwd_file)), use_nss_(use_nss) {}

void UserTable::LoadIfChanged() {
  std::error_code ec;
  auto mtime = std::filesystem::last_write_time(passwd_file_, ec);
  if (ec) {
    loaded_ = true;  // no file: nothing to load until one appears
    return;
  }
  if (loaded_ && mtime == loaded_mtime_) return;
  Result<std::string> text = ReadWholeFile(passwd_file_);
  if (!text) return;
  names_ = ParsePasswd(*text);
  nss_.clear();
  loaded_mtime_ = mtime;
  loaded_ = true;
}

std::string UserTable::Name(std::uint32_t uid) {
  if (!loaded_) LoadIfChanged();
  if (auto it = names_.find(uid); it != names_.end()) return it->second;
  LoadIfChanged();  // a miss costs one stat() of the file
  if (auto it = names_.find(uid); it != names_.end()) return it->second;
  if (auto it = nss_.find(uid); it != nss_.end()) return it->second;
  std::string name = std::to_string(uid);
  if (use_nss_) {
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr &&
        found->pw_name != nullptr) {
      name = found->pw_name;
    }
  }
  nss_.emplace(uid, name);
  return name;
}

}  // namespace gpuwatch::host
