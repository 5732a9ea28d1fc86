#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "alerts/event_json.h"
#include "alerts/transport.h"

extern char** environ;  // NOLINT: POSIX

namespace gpuwatch::alerts {
namespace {

// Runs a program (no shell) with the event in GPUWATCH_* environment
// variables and stdin from /dev/null; kills it after the timeout.
class CommandTransport final : public Transport {
 public:
  explicit CommandTransport(CommandAction action) : action_(std::move(action)) {}

  Status Deliver(const Event& event, std::string_view json, std::stop_token) override {
    std::vector<std::string> env_text;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "GPUWATCH_", 9) != 0) env_text.emplace_back(*e);
    }
    env_text.push_back(fmt::format("GPUWATCH_EVENT={}", json));
    env_text.push_back(fmt::format("GPUWATCH_KIND={}", EventKindName(event.kind)));
    env_text.push_back(fmt::format("GPUWATCH_RULE={}", event.source));
    env_text.push_back(fmt::format("GPUWATCH_SEVERITY={}", SeverityName(event.severity)));
    env_text.push_back(fmt::format("GPUWATCH_MESSAGE={}", event.message));
    env_text.push_back(
        fmt::format("GPUWATCH_GPU={}", event.gpu ? std::to_string(*event.gpu) : std::string()));
    env_text.push_back(fmt::format(
        "GPUWATCH_PID={}", event.process ? std::to_string(event.process->pid) : std::string()));
    env_text.push_back(
        fmt::format("GPUWATCH_VALUE={}", event.value ? fmt::format("{}", *event.value) : ""));
    std::vector<char*> envp;
    for (std::string& s : env_text) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = action_.argv;
    std::vector<char*> argv;
    for (std::string& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, argv[0], &files, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&files);
    if (rc != 0) {
      return Status::Unavailable(
          fmt::format("cannot start {}: {}", action_.argv.front(), std::strerror(rc)));
    }
    return Wait(pid);
  }

  std::string Describe() const override { return "command " + action_.argv.front(); }

 private:
  Status Wait(pid_t pid) const {
    auto deadline = std::chrono::steady_clock::now() + action_.timeout;
    int status = 0;
    for (;;) {
      pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (done < 0 && errno != EINTR) {
        return Status::Internal(fmt::format("waitpid: {}", std::strerror(errno)));
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return Status::Unavailable(
            fmt::format("{} killed after {} ms", action_.argv.front(), action_.timeout.count()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
    if (WIFEXITED(status)) {
      return Status::Unavailable(
          fmt::format("{} exited with status {}", action_.argv.front(), WEXITSTATUS(status)));
    }
    return Status::Unavailable(
        fmt::format("{} ended by signal {}", action_.argv.front(), WTERMSIG(status)));
  }

  CommandAction action_;
};

}  // namespace

std::unique_ptr<Transport> MakeCommandTransport(const CommandAction& action) {
  return std::make_unique<CommandTransport>(action);
}

}  // namespace gpuwatch::alerts
