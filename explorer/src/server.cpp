#include "postbox/explorer/server.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "postbox_explorer_assets.hpp"

namespace postbox::explorer {

std::optional<Asset> find_asset(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const internal::EmbeddedAsset& a : internal::kAssets) {
    if (a.path == path) return Asset{a.content_type, std::string_view(reinterpret_cast<const char*>(a.data), a.size)};
  }
  return std::nullopt;
}

namespace {

bool is_loopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

// The Host header's name without the port: "127.0.0.1:8080" → "127.0.0.1", "[::1]:80" → "::1".
std::string host_name(const std::string& header) {
  if (!header.empty() && header.front() == '[') {
    const std::size_t close = header.find(']');
    return close == std::string::npos ? header : header.substr(1, close - 1);
  }
  return header.substr(0, header.find(':'));
}

void send(const Reply& r, httplib::Response& res) {
  res.status = r.status;
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Content-Type-Options", "nosniff");
  if (!r.download_name.empty()) {
    res.set_header("Content-Disposition", "attachment; filename=\"" + r.download_name + "\"");
  }
  res.set_content(r.body, r.content_type.c_str());
  if (r.status >= 500) std::fprintf(stderr, "postbox serve: %s", r.body.c_str());
}


// httplib serves each connection on a worker of its task queue until the connection ends, so a
// client that opens a socket and stalls holds a worker until the read time-out. Its default
// pool (8 workers here) let 16 stalled sockets stop the server for everyone. This queue starts
// 8 workers and adds one whenever a connection arrives while none is idle, up to kMaxWorkers;
// beyond that, connections wait in line for the first worker a time-out frees. A worker that
// cannot be started (no memory for its stack) leaves the connection in line.
class GrowingPool final : public httplib::TaskQueue {
 public:
  static constexpr std::size_t kStartWorkers = 8;
  static constexpr std::size_t kMaxWorkers = 256;

  GrowingPool() {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::size_t i = 0; i < kStartWorkers; ++i) start_worker();
  }
  ~GrowingPool() override = default;

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(fn));
      if (idle_ < jobs_.size() && workers_.size() < kMaxWorkers) start_worker();
    }
    cv_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutdown_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

 private:
  // Under mu_.
  void start_worker() {
    try {
      workers_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      // No thread: the job waits for a running worker.
    }
  }

  void work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ++idle_;
      cv_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // shutdown, nothing left
      std::function<void()> fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> workers_;
  std::size_t idle_ = 0;
  bool shutdown_ = false;
};

// How long a connection may sit without sending a request's next bytes, or idle between
// keep-alive requests, before it is closed: short, so that stalled clients free their workers
// soon; a browser reconnects at once.
constexpr int kReadTimeoutS = 2;
constexpr int kKeepAliveTimeoutS = 2;
// Connections the kernel holds for the server before it accepts them (SOMAXCONN caps it).
constexpr int kListenBacklog = 1024;

}  // namespace

struct Server::Impl {
  const Api& api;
  httplib::Server http;
  std::string host;
  bool bound = false;
  int listen_fd = -1;
  // stop() and run() meet through these two flags (seq_cst, Dekker style: each side writes its
  // flag, then reads the other's, so at least one of them sees the other and the stop is not lost).
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> in_run{false};

  explicit Impl(const Api& a) : api(a) {
    // httplib's default also sets SO_REUSEPORT, with which a second server binds the same port and
    // the kernel splits the requests between the two; a port in use must be an error instead.
    http.set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listen_fd = sock;  // the last one is the socket that bound
    });
    http.new_task_queue = [] { return new GrowingPool(); };
    http.set_read_timeout(kReadTimeoutS, 0);
    http.set_keep_alive_timeout(kKeepAliveTimeoutS);
    http.set_keep_alive_max_count(100);
    http.set_payload_max_length(1 << 16);  // GET only: a body is never needed
    http.Get(".*", [this](const httplib::Request& req, httplib::Response& res) { serve(req, res); });
    // Nothing thrown below should escape (Api::handle never throws), but httplib turns anything
    // that does into a 500 through this handler instead of ending the connection thread.
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
      send(error_reply(500, "internal error"), res);
    });
  }

  void serve(const httplib::Request& req, httplib::Response& res) {
    // A page elsewhere may point a browser at a loopback server through a name it controls
    // (DNS rebinding); a loopback server answers only requests addressed to loopback.
    if (is_loopback(host) && !is_loopback(host_name(req.get_header_value("Host")))) {
      send(error_reply(403, "this server answers only requests for 127.0.0.1 or localhost"), res);
      return;
    }
    const std::string& path = req.path;
    if (path == "/api" || path == "/api/" || path.rfind("/api/", 0) == 0) {
      Query query;
      if (const std::optional<std::string> problem = parse_query(req.target, query)) {
        send(error_reply(400, *problem), res);
        return;
      }
      send(api.handle(path.size() > 5 ? std::string_view(path).substr(5) : std::string_view(), query), res);
      return;
    }
    const std::optional<Asset> asset = find_asset(path);
    if (!asset) {
      send(error_reply(404, "no page " + path + " (the explorer is at /)"), res);
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Content-Type-Options", "nosniff");
    // Everything comes from this server: no CDN, no inline script.
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                   "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    res.set_content(std::string(asset->body), std::string(asset->content_type).c_str());
  }
};

Server::Server(const Api& api) : impl_(std::make_unique<Impl>(api)) {}

Server::~Server() { stop(); }

int Server::bind(const std::string& host, int port) {
  PB_CHECK(!impl_->bound, "Server::bind called twice");
  if (port < 0 || port > 65535) throw InputError("--port must be in 0..65535, got " + std::to_string(port));
  impl_->host = host;
  int bound = -1;
  if (port == 0) {
    bound = impl_->http.bind_to_any_port(host);
  } else if (impl_->http.bind_to_port(host, port)) {
    bound = port;
  }
  if (bound <= 0) {
    throw InputError("cannot listen on " + host + ":" + std::to_string(port) +
                     " (in use, or not an address of this machine)");
  }
  // Debian's httplib is built to listen with a backlog of 5: a classroom's browsers connecting
  // at once (200 in the suite) overflowed it, and each refused connection retried its SYN only
  // after 1, 3, 7... s. Linux takes a second listen() on a listening socket as a new backlog.
  if (impl_->listen_fd >= 0) (void)::listen(impl_->listen_fd, kListenBacklog);
  impl_->bound = true;
  return bound;
}

bool Server::run() {
  PB_CHECK(impl_->bound, "Server::run before bind");
  impl_->in_run.store(true, std::memory_order_seq_cst);  // Dekker pair with stop(): see Impl
  if (impl_->stop_requested.load(std::memory_order_seq_cst)) {
    impl_->in_run.store(false, std::memory_order_seq_cst);
    return true;
  }
  const bool ok = impl_->http.listen_after_bind();
  impl_->in_run.store(false, std::memory_order_seq_cst);
  return ok;
}

void Server::stop() {
  impl_->stop_requested.store(true, std::memory_order_seq_cst);  // Dekker pair with run(): see Impl
  // run() may be between its check and the start of listening: wait until httplib runs (then
  // its stop() works) or run() has returned.
  while (impl_->in_run.load(std::memory_order_seq_cst) && !impl_->http.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->http.stop();
}

std::optional<std::string> parse_query(const std::string& target, Query& query) {
  const std::size_t q = target.find('?');
  if (q == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(target).substr(q + 1);
  rest = rest.substr(0, rest.find('#'));
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view item = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    const std::string name = httplib::detail::decode_url(std::string(item.substr(0, eq)), true);
    const std::string value =
        eq == std::string_view::npos ? std::string() : httplib::detail::decode_url(std::string(item.substr(eq + 1)), true);
    if (name.empty()) return "a query parameter has no name ('" + std::string(item) + "')";
    if (!query.emplace(name, value).second) return "parameter '" + name + "' given twice";
  }
  return std::nullopt;
}

}  // namespace postbox::explorer
