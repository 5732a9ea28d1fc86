#include "transport/job_protocol.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "transport/job_socket.h"

namespace gpuwatch {
namespace {

TEST(JobProtocol, ParsesMarks) {
  auto step = ParseJobMessage("mark step=1200");
  ASSERT_TRUE(step) << step.error().message();
  EXPECT_EQ(step->kind, JobMessage::Kind::kMark);
  EXPECT_EQ(step->mark, "step");
  EXPECT_EQ(step->mark_value, "1200");
  auto phase = ParseJobMessage("mark phase=eval\r");
  ASSERT_TRUE(phase);
  EXPECT_EQ(phase->mark_value, "eval");
}

TEST(JobProtocol, ParsesFrameworkMemory) {
  auto m = ParseJobMessage(
      "mem framework=torch device=1 allocated=1073741824 reserved=2147483648 pid=77");
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->kind, JobMessage::Kind::kMemory);
  EXPECT_EQ(m->framework, "torch");
  EXPECT_EQ(m->device, 1);
  EXPECT_EQ(m->bytes.at("allocated"), 1073741824.0);
  EXPECT_EQ(m->bytes.at("reserved"), 2147483648.0);
  EXPECT_EQ(m->pid, 77u);
  EXPECT_EQ(m->bytes.count("pid"), 0u);
}

TEST(JobProtocol, RejectsBadLinesSayingWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"launch rockets", "unknown message \"launch\""},
      {"mark", "mark needs step=N"},
      {"mark step=abc", "step=abc is not a number"},
      {"mark step=1 epoch=2", "one mark per line"},
      {"mem device=0 allocated=1", "mem needs framework="},
      {"mem framework=torch allocated=1", "mem needs device=N"},
      {"mem framework=torch device=0", "at least one counter"},
      {"mem framework=torch device=0 allocated=-5", "allocated=-5 is not a byte count"},
      {"mark step", "\"step\" is not key=value"},
      {"hello pid=x", "pid=x is not a pid"},
      {"mark phase=$(rm)", "keys and values are words"},
  };
  for (const auto& [line, why] : cases) {
    auto m = ParseJobMessage(line);
    ASSERT_FALSE(m) << line;
    EXPECT_NE(m.error().message().find(why), std::string::npos)
        << line << " -> " << m.error().message();
  }
  EXPECT_FALSE(ParseJobMessage(std::string(5000, 'a')));
}

TEST(JobSocket, ReceivesLinesFromARealClientAndCountsBadOnes) {
  auto socket = JobSocket::Create();
  ASSERT_TRUE(socket) << socket.error().message();
  const std::string cmd =
      "GPUWATCH_SOCKET=" + (*socket)->path() + " " + GPUWATCH_BINARY_DIR +
      "/tests/transport/job_client 'hello framework=torch version=2.11' 'mark step=1' "
      "'mem framework=torch device=0 allocated=100 reserved=200' 'nonsense' 'mark epoch=2'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::vector<JobSocket::Received> got;
  for (int i = 0; i < 100 && got.size() < 4; ++i) {
    for (auto& r : (*socket)->Drain()) got.push_back(std::move(r));
    if (got.size() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].message.kind, JobMessage::Kind::kHello);
  EXPECT_EQ(got[1].message.mark_value, "1");
  EXPECT_EQ(got[2].message.bytes.at("reserved"), 200.0);
  EXPECT_EQ(got[3].message.mark, "epoch");
  EXPECT_EQ((*socket)->bad_lines(), 1u);
  const auto errors = (*socket)->DrainErrors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("line 4"), std::string::npos) << errors[0];
  const std::string path = (*socket)->path();
  socket->reset();
  EXPECT_FALSE(std::filesystem::exists(path)) << "the socket and its directory are removed";
}

}  // namespace
}  // namespace gpuwatch
