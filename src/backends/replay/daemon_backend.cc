#include "backends/replay/daemon_backend.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/json_members.h"
#include "transport/answer_socket.h"

namespace gpuwatch::replay {
namespace {

using nlohmann::json;

struct Fetched {
  BackendInfo info;
  std::unique_ptr<ReplayBackend> answer;
};

// Asks the daemon and checks that its answer stands for the caller's GPUs now.
Result<Fetched> Ask(const DaemonExpectation& expected) {
  auto text = FetchAnswer(expected.socket, expected.timeout);
  if (!text) return text.error();
  auto answer = ParseDaemonAnswer(*text, "the daemon at " + expected.socket);
  if (!answer) return answer.error();
  const DaemonIdentity& id = answer->identity;
  if (id.source != expected.source) {
    return Status::Unavailable(fmt::format("the daemon at {} reads other GPUs ({}, not {})",
                                           expected.socket, id.source, expected.source));
  }
  if (id.mig) {
    return Status::Unavailable(fmt::format(
        "the daemon at {} shows MIG devices, which its answer does not carry", expected.socket));
  }
  const auto age = std::chrono::system_clock::now() - answer->recording.samples.back().time;
  const auto oldest = std::max<std::chrono::milliseconds>(3 * id.interval, std::chrono::seconds(5));
  if (age > oldest) {
    return Status::Unavailable(
        fmt::format("the daemon at {} has not sampled for {} s", expected.socket,
                    std::chrono::duration_cast<std::chrono::seconds>(age).count()));
  }
  Fetched f;
  f.info.library_path = id.library;
  f.answer = ReplayBackend::Play({expected.socket, 0}, std::move(answer->recording));
  return f;
}

}  // namespace

std::string DaemonIdentityLine(const DaemonIdentity& identity) {
  return json{{"type", "daemon"},
              {"source", identity.source},
              {"library", identity.library},
              {"interval_ms", identity.interval.count()},
              {"mig", identity.mig}}
      .dump();
}

Result<DaemonAnswer> ParseDaemonAnswer(std::string_view text, const std::string& name) {
  const std::size_t nl = text.find('\n');
  const json j = json::parse(text.substr(0, nl), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(fmt::format("{}: the first line is not a JSON object", name));
  }
  JsonMembers m;
  DaemonAnswer a;
  if (m.Text(j, "", "type") != "daemon") {
    return Status::InvalidArgument(
        fmt::format("{}: the first line is not a daemon's identity", name));
  }
  a.identity.source = m.Text(j, "", "source");
  a.identity.library = m.Text(j, "", "library");
  a.identity.interval =
      std::chrono::milliseconds(m.Integer<std::int64_t>(j, "", "interval_ms", 1).value_or(1000));
  a.identity.mig = m.Flag(j, "", "mig", false);
  if (!m.error().empty())
    return Status::InvalidArgument(fmt::format("{}: field {}", name, m.error()));
  if (nl == std::string_view::npos) {
    return Status::InvalidArgument(fmt::format("{}: no sample after the identity line", name));
  }
  auto recording = ReadJsonlText(text.substr(nl + 1), name);
  if (!recording) return recording.error();
  a.recording = std::move(*recording);
  return a;
}

Result<std::unique_ptr<DaemonBackend>> DaemonBackend::Connect(const DaemonExpectation& expected) {
  auto fetched = Ask(expected);
  if (!fetched) return fetched.error();
  return std::unique_ptr<DaemonBackend>(
      new DaemonBackend(expected, std::move(fetched->info), std::move(fetched->answer)));
}

void DaemonBackend::ReadDevice(int index, const FieldMask& which, bool processes,
                               DeviceSample& out) {
  if (index == 0 && asked_again_) {
    auto fetched = Ask(expected_);
    if (fetched) {
      answer_ = std::move(fetched->answer);
      stopped_.clear();
    } else {
      stopped_ = fetched.error().message();
    }
  }
  if (index == 0) asked_again_ = true;
  answer_->ReadDevice(index, which, processes, out);
  if (!stopped_.empty()) {
    out.health = DeviceHealth::kStale;
    out.health_detail = stopped_ + ": its last sample, not current";
  }
}

}  // namespace gpuwatch::replay
