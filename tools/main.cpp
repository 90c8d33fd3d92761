#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>

#include "cli.hpp"
#include "postbox/barrier/version.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::cli {
namespace {
int g_exit_code = 0;
}
void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

void print_json(const nlohmann::json& j) { std::cout << j.dump(2) << '\n'; }

int parse_positive(const std::string& name, const std::string& text) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    throw InputError("--" + name + " must be an integer, got '" + text + "'");
  }
  if (used != text.size()) throw InputError("--" + name + " must be an integer, got '" + text + "'");
  if (v < 1) throw InputError("--" + name + " must be at least 1, got " + text);
  if (v > 1'000'000'000LL) throw InputError("--" + name + " is too large: " + text);
  return static_cast<int>(v);
}
}  // namespace postbox::cli

int main(int argc, char** argv) {
  // The emulator's arrays (10^7 ranks: GiBs) run about 2x faster on transparent huge pages (docs/emulator.md), and
  // glibc reads the tunable that puts its heap on them only at start-up: sim and sweep re-run
  // themselves once with it set (unless the caller set GLIBC_TUNABLES).
  if (argc > 1 && (std::strcmp(argv[1], "sim") == 0 || std::strcmp(argv[1], "sweep") == 0) &&
      std::getenv("GLIBC_TUNABLES") == nullptr) {
    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: then run without
  }
  CLI::App app{
      "postbox: collective communication and barriers on shared-memory SMP machines,\n"
      "after the postal model (Bruck et al.), the send/receive model (Cordsen et al.) and the\n"
      "C3 model (Hambrusch & Khokhar). Run 'postbox SUBCOMMAND --help' for each subcommand.",
      "postbox"};
  app.set_version_flag("--version", postbox::version());
  app.require_subcommand(1);
  app.fallthrough(false);
  postbox::cli::register_topo(app);
  postbox::cli::register_ping(app);
  postbox::cli::register_model(app);
  postbox::cli::register_tree(app);
  postbox::cli::register_run(app);
  postbox::cli::register_plan(app);
  postbox::cli::register_c3(app);
  postbox::cli::register_sim(app);
  postbox::cli::register_sweep(app);
  postbox::cli::register_calibrate(app);
  postbox::cli::register_bench(app);
  postbox::cli::register_serve(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "postbox: error: %s (see --help)\n", e.what());
    return 2;
  } catch (const postbox::InputError& e) {
    std::fprintf(stderr, "postbox: error: %s\n", e.what());
    return 2;
  }
  return postbox::cli::exit_code();
}
