// The daemon's answer socket: `gpuwatch`, `gpuwatch query` and `gpuwatch
// select` read a running daemon's latest sample here instead of opening the
// driver themselves (docs/serve.md, "Warm answers"). The protocol is one
// way: the server writes its answer to each connection and closes it;
// nothing the client sends is read, so there is nothing to parse.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "gpuwatch/status.h"
#include "transport/unix_socket.h"

namespace gpuwatch {

class AnswerSocket {
 public:
  // The text one connection gets; called on the socket's thread, once per
  // connection.
  using Answer = std::function<std::shared_ptr<const std::string>()>;
  // How long one client may take to read its answer before it is cut off.
  static constexpr std::chrono::milliseconds kSendTimeout{1000};

  // Listens at `path` with file mode `mode` (0666: any local user may ask,
  // and the client decides whom it trusts, see FetchAnswer; 0600: this user
  // only); a socket left by a process that died is replaced, a live one or
  // another file is an error naming the path.
  static Result<std::unique_ptr<AnswerSocket>> Create(const std::string& path, Answer answer,
                                                      mode_t mode = 0666);
  AnswerSocket(const AnswerSocket&) = delete;
  AnswerSocket& operator=(const AnswerSocket&) = delete;
  // Stops serving and removes the socket.
  ~AnswerSocket();

  const std::string& path() const { return path_; }

 private:
  AnswerSocket(int listen_fd, std::string path, Answer answer);
  // One connection at a time: accept, write the answer, close.
  void Serve(std::stop_token stop);

  const int listen_fd_;
  const std::string path_;
  const Answer answer_;
  WakePipe wake_;        // ends the poll on destruction
  std::jthread server_;  // last: stops first
};

// Reads the whole answer at `path`, waiting at most `timeout` in all. Only a
// server the caller can trust is believed (TrustedServer, by SO_PEERCRED):
// the runtime directory is shared by every user, so a socket there could be
// anyone's. Unavailable saying why otherwise (no socket, nobody answers,
// another user's, too slow, over `max_bytes`).
Result<std::string> FetchAnswer(const std::string& path, std::chrono::milliseconds timeout,
                                std::size_t max_bytes = std::size_t{64} << 20);

// Uids below this are system accounts, which only the administrator creates
// (Debian's and Fedora's SYS_UID_MAX is 999): the packaged service's user
// `gpuwatch` is one (deploy/systemd).
inline constexpr uid_t kFirstRegularUid = 1000;

// Whether a server running as `server` may answer a client running as
// `client`: a system account's (root, the service user) or the client's own.
constexpr bool TrustedServer(uid_t server, uid_t client) {
  return server < kFirstRegularUid || server == client;
}

}  // namespace gpuwatch
