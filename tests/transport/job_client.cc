// A minimal client of the GPUWATCH_SOCKET line protocol, as a training
// process would use it: connects to $GPUWATCH_SOCKET and sends each argument
// as one line, `sleep=MS` pausing instead. Exit 0 when everything was sent.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  const char* path = std::getenv("GPUWATCH_SOCKET");
  if (path == nullptr) {
    std::fprintf(stderr, "job_client: GPUWATCH_SOCKET is not set\n");
    return 2;
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("job_client: connect");
    return 1;
  }
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("sleep=", 0) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(arg.c_str() + 6)));
      continue;
    }
    arg += '\n';
    if (write(fd, arg.data(), arg.size()) != static_cast<ssize_t>(arg.size())) return 1;
  }
  close(fd);
  return 0;
}
