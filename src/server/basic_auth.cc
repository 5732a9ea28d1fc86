#include "server/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/mutex.h"

namespace gpuwatch::server {
namespace {

constexpr std::string_view kBcryptAlphabet =
    "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr std::size_t kBcryptLength = 60;  // "$2b$10$" + 22 of salt + 31 of hash

}  // namespace

bool CheckPassword(const std::string& password, const std::string& hash) {
  crypt_data data{};
  const char* out = crypt_r(password.c_str(), hash.c_str(), &data);
  if (out == nullptr || out[0] == '*') return false;
  const std::size_t n = std::strlen(out);
  if (n != hash.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(out[i] ^ hash[i]);
  return diff == 0;
}

bool ParseBasicAuth(const std::string& header, std::string& user, std::string& password) {
  static const std::string kPrefix = "Basic ";
  if (header.size() <= kPrefix.size() || header.compare(0, kPrefix.size(), kPrefix) != 0)
    return false;
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string decoded;
  unsigned buffer = 0;
  int bits = 0;
  for (std::size_t i = kPrefix.size(); i < header.size(); ++i) {
    const char ch = header[i];
    if (ch == '=') break;
    const auto v = kAlphabet.find(ch);
    if (v == std::string::npos) return false;
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      decoded += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  const auto colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  user = decoded.substr(0, colon);
  password = decoded.substr(colon + 1);
  return true;
}

int BcryptCost(const std::string& hash) {
  if (hash.size() != kBcryptLength || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' ||
      hash[6] != '$') {
    return -1;
  }
  if (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') return -1;
  if (hash[4] < '0' || hash[4] > '9' || hash[5] < '0' || hash[5] > '9') return -1;
  for (std::size_t i = 7; i < hash.size(); ++i) {
    if (kBcryptAlphabet.find(hash[i]) == std::string_view::npos) return -1;
  }
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  return cost >= 4 && cost <= 31 ? cost : -1;
}

Authenticator::Authenticator(const AuthOptions& options) : options_(options) {
  options_.max_concurrent = std::max(1, options_.max_concurrent);
}

void Authenticator::SetUsers(std::map<std::string, std::string> users) {
  // The dummy has the users' highest cost, so an unknown name costs what a known one does.
  int cost = 4;
  for (const auto& [name, hash] : users) cost = std::max(cost, BcryptCost(hash));
  std::string dummy;
  if (!users.empty()) {
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    crypt_data data{};
    const char* out = nullptr;
    if (crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt, sizeof salt) !=
        nullptr) {
      out = crypt_r("gpuwatch: no such user", salt, &data);
    }
    if (out != nullptr && out[0] != '*') dummy = out;
  }
  MutexLock lock(mu_);
  users_ = std::move(users);
  dummy_hash_ = std::move(dummy);
  passed_.clear();
}

bool Authenticator::enabled() const {
  MutexLock lock(mu_);
  return !users_.empty();
}

std::optional<bool> Authenticator::Bcrypt(const std::string& password, const std::string& hash) {
  {
    MutexLock lock(slots_mu_);
    if (!slots_cv_.WaitFor(lock, options_.max_wait, [&]() REQUIRES(slots_mu_) {
          return running_ < options_.max_concurrent;
        })) {
      return std::nullopt;
    }
    ++running_;
    int seen = stats_.max_running.load();
    while (running_ > seen && !stats_.max_running.compare_exchange_weak(seen, running_)) {
    }
  }
  stats_.bcrypt_checks++;
  const bool ok = CheckPassword(password, hash);
  {
    MutexLock lock(slots_mu_);
    --running_;
  }
  slots_cv_.NotifyOne();
  return ok;
}

Authenticator::Verdict Authenticator::Check(const std::string& authorization) {
  std::string user, password;
  const bool parsed = ParseBasicAuth(authorization, user, password);
  std::string hash;
  bool known = false;
  Digest digest{};
  {
    MutexLock lock(mu_);
    if (users_.empty()) return Verdict::kAllowed;
    if (auto it = parsed ? users_.find(user) : users_.end(); it != users_.end()) {
      hash = it->second;
      known = true;
      const std::string key = user + '\0' + password + '\0' + hash;
      SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), digest.data());
      if (passed_.contains(digest)) return Verdict::kAllowed;
    } else {
      hash = dummy_hash_;
    }
  }
  // Known or not (or no credentials at all), a refusal costs one bcrypt check.
  const auto ok = Bcrypt(password, hash);
  if (!ok) {
    stats_.busy++;
    return Verdict::kBusy;
  }
  if (!*ok || !known) return Verdict::kDenied;
  MutexLock lock(mu_);
  if (passed_.size() >= options_.cache_size) passed_.erase(passed_.begin());
  passed_.insert(digest);
  return Verdict::kAllowed;
}

}  // namespace gpuwatch::server
