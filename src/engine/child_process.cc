#include "engine/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace gpuwatch::engine {
namespace {

// Moves the terminal's foreground to `pgid` (when we own it), ignoring the
// SIGTTOU a background caller would get.
bool SetForeground(pid_t pgid) {
  if (isatty(STDIN_FILENO) == 0 || tcgetpgrp(STDIN_FILENO) != getpgrp()) return false;
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGTTOU, &ignore, &old);
  const bool ok = tcsetpgrp(STDIN_FILENO, pgid) == 0;
  sigaction(SIGTTOU, &old, nullptr);
  return ok;
}

}  // namespace

Result<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                         const std::map<std::string, std::string>& env,
                                         const SpawnOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("no command to run: give it after --");
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : env) merged[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : merged) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTTOU, SIGTTIN})
    sigaddset(&defaults, s);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setpgroup(&attr, 0);  // its own process group
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  if (!options.output_path.empty()) {
    posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, options.output_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  }
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &files, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status::NotFound(fmt::format("cannot run {}: {}", argv[0], std::strerror(rc)));
  }
  return ChildProcess(pid, options.foreground && SetForeground(pid));
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      took_terminal_(std::exchange(other.took_terminal_, false)),
      status_(other.status_) {}

ChildProcess::~ChildProcess() {
  GiveTerminalBack();
  if (pid_ > 0 && !status_) {
    // Leaving early: do not leave the job running unwatched.
    Signal(SIGTERM);
    int st = 0;
    waitpid(pid_, &st, 0);
  }
}

void ChildProcess::GiveTerminalBack() {
  if (took_terminal_) {
    SetForeground(getpgrp());
    took_terminal_ = false;
  }
}

void ChildProcess::Signal(int signal) const {
  if (pid_ > 0 && !status_) kill(-pid_, signal);
}

std::optional<int> ChildProcess::Poll() {
  if (status_ || pid_ <= 0) return status_;
  int st = 0;
  const pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r != pid_) return std::nullopt;
  if (WIFEXITED(st))
    status_ = WEXITSTATUS(st);
  else if (WIFSIGNALED(st))
    status_ = 128 + WTERMSIG(st);
  else
    status_ = 1;
  GiveTerminalBack();
  return status_;
}

}  // namespace gpuwatch::engine
