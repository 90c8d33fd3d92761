#include "postbox/explorer/server.hpp"

#include <httplib.h>
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "loopback_socket.hpp"

namespace postbox::explorer {
namespace {

// A server on 127.0.0.1 at a port it picked, run on its own thread, stopped by the destructor.
class Running {
 public:
  Running() : server_(api_) {
    port_ = server_.bind("127.0.0.1", 0);
    thread_ = std::thread([this] { ok_ = server_.run(); });
  }
  ~Running() {
    server_.stop();
    thread_.join();
  }
  [[nodiscard]] int port() const { return port_; }
  httplib::Result get(const std::string& path, const httplib::Headers& headers = {}) {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60);
    return c.Get(path, headers);
  }
  [[nodiscard]] bool ok() const { return ok_; }

 private:
  Api api_;
  Server server_;
  int port_ = 0;
  bool ok_ = false;
  std::thread thread_;
};

TEST(ExplorerServer, ServesThePageItsAssetsAndTheApi) {
  Running s;
  EXPECT_GT(s.port(), 0);
  const auto page = s.get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("<script src=\"/app.js\""), std::string::npos);
  // No resource from elsewhere: the policy allows only this server.
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  for (const char* asset : {"/index.html", "/app.js", "/style.css"}) {
    const auto r = s.get(asset);
    ASSERT_TRUE(r) << asset;
    EXPECT_EQ(r->status, 200) << asset;
    EXPECT_EQ(r->body, std::string(find_asset(asset)->body)) << asset;
  }
  const auto tree = s.get("/api/tree?shape=fibo&p=64&s=1&r=3");
  ASSERT_TRUE(tree);
  EXPECT_EQ(tree->status, 200);
  EXPECT_EQ(nlohmann::json::parse(tree->body)["completion"], 15);
  EXPECT_EQ(tree->get_header_value("Cache-Control"), "no-store");
}

// A socket to 127.0.0.1:port that sends the start of a request and then nothing (or nothing at
// all), kept open: what a stalled laptop or an idle browser socket looks like to the server.
int stalled_socket(int port, bool partial) {
  const int fd = test::connect_loopback(port);
  if (fd < 0) return -1;
  if (partial) {
    static const char head[] = "GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    (void)!::write(fd, head, sizeof head - 1);
  }
  return fd;
}

// 100 stalled sockets (half with a partial request, half silent) do not keep 200 concurrent
// clients from their answers. Each client waits up to 30 s: with the 8 workers of httplib's
// default pool, 16 stalled sockets already held every worker for its read time-out, and 100
// held them for a minute. The slowest answer is printed (a figure for the notes, not a verdict).
TEST(ExplorerServer, StalledSocketsDoNotStopTheOthers) {
  Running s;
  std::vector<int> stalled;
  for (int i = 0; i < 100; ++i) {
    const int fd = stalled_socket(s.port(), i % 2 == 0);
    ASSERT_GE(fd, 0) << "socket " << i;
    stalled.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the server has accepted them
  std::atomic<int> answered{0};
  std::atomic<long long> slowest_us{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 200; ++c) {
    clients.emplace_back([&] {
      httplib::Client client("127.0.0.1", s.port());
      client.set_connection_timeout(30);
      client.set_read_timeout(30);
      const auto t0 = std::chrono::steady_clock::now();
      const auto r = client.Get("/api/postal?lambda=2&n=8");
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
      if (r && r->status == 200) ++answered;
      long long seen = slowest_us.load();
      while (us > seen && !slowest_us.compare_exchange_weak(seen, us)) {
      }
    });
  }
  for (std::thread& t : clients) t.join();
  for (const int fd : stalled) ::close(fd);
  EXPECT_EQ(answered.load(), 200);
  std::printf("200 clients beside 100 stalled sockets: slowest answer %.3f s\n",
              static_cast<double>(slowest_us.load()) / 1e6);
}

TEST(ExplorerServer, BadInputIsAnAnswerNotACrash) {
  Running s;
  const auto bad = s.get("/api/tree?shape=fibo&p=0");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(bad->body, "postbox: error: --p must be at least 1, got 0\n");
  const auto twice = s.get("/api/tree?shape=fibo&p=8&p=9");
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->status, 400);
  EXPECT_EQ(twice->body, "postbox: error: parameter 'p' given twice\n");
  // Repeated with the same value is refused too, and so is a parameter without a name.
  const auto same = s.get("/api/tree?shape=fibo&p=16&root=0&s=1&r=3&p=16");
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 400);
  EXPECT_EQ(same->body, "postbox: error: parameter 'p' given twice\n");
  const auto unnamed = s.get("/api/tree?shape=fibo&p=8&=1");
  ASSERT_TRUE(unnamed);
  EXPECT_EQ(unnamed->status, 400);
  EXPECT_EQ(unnamed->body, "postbox: error: a query parameter has no name ('=1')\n");
  // Encoded names and values are decoded, empty items skipped.
  const auto encoded = s.get("/api/tree?sh%61pe=fibo&&p=%38");
  ASSERT_TRUE(encoded);
  EXPECT_EQ(encoded->status, 200) << encoded->body;
  for (const char* path : {"/api/tree?shape=%ff&p=8", "/api/tree?shape=fibo&p=%", "/api/%00", "/api/tree?=&&=x",
                           "/api/sim?machine=manna&p=99999999999999999999999"}) {
    const auto r = s.get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_TRUE(r->status == 400 || r->status == 404) << path << " " << r->status;
  }
  const auto none = s.get("/nothing.html");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404);
  // A name elsewhere pointing at this loopback server (DNS rebinding) is refused.
  const auto rebound = s.get("/api/topo", {{"Host", "attacker.example:80"}});
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->status, 403);
  const auto local = s.get("/api/tree?shape=flat&p=3", {{"Host", "localhost:" + std::to_string(s.port())}});
  ASSERT_TRUE(local);
  EXPECT_EQ(local->status, 200);
  // Still serving after all of it.
  const auto after = s.get("/api/tree?shape=binomial&p=64&s=1&r=3");
  ASSERT_TRUE(after);
  EXPECT_EQ(nlohmann::json::parse(after->body)["completion"], 24);
}

TEST(ExplorerServer, PortInUseAndOutOfRangeAreInputErrors) {
  Running s;
  Api api;
  Server other(api);
  EXPECT_THROW(other.bind("127.0.0.1", s.port()), InputError);
  Server third(api);
  EXPECT_THROW(third.bind("127.0.0.1", 70000), InputError);
  EXPECT_THROW(third.bind("127.0.0.1", -1), InputError);
  EXPECT_THROW(third.bind("256.0.0.1", 0), InputError);
}

TEST(ExplorerServer, OnlyGet) {
  Running s;
  httplib::Client c("127.0.0.1", s.port());
  for (const auto& r : {c.Post("/api/tree?shape=fibo&p=8", "x", "text/plain"), c.Put("/", "x", "text/plain"),
                        c.Delete("/api/tree")}) {
    ASSERT_TRUE(r);
    EXPECT_GE(r->status, 400);
  }
  const auto head = c.Head("/");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
}

TEST(ExplorerServer, StopBeforeRunEndsRunAtOnce) {
  Api api;
  Server server(api);
  server.bind("127.0.0.1", 0);
  server.stop();
  EXPECT_TRUE(server.run());  // returns instead of serving
  server.stop();              // and again after it ended
}

TEST(ExplorerServer, StopFromAnotherThreadWhileRunning) {
  for (int i = 0; i < 5; ++i) {
    Api api;
    Server server(api);
    server.bind("127.0.0.1", 0);
    std::thread t([&] { server.run(); });
    server.stop();  // possibly before run() listens: must still end it
    t.join();
  }
}

TEST(ExplorerServer, FindAsset) {
  ASSERT_TRUE(find_asset("/"));
  EXPECT_EQ(find_asset("/")->body, find_asset("/index.html")->body);
  EXPECT_EQ(find_asset("/app.js")->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(find_asset("/style.css")->content_type, "text/css; charset=utf-8");
  EXPECT_FALSE(find_asset("/../etc/passwd"));
  EXPECT_FALSE(find_asset("/app.js.map"));
}

}  // namespace
}  // namespace postbox::explorer
