// Basic auth for `gpuwatch serve` (the web config's bcrypt users), built to
// survive hostile clients:
//  - every refusal costs one bcrypt check, whether the user exists or not
//    (an unknown user is checked against a dummy hash of the users' highest
//    cost), so user names cannot be told apart by timing;
//  - at most `max_concurrent` bcrypt checks run at once; a request that
//    waits longer than `max_wait` for one is refused as busy (503), so a
//    wrong-password flood takes a bounded share of the CPU;
//  - credentials that passed are remembered (a SHA-256 digest of user,
//    password and hash; at most `cache_size`), so authorised scrapes cost no
//    bcrypt at all and are not slowed by a flood.
// Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/mutex.h"

namespace gpuwatch::server {

// `password` against a bcrypt hash ($2a$, $2b$, $2y$), in constant time for
// a given hash.
bool CheckPassword(const std::string& password, const std::string& hash);

// The user and password of an "Authorization: Basic ..." header.
bool ParseBasicAuth(const std::string& header, std::string& user, std::string& password);

// The cost of a well-formed bcrypt hash ("$2b$10$" + 53 characters of
// bcrypt's base64), or -1 when it is not one.
int BcryptCost(const std::string& hash);

struct AuthOptions {
  int max_concurrent = 2;
  std::chrono::milliseconds max_wait{2000};
  std::size_t cache_size = 64;
};

struct AuthStats {
  std::atomic<std::uint64_t> bcrypt_checks{0};  // bcrypt evaluations done for requests
  std::atomic<std::uint64_t> busy{0};           // refused: no bcrypt slot within max_wait
  std::atomic<int> max_running{0};              // the most bcrypt checks seen at once
};

class Authenticator {
 public:
  enum class Verdict { kAllowed, kDenied, kBusy };

  explicit Authenticator(const AuthOptions& options = {});

  // Replaces the users (name -> bcrypt hash); forgets remembered credentials.
  void SetUsers(std::map<std::string, std::string> users);
  bool enabled() const;
  // The request's Authorization header value.
  Verdict Check(const std::string& authorization);
  const AuthStats& stats() const { return stats_; }

 private:
  using Digest = std::array<unsigned char, 32>;
  // nullopt: no bcrypt slot within max_wait.
  std::optional<bool> Bcrypt(const std::string& password, const std::string& hash);

  AuthOptions options_;
  mutable Mutex mu_;
  std::map<std::string, std::string> users_ GUARDED_BY(mu_);
  std::string dummy_hash_ GUARDED_BY(mu_);
  std::set<Digest> passed_ GUARDED_BY(mu_);
  Mutex slots_mu_;
  CondVar slots_cv_;
  int running_ GUARDED_BY(slots_mu_) = 0;
  AuthStats stats_;
};

}  // namespace gpuwatch::server
