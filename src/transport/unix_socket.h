// Unix stream sockets at a path: listening, connecting, and asking who is at
// the other end. Shared by the job socket and the answer socket.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "gpuwatch/status.h"

namespace gpuwatch {

// Listens on `path` (non-blocking, close-on-exec, backlog 128): the fd, or
// an error naming the path (InvalidArgument when it is too long for a
// socket address).
Result<int> ListenUnix(const std::string& path);

// True when something accepts connections on the socket at `path`.
bool UnixSocketAnswers(const std::string& path);

// Connects to the socket at `path` (blocking, close-on-exec): the fd, or an
// error naming the path.
Result<int> ConnectUnix(const std::string& path);

// The uid of the process at the other end of a connected Unix socket
// (SO_PEERCRED), nullopt when the kernel does not say.
std::optional<uid_t> PeerUid(int fd);

// Makes way for a listening socket at `path`: ok when nothing is there or a
// socket nobody answers on was removed (left by a process that died);
// Unavailable when another process serves it; InvalidArgument when a file
// that is not a socket is in the way. `what` names the path's role in the
// messages ("--socket").
Status ClearStaleSocket(const std::string& path, const std::string& what);

// A pipe that wakes a thread blocked in poll() on fd() (a socket's server
// stopping): Wake() from any thread. fd() is -1 when no pipe could be made;
// such a poll needs a timeout.
class WakePipe {
 public:
  WakePipe();
  WakePipe(const WakePipe&) = delete;
  WakePipe& operator=(const WakePipe&) = delete;
  ~WakePipe();
  void Wake();
  int fd() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
};

}  // namespace gpuwatch
