// Socket-level fuzzer of the explorer's HTTP server: a real Server on 127.0.0.1 (a port it
// picks) gets hostile conversations over raw sockets: request lines with odd methods, targets
// (the API's own endpoints with hostile values, assets, absolute forms, 10 000-character
// targets, raw control characters) and versions; missing, foreign or repeated Host headers,
// oversized and malformed headers, bodies the Content-Length contradicts, chunked garbage,
// pipelined requests, bare LF line ends, requests cut short, random bytes; each sent whole or in
// fragments with short pauses, while stalled sockets (a partial request, or nothing) pile up
// beside them.
//
// The contract (server.hpp, docs/explorer.md): whatever comes in, the server answers with a
// well-formed HTTP/1.1 status line or closes the connection, never with 500; a well-formed GET
// is always answered; an error body of postbox's own is one line "postbox: error: MESSAGE\n"
// with MESSAGE at most 200 characters and no control character; and the server keeps
// answering: every 40 conversations (and at the end) a well-formed request beside the stalled
// sockets must get its 200. No answer within --case-seconds is a hang. Prints one summary line
// with the outcomes; exit 1 and the conversation on the first violation.
//
//   postbox_fuzz_socket [--seed N] [--runs N] [--case-seconds S]
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "postbox/explorer/api.hpp"
#include "postbox/explorer/server.hpp"
#include "loopback_socket.hpp"

namespace {

long arg_long(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}

using postbox::test::connect_loopback;

struct Conversation {
  std::string bytes;           // everything the client sends
  bool well_formed = false;    // one complete, valid GET: it must be answered
  bool fragments = false;      // sent in pieces with pauses
  bool pipelined = false;      // more than one request: more than one answer may come
  std::string what;            // a short description for the violation report
};

template <class Rng>
std::string pick(Rng& rng, const std::vector<std::string>& v) {
  if (v.empty()) {
    std::fprintf(stderr, "fuzz_socket: nothing to pick from\n");
    std::abort();
  }
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

template <class Rng>
bool chance(Rng& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

template <class Rng>
std::string target(Rng& rng, const std::vector<std::string>& endpoints) {
  const std::vector<std::string> values{"8",  "0",      "-1",   "1e9",    "+5",      "2.5",  "10/3", "%00",
                                        "%zz", "%1b[31m", "\x1b", "abc",    "99999999999999999999",
                                        "",   "fibo",   "x%20y", "1%0a2"};
  switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
    case 0: return "/";
    case 1: return pick(rng, {"/app.js", "/style.css", "/index.html", "/nope", "/../etc/passwd", "*"});
    case 2: return "http://127.0.0.1/api";
    case 3: return "/api/" + std::string(10000, 'a');
    case 4: return "/api/tree?shape=fibo&p=8&p=8";
    default: {
      std::string t = "/api/" + pick(rng, endpoints);
      const int n = std::uniform_int_distribution<int>(0, 4)(rng);
      for (int i = 0; i < n; ++i) {
        t += (i == 0 ? "?" : "&") + pick(rng, {"p", "shape", "lambda", "n", "s", "r", "machine", "", "bytes"}) + "=" +
             pick(rng, values);
      }
      return t;
    }
  }
}

template <class Rng>
std::string request(Rng& rng, const std::vector<std::string>& endpoints, bool& well_formed) {
  well_formed = true;
  std::string method = "GET";
  if (chance(rng, 0.25)) {
    method = pick(rng, {"HEAD", "POST", "PUT", "DELETE", "G\x01T", "", std::string(300, 'M'), "get"});
    well_formed = false;
  }
  std::string t = target(rng, endpoints);
  if (t.find_first_of(std::string("\x1b\x01 ", 3)) != std::string::npos || t.size() > 8000 || t == "*" ||
      t.rfind("http:", 0) == 0)
    well_formed = false;
  std::string version = "HTTP/1.1";
  if (chance(rng, 0.15)) {
    version = pick(rng, {"HTTP/1.0", "HTTP/2.0", "HTTP/9.9", "", "http/1.1", "HTTP/1.1 extra"});
    if (version != "HTTP/1.0") well_formed = false;
  }
  const std::string eol = chance(rng, 0.05) ? "\n" : "\r\n";
  std::string r = method + " " + t + " " + version + eol;
  if (!chance(rng, 0.1)) {
    r += "Host: " + pick(rng, {"127.0.0.1", "127.0.0.1", "localhost:80", "evil.example", "[::1]", ""}) + eol;
  }
  // Mostly none: a header that announces a body the request lacks holds the connection for the
  // server's read time-out (2 s), the price of covering it.
  const int extra = chance(rng, 0.75) ? 0 : (chance(rng, 0.8) ? 1 : 2);
  for (int i = 0; i < extra; ++i) {
    well_formed = false;  // some of these are harmless; none is required to be answered
    r += pick(rng, {"X-Big: " + std::string(9000, 'v') + eol, "NoColonHeader" + eol, "Content-Length: 5" + eol,
                    "Content-Length: -1" + eol, "Content-Length: 99999999999" + eol,
                    "Transfer-Encoding: chunked" + eol, "Connection: close" + eol, "Host: 127.0.0.1" + eol,
                    "X-Ctl: a\x1b[2Jb" + eol, " folded continuation" + eol});
  }
  r += eol;
  if (chance(rng, 0.1)) {
    r += pick(rng, {"hello", "zz\r\n0\r\n\r\n", std::string(70000, 'b')});
    well_formed = false;
  }
  return r;
}

template <class Rng>
Conversation conversation(Rng& rng, const std::vector<std::string>& endpoints) {
  Conversation c;
  // Random bytes and requests cut short wait for the server's 2 s read time-out: 1 in 20 each.
  const int kind = std::uniform_int_distribution<int>(0, 19)(rng);
  if (kind == 0) {  // random bytes
    const int n = std::uniform_int_distribution<int>(1, 2000)(rng);
    for (int i = 0; i < n; ++i) c.bytes += static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    c.what = "random bytes";
  } else if (kind == 1) {  // cut short
    bool ignored = false;
    const std::string r = request(rng, endpoints, ignored);
    c.bytes = r.substr(0, std::uniform_int_distribution<std::size_t>(0, r.size() - 1)(rng));
    c.what = "a request cut short";
  } else if (kind == 2) {  // pipelined
    bool a = false;
    bool b = false;
    c.bytes = request(rng, endpoints, a) + request(rng, endpoints, b);
    c.pipelined = true;
    c.what = "two pipelined requests";
  } else {
    c.bytes = request(rng, endpoints, c.well_formed);
    c.what = c.well_formed ? "a well-formed GET" : "a malformed request";
  }
  c.fragments = chance(rng, 0.3);
  return c;
}

// Whether `bytes` holds a whole response: its header and as much body as it announces (a HEAD
// answer announces a body it does not carry: read until the server goes quiet instead).
bool whole_response(const std::string& bytes) {
  const std::size_t head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  const std::size_t cl = bytes.find("Content-Length: ");
  const std::size_t length = cl != std::string::npos && cl < head_end ? std::strtoul(bytes.c_str() + cl + 16, nullptr, 10) : 0;
  return bytes.size() >= head_end + 4 + length;
}

// What came back: the bytes the server sent before it closed the connection or went quiet for
// quiet_ms after the first byte, or until deadline.
struct Received {
  std::string bytes;
  bool timed_out = false;
};

Received exchange(int port, const Conversation& c, std::mt19937_64& rng, double case_seconds) {
  Received out;
  const int fd = connect_loopback(port);
  if (fd < 0) {
    out.timed_out = true;
    return out;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(case_seconds);
  std::size_t sent = 0;
  while (sent < c.bytes.size()) {
    std::size_t n = c.bytes.size() - sent;
    // In pieces for the first 2 KiB (a slow client's request line and header), the rest whole.
    if (c.fragments && sent < 2048) n = std::min<std::size_t>(n, std::uniform_int_distribution<std::size_t>(1, 64)(rng));
    const ssize_t w = ::send(fd, c.bytes.data() + sent, n, MSG_NOSIGNAL);
    if (w <= 0) break;  // the server closed on us (a bad request): what it sent is read below
    sent += static_cast<std::size_t>(w);
    if (c.fragments && sent < 2048)
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 5)(rng)));
  }
  // A conversation that is not a complete request may get no answer until the server's read
  // time-out closes it; a complete one is answered, then kept alive: stop reading once the
  // answer has been followed by a quiet spell.
  char buf[4096];
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      out.timed_out = true;
      break;
    }
    const int left_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
    // One whole answer to one request: done (the server keeps the connection alive).
    if (!c.pipelined && whole_response(out.bytes)) break;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, out.bytes.empty() ? left_ms : std::min(left_ms, 100));
    if (ready == 0) {
      if (!out.bytes.empty()) break;  // answered, then quiet (keep-alive)
      continue;
    }
    const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
    if (r <= 0) break;  // closed
    out.bytes.append(buf, static_cast<std::size_t>(r));
  }
  ::close(fd);
  return out;
}

// Every response in `bytes` (pipelined ones follow each other): "" when all keep the contract,
// else what is wrong.
std::string check(const std::string& bytes) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.compare(at, 9, "HTTP/1.1 ") != 0 || at + 12 > bytes.size()) return "not an HTTP/1.1 status line";
    const int status = std::atoi(bytes.substr(at + 9, 3).c_str());
    if (status < 100 || status > 599) return "status " + bytes.substr(at + 9, 3);
    if (status == 500) return "500";
    const std::size_t head_end = bytes.find("\r\n\r\n", at);
    if (head_end == std::string::npos) return "a response without the end of its header";
    std::size_t length = 0;
    const std::size_t cl = bytes.find("Content-Length: ", at);
    if (cl != std::string::npos && cl < head_end) length = std::strtoul(bytes.c_str() + cl + 16, nullptr, 10);
    const std::size_t body_at = head_end + 4;
    const std::string body = bytes.substr(body_at, std::min(length, bytes.size() - body_at));
    if (body.rfind("postbox: error: ", 0) == 0) {
      if (body.find('\n') != body.size() - 1) return "an error body of more than one line";
      if (body.size() - 17 > 200) return "an error message of " + std::to_string(body.size() - 17) + " characters";
      for (const char ch : body.substr(0, body.size() - 1))
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) return "a control character in an error body";
    }
    // A HEAD answer announces a length but carries no body.
    const bool head = body_at + length > bytes.size();
    at = head ? bytes.size() : body_at + length;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  const auto seed = static_cast<std::uint64_t>(arg_long(argc, argv, "--seed", 1));
  const long runs = arg_long(argc, argv, "--runs", 400);
  const double case_seconds = static_cast<double>(arg_long(argc, argv, "--case-seconds", 30));
  const postbox::explorer::Api api;
  std::vector<std::string> endpoints;
  const nlohmann::json index = nlohmann::json::parse(api.handle("", {}).body);
  for (const auto& e : index.at("endpoints"))
    endpoints.push_back(e.at("path").get<std::string>().substr(5));
  if (endpoints.empty()) {
    std::fprintf(stderr, "fuzz_socket: the API lists no endpoint\n");
    return 1;
  }
  postbox::explorer::Server server(api);
  const int port = server.bind("127.0.0.1", 0);
  std::thread serving([&] { (void)server.run(); });
  std::mt19937_64 rng(seed);
  std::vector<int> stalled;
  std::map<std::string, long> outcomes;
  int status = 0;
  auto violation = [&](long n, const Conversation& c, const std::string& why) {
    std::string shown = c.bytes.substr(0, 300);
    for (char& ch : shown)
      if (static_cast<unsigned char>(ch) < 0x20 && ch != '\r' && ch != '\n') ch = '?';
    std::fprintf(stderr, "fuzz_socket: VIOLATION (seed %llu, conversation %ld, %s): %s\n  sent (first 300 bytes): %s\n",
                 static_cast<unsigned long long>(seed), n, c.what.c_str(), why.c_str(), shown.c_str());
    status = 1;
  };
  auto probe = [&](long n) {
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(static_cast<time_t>(case_seconds));
    client.set_read_timeout(static_cast<time_t>(case_seconds));
    const auto r = client.Get("/api/postal?lambda=2&n=8");
    if (!r || r->status != 200) {
      Conversation c;
      c.what = "the liveness probe beside " + std::to_string(stalled.size()) + " stalled sockets";
      violation(n, c, r ? "status " + std::to_string(r->status) : "no answer");
    }
  };
  for (long n = 0; n < runs && status == 0; ++n) {
    if (chance(rng, 0.08) && stalled.size() < 60) {
      const int fd = connect_loopback(port);
      if (fd >= 0) {
        if (chance(rng, 0.5)) (void)!::write(fd, "GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\n", 36);
        stalled.push_back(fd);
      }
    }
    const Conversation c = conversation(rng, endpoints);
    const Received got = exchange(port, c, rng, case_seconds);
    if (got.timed_out) {
      violation(n, c, "no answer and no close within " + std::to_string(case_seconds) + " s");
      break;
    }
    if (got.bytes.empty()) {
      if (c.well_formed) violation(n, c, "a well-formed GET got no answer");
      ++outcomes["closed"];
    } else if (const std::string why = check(got.bytes); !why.empty()) {
      violation(n, c, why);
    } else {
      ++outcomes["status " + got.bytes.substr(9, 3)];
    }
    if (n % 40 == 39) probe(n);
  }
  if (status == 0) probe(runs);
  for (const int fd : stalled) ::close(fd);
  server.stop();
  serving.join();
  std::string summary;
  for (const auto& [k, v] : outcomes) summary += (summary.empty() ? "" : ", ") + k + " x" + std::to_string(v);
  std::printf("fuzz_socket: seed %llu, %ld conversations beside up to %zu stalled sockets: %s; %s\n",
              static_cast<unsigned long long>(seed), runs, stalled.size(), summary.c_str(),
              status == 0 ? "no violation" : "VIOLATION");
  return status;
}
