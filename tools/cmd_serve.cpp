// postbox serve: the teaching explorer (docs/explorer.md), a page and a JSON API over the
// library, served by explorer/ on 127.0.0.1 unless --host says otherwise.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "cli.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/explorer/api.hpp"
#include "postbox/explorer/server.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"
#include "sim_common.hpp"

namespace postbox::cli {
namespace {

struct ServeArgs {
  std::string port = "8080";  // text, parsed by parse.hpp's grammar like every integer option
  std::string host = "127.0.0.1";
};

void run_serve(const ServeArgs& a) {
  const int port_wanted = static_cast<int>(parse_int(a.port, "--port", 0, 65535));
  if (dry_run()) return;
  // The emulated runs are `postbox sim`'s: the Api's planner makes the same selection.
  explorer::Api api;
  explorer::Server server(api);
  // SIGINT and SIGTERM end the server cleanly: blocked here (every thread the server starts
  // inherits the mask) and taken by one thread with sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const int port = server.bind(a.host, port_wanted);
  std::atomic<bool> served{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server.stop();
    // run() returns once the requests in flight are answered; a stop should not wait for a long
    // emulated run, and abandoning a pure computation loses nothing.
    for (int i = 0; i < 300 && !served.load(std::memory_order_acquire); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!served.load(std::memory_order_acquire)) {
      std::fprintf(stderr, "postbox serve: stopped with requests still running\n");
      std::_Exit(0);
    }
  });
  const bool v6 = a.host.find(':') != std::string::npos;
  std::printf("postbox explorer: http://%s%s%s:%d/  (Ctrl-C stops it)\n", v6 ? "[" : "", a.host.c_str(),
              v6 ? "]" : "", port);
  std::fflush(stdout);
  if (a.host != "127.0.0.1" && a.host != "localhost" && a.host != "::1") {
    std::fprintf(stderr, "postbox serve: listening on %s: anyone who can reach it can use the explorer\n",
                 a.host.c_str());
  }
  const bool ok = server.run();
  served.store(true, std::memory_order_release);  // pairs with the waiter's acquire: run() is over
  pthread_kill(waiter.native_handle(), SIGTERM);  // wakes the waiter if no signal came
  waiter.join();
  if (!ok) throw InputError("cannot serve on " + a.host + ":" + std::to_string(port));
}

}  // namespace

void register_serve(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* sub = app.add_subcommand(
      "serve",
      "Serve the explorer: an interactive page of tree shapes, the postal model, emulated runs and\n"
      "this machine, with a JSON API under /api (docs/explorer.md). Open the printed address.");
  sub->add_option("--port", args->port, "TCP port, 0 to 65535; 0 picks a free one (printed)")
      ->capture_default_str();
  sub->add_option("--host", args->host,
                  "Address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 opens it to the network)")
      ->capture_default_str();
  sub->callback([args] { run_serve(*args); });
}

}  // namespace postbox::cli
