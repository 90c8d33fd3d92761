// The explorer's HTTP server (cpp-httplib): the page and its assets, embedded in the binary at
// build time from explorer/web/, and the JSON API of api.hpp under /api/.
//
// Requests are served by a pool of threads; every handler goes through Api::handle, which turns
// any exception into a reply, so no input ends the server. Only GET (and HEAD) are answered.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "postbox/explorer/api.hpp"

namespace postbox::explorer {

// An embedded file: "/index.html", "/app.js", "/style.css". "/" is "/index.html".
struct Asset {
  std::string_view content_type;
  std::string_view body;
};
std::optional<Asset> find_asset(std::string_view path);

// The query of a request target ("/api/tree?shape=fibo&p=8"), from the raw text, URL-decoded:
// httplib's own parse drops a pair repeated with the same value, and a repeated name must be
// refused whatever its values. Empty items ("&&") are skipped; a name given twice, or an item
// without a name ("=1"), is the problem returned (the server answers it with 400).
std::optional<std::string> parse_query(const std::string& target, Query& query);

class Server {
 public:
  explicit Server(const Api& api);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port; port 0 picks a free port. Returns the bound port. A port in use, a port
  // outside 0..65535 or a host that cannot be bound → InputError naming it.
  int bind(const std::string& host, int port);
  // Serves until stop() (bind() first). Returns false when listening failed.
  bool run();
  // Ends run() from any thread; safe to call before run() starts or after it ended.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace postbox::explorer
