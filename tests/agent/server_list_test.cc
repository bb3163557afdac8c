// The agent's list of corrald replicas (agent/client.h): parsing --server, and moving
// every client to the next replica when the current one is away, once per failure
// however many clients saw it, while an answer from a live replica moves nothing.
#include <httplib.h>
#include <thread>
#include <unistd.h>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "agent/client.h"

namespace corral::agent {
namespace {

TEST(ServerList, ParsesOneOrSeveralReplicasAndNamesABadOne) {
  auto one = ServerList::parse("http://127.0.0.1:8470");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)->size(), 1u);
  auto three = ServerList::parse("http://a:1,b:2,http://c:3");
  ASSERT_TRUE(three.ok());
  EXPECT_EQ((*three)->size(), 3u);
  EXPECT_EQ((*three)->url(), "http://a:1");
  for (const char* bad : {"", "http://a:1,", "http://a:1,,b:2", "a", "http://a:0", "https://a:1",
                          "http://a:1,http://b:x"}) {
    const auto r = ServerList::parse(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().field(), "--server") << bad;
  }
}

TEST(ServerList, AFailureMovesEveryClientOnceAndWrapsAround) {
  auto list = *ServerList::parse("a:1,b:2,c:3");
  const auto g = list->generation();
  list->failed(g);
  list->failed(g);  // a second client saw the same failure: no second move
  EXPECT_EQ(list->url(), "http://b:2");
  list->failed(list->generation());
  list->failed(list->generation());
  EXPECT_EQ(list->url(), "http://a:1");
  // One replica: nowhere to move.
  auto alone = *ServerList::parse("a:1");
  alone->failed(alone->generation());
  EXPECT_EQ(alone->generation(), 0u);
}

// A loopback port that was free a moment ago and has no listener now.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(CorraldClient, AnUnreachableReplicaOrA503MovesOnAnyOtherAnswerDoesNot) {
  httplib::Server live;
  int status = 403;
  live.Post("/v1/agents/n1/heartbeat", [&](const httplib::Request&, httplib::Response& res) {
    res.status = status;
    res.set_content(R"({"error": {"code": "forbidden", "message": "no"}})", "application/json");
  });
  const int port = live.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { live.listen_after_bind(); });
  // The first replica is a port nobody listens on; the second answers.
  const int dead = closed_port();
  auto list = *ServerList::parse("127.0.0.1:" + std::to_string(dead) +
                                 ",127.0.0.1:" + std::to_string(port));
  auto connected = CorraldClient::connect(list);
  ASSERT_TRUE(connected.ok());
  auto& client = *connected;
  const core::Heartbeat hb{.epoch = 1};
  auto first = client->heartbeat("n1", "t", hb);
  EXPECT_EQ(first.status().code(), core::StatusCode::kUnavailable);
  EXPECT_EQ(list->url(), "http://127.0.0.1:" + std::to_string(port));  // moved on
  // A refusal from a live replica is the cluster's answer: stay.
  auto refused = client->heartbeat("n1", "t", hb);
  EXPECT_EQ(refused.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_EQ(list->url(), "http://127.0.0.1:" + std::to_string(port));
  // 503: that replica is going away.
  status = 503;
  auto away = client->heartbeat("n1", "t", hb);
  EXPECT_EQ(away.status().code(), core::StatusCode::kUnavailable);
  EXPECT_EQ(list->url(), "http://127.0.0.1:" + std::to_string(dead));
  client.reset();  // its keep-alive connection would hold a server thread 5 s
  live.stop();
  serving.join();
}

}  // namespace
}  // namespace corral::agent
