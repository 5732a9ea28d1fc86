// The daemon's answer socket: every connection gets the whole answer, a
// live socket is never taken over, a stale one is, and a client never waits
// past its deadline or reads past its limit.
#include "transport/answer_socket.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "transport/unix_socket.h"

namespace gpuwatch {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class AnswerSocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gw-answer-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path() const { return (dir_ / "daemon.sock").string(); }
  fs::path dir_;
};

TEST_F(AnswerSocketTest, EachConnectionGetsTheWholeAnswer) {
  // Larger than a socket buffer: the server writes while the client reads.
  std::string big(3 << 20, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + i % 26);
  std::atomic<int> asked{0};
  auto server = AnswerSocket::Create(Path(), [&] {
    ++asked;
    return std::make_shared<const std::string>(big);
  });
  ASSERT_TRUE(server) << server.error().message();
  EXPECT_EQ(fs::status(Path()).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::group_write | fs::perms::others_read | fs::perms::others_write);
  for (int i = 0; i < 3; ++i) {
    auto got = FetchAnswer(Path(), 5s);
    ASSERT_TRUE(got) << got.error().message();
    EXPECT_EQ(*got, big);
  }
  EXPECT_EQ(asked, 3);
}

TEST_F(AnswerSocketTest, APrivateSocketIsItsUsersOnly) {
  auto server = AnswerSocket::Create(
      Path(), [] { return std::make_shared<const std::string>("mine"); }, 0600);
  ASSERT_TRUE(server);
  EXPECT_EQ(fs::status(Path()).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(*FetchAnswer(Path(), 5s), "mine");
}

TEST_F(AnswerSocketTest, NothingToAnswerIsAnEmptyAnswer) {
  auto server = AnswerSocket::Create(Path(), [] { return nullptr; });
  ASSERT_TRUE(server);
  auto got = FetchAnswer(Path(), 5s);
  ASSERT_TRUE(got) << got.error().message();
  EXPECT_EQ(*got, "");
}

TEST_F(AnswerSocketTest, ALiveSocketIsNotTakenOverAndAStaleOneIs) {
  auto answer = [] { return std::make_shared<const std::string>("first"); };
  {
    auto first = AnswerSocket::Create(Path(), answer);
    ASSERT_TRUE(first);
    auto second = AnswerSocket::Create(Path(), answer);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code(), Status::Code::kUnavailable);
    EXPECT_NE(second.error().message().find("another process serves it"), std::string::npos);
    EXPECT_EQ(*FetchAnswer(Path(), 5s), "first") << "the first one still answers";
  }
  EXPECT_FALSE(fs::exists(Path())) << "removed when it stops";
  // A socket left by a daemon that died (nobody listens): replaced.
  auto fd = ListenUnix(Path());
  ASSERT_TRUE(fd);
  close(*fd);
  ASSERT_TRUE(fs::exists(Path()));
  auto again =
      AnswerSocket::Create(Path(), [] { return std::make_shared<const std::string>("new"); });
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(*FetchAnswer(Path(), 5s), "new");
}

TEST_F(AnswerSocketTest, AFileInTheWayIsAnErrorNamingIt) {
  std::ofstream(Path()) << "not a socket";
  auto server = AnswerSocket::Create(Path(), [] { return nullptr; });
  ASSERT_FALSE(server);
  EXPECT_EQ(server.error().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(server.error().message().find(Path()), std::string::npos);
  EXPECT_NE(server.error().message().find("not a socket"), std::string::npos);
}

TEST_F(AnswerSocketTest, NoSocketIsUnavailable) {
  auto got = FetchAnswer(Path(), 1s);
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().code(), Status::Code::kUnavailable);
  EXPECT_NE(got.error().message().find(Path()), std::string::npos);
}

TEST_F(AnswerSocketTest, AServerThatNeverAnswersIsGivenUpOnAtTheDeadline) {
  // Listening, never accepting: the connection is queued and nothing comes.
  auto fd = ListenUnix(Path());
  ASSERT_TRUE(fd);
  auto got = FetchAnswer(Path(), 300ms);
  close(*fd);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message().find("no answer within 300 ms"), std::string::npos)
      << got.error().message();
}

TEST_F(AnswerSocketTest, AnAnswerOverTheLimitIsNotRead) {
  auto server = AnswerSocket::Create(
      Path(), [] { return std::make_shared<const std::string>(std::string(1 << 20, 'x')); });
  ASSERT_TRUE(server);
  auto got = FetchAnswer(Path(), 5s, 1000);
  ASSERT_FALSE(got);
  EXPECT_NE(got.error().message().find("over 1000 bytes"), std::string::npos);
  // A client that stops reading does not hold the server: the next one is answered.
  EXPECT_EQ(FetchAnswer(Path(), 5s)->size(), std::size_t{1} << 20);
}

TEST(TrustedServer, RootASystemAccountOrTheClientsOwnUser) {
  EXPECT_TRUE(TrustedServer(0, 1000));
  EXPECT_TRUE(TrustedServer(1000, 1000));
  EXPECT_TRUE(TrustedServer(0, 0));
  EXPECT_TRUE(TrustedServer(998, 1000)) << "the service user (deploy/systemd) is a system account";
  EXPECT_TRUE(TrustedServer(999, 0));
  EXPECT_FALSE(TrustedServer(1001, 1000));
  EXPECT_FALSE(TrustedServer(1000, 0)) << "root does not believe a regular user's daemon";
  EXPECT_FALSE(TrustedServer(60000, 1000));
}

}  // namespace
}  // namespace gpuwatch
