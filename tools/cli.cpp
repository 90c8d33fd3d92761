#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>
#include <system_error>

#include "cli.hpp"
#include "cluster_cli.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/barrier/version.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"

// The command-line tool's shared pieces (cli.hpp) and its driver, run_main(); main.cpp calls it,
// and so does the CLI fuzz target (tests/fuzz).
namespace postbox::cli {
namespace {
int g_exit_code = 0;
bool g_dry_run = false;
std::FILE* g_err = stderr;
std::vector<std::string> g_notes;
}  // namespace
void set_exit_code(int code) { g_exit_code = code; }
void note(std::string line) { g_notes.push_back(std::move(line)); }
int exit_code() { return g_exit_code; }
void set_dry_run(bool on) { g_dry_run = on; }
bool dry_run() { return g_dry_run; }

void print_json(const nlohmann::json& j) { std::cout << j.dump(2) << '\n'; }

int parse_positive(const std::string& name, const std::string& text, int hi) {
  return static_cast<int>(parse_int(text, "--" + name, 1, hi));
}

RanksMode parse_ranks_option(const std::string& text) {
  try {
    return parse_ranks_mode(text);
  } catch (const InputError&) {
    throw InputError("--ranks must be threads, fibers or auto, got '" + text + "'");
  }
}
}  // namespace postbox::cli

namespace postbox::cli {
namespace {

int fail(const std::string& message) {
  std::fflush(stdout);
#ifdef POSTBOX_HAVE_MPI
  // Under mpirun: one line for the whole job, printed by process 0 (cluster_cli.hpp).
  if (mpi::active()) {
    const std::string line = mpi::fail(one_line(message));
    if (!line.empty()) std::fprintf(g_err, "postbox: error: %s\n", line.c_str());
    return 2;
  }
#endif
  std::fprintf(g_err, "postbox: error: %s\n", one_line(message).c_str());
  return 2;
}

// --help and --version print once per job under mpirun.
int print_help(const CLI::App& app, const CLI::Error& e) {
#ifdef POSTBOX_HAVE_MPI
  if (mpi::active() && mpi::process() != 0) return 0;
#endif
  return app.exit(e);
}

// How far the leading words of argv go down the command tree: the deepest command they name,
// its path ("postbox plan"), and the first word that names no command where one is needed.
struct Walk {
  const CLI::App* at;
  std::string path = "postbox";
  std::optional<std::string> unknown;
};

std::string subcommand_names(const CLI::App& app) {
  std::string known;
  for (const CLI::App* sub : app.get_subcommands({})) known += (known.empty() ? "" : ", ") + sub->get_name();
  return known;
}

// CLI11 says "A subcommand is required" for `postbox nosuch`; name the word instead.
Walk walk_commands(const CLI::App& app, int argc, char** argv) {
  Walk w{&app, "postbox", std::nullopt};
  for (int i = 1; i < argc && w.at->get_require_subcommand_min() > 0; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') break;
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : w.at->get_subcommands({}))
      if (sub->get_name() == word) next = sub;
    if (next == nullptr) {
      w.unknown = "unknown command '" + word + "' for '" + w.path + "' (known: " + subcommand_names(*w.at) + ")";
      break;
    }
    w.path += " " + word;
    w.at = next;
  }
  return w;
}

// CLI11's parse errors, reworded where they would name nothing the user typed: a command
// without its subcommand, and unexpected words (CLI11 joins them with spaces, so an empty word
// vanished from the message: each is quoted here).
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e, const Walk& w) {
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && w.at->get_require_subcommand_min() > 0 &&
      std::string(e.what()).rfind("A subcommand is required", 0) == 0)
    return "'" + w.path + "' needs a subcommand: " + subcommand_names(*w.at) + " (see --help)";
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    std::string words;
    for (const std::string& x : app.remaining(true)) words += (words.empty() ? "'" : " '") + x + "'";
    if (!words.empty()) return "unexpected argument " + words + " (see --help)";
  }
  return std::string(e.what()) + " (see --help)";
}

// Output that could not be written is an error, not a silent exit 0 (a full disk, /dev/full).
int check_stdout(int code) {
  std::cout.flush();
  const bool bad = !std::cout.good() || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!bad) return code;
  const int err = errno;
  std::fprintf(g_err, "postbox: error: cannot write to standard output: %s\n", std::strerror(err != 0 ? err : EIO));
  return 2;
}

// An option given with an empty value is refused for every command, so "" never means "not
// given" (nor a default).
void refuse_empty_values(CLI::App& app) {
  const CLI::Validator non_empty([](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); },
                                 "", "non-empty");
  for (CLI::Option* o : app.get_options({}))
    if (o->get_type_size_min() > 0 && o->get_name() != "--help") o->check(non_empty);
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

// Options whose values the commands read as text and parse themselves (so that every number
// follows parse.hpp's one leniency rule) would show CLI11's "TEXT" in --help: each option name
// has one placeholder here, whichever command takes it. An option a command names itself
// (type_name) keeps its own. A test (cli.help.no_text_placeholder) reads every --help.
void name_placeholders(CLI::App& app) {
  static const std::map<std::string, std::string> kPlaceholder = {
      {"--algo", "ALGO"},     {"--b", "WIDTH"},        {"--bytes", "B"},         {"--goal", "FILE"},
      {"--h", "HOPS"},        {"--host", "ADDRESS"},   {"--impl", "NAME,..."},   {"--iters", "N"},
      {"--k-max", "K"},       {"--L", "BYTES"},        {"--l", "BYTES"},         {"--machine", "MACHINE"},
      {"--mesh", "RxC"},      {"--op", "OP"},          {"--outer", "N"},         {"--p", "N"},
      {"--param", "NAME=FROM:TO:STEP"},                {"--peer", "R"},          {"--plot", "FILE"},
      {"--port", "PORT"},     {"--root", "R"},         {"--rounds", "N"},        {"--runs", "N"},
      {"--s", "S"},           {"--sends", "nb|b"},     {"--settle", "SECONDS"},  {"--sizes", "BYTES,..."},
      {"--switching", "wh|sf"}, {"--threads", "T"},    {"--trace", "FILE"},      {"--trials", "N"},
      {"--target-ms", "MS"},  {"--format", "FORMAT"},  {"--file", "FILE"},       {"--lambda", "L"},
      {"--n", "N"},           {"--max-floor", "N"},    {"--r", "R"},             {"--t", "T"},
      {"--n-max", "N"},       {"--svg", "FILE"},
  };
  for (CLI::Option* o : app.get_options({})) {
    if (o->get_type_name() != "TEXT") continue;
    const auto it = kPlaceholder.find(o->get_name());
    if (it != kPlaceholder.end()) o->type_name(it->second);
  }
  for (CLI::App* sub : app.get_subcommands({})) name_placeholders(*sub);
}

}  // namespace

// run_main() after MPI start-up: parse and run the command.
int run_parsed(int argc, char** argv);

std::unique_ptr<CLI::App> make_app() {
  auto app = std::make_unique<CLI::App>(
      "postbox: collective communication and barriers on shared-memory SMP machines,\n"
      "after the postal model (Bruck et al.), the send/receive model (Cordsen et al.) and the\n"
      "C3 model (Hambrusch & Khokhar). Run 'postbox SUBCOMMAND --help' for each subcommand.\n"
      "Exit status: 0 success; 1 a check failed (run --verify, plan check, calibrate: see each\n"
      "command); 2 bad input, with one line on stderr naming it.",
      "postbox");
  app->set_version_flag("--version", postbox::version());
  app->require_subcommand(1);
  app->fallthrough(false);
  register_topo(*app);
  register_ping(*app);
  register_model(*app);
  register_tree(*app);
  register_run(*app);
  register_plan(*app);
  register_c3(*app);
  register_sim(*app);
  register_sweep(*app);
  register_calibrate(*app);
  register_bench(*app);
  register_serve(*app);
  refuse_empty_values(*app);
  name_placeholders(*app);
  return app;
}

int run_main(int argc, char** argv, std::FILE* err) {
  g_exit_code = 0;
  g_notes.clear();
  g_err = err;
#ifdef POSTBOX_HAVE_MPI
  // `run` under mpirun is one job across the processes (cluster_cli.hpp); fails before parsing
  // only when the MPI library lacks MPI_THREAD_MULTIPLE.
  std::optional<mpi::Scope> scope;
  try {
    scope.emplace(&argc, &argv);
  } catch (const std::runtime_error& e) {
    std::fprintf(g_err, "postbox: error: %s\n", one_line(e.what()).c_str());
    return 2;
  }
#endif
  const int code = run_parsed(argc, argv);
#ifdef POSTBOX_HAVE_MPI
  // Paths that never reached the agreement (--help, --list) still take part in it, so that a
  // process refused elsewhere does not wait for them.
  std::string fingerprint;
  for (int i = 1; i < argc; ++i) fingerprint += std::string(argv[i]) + '\0';
  if (const auto problem = mpi::settle(fingerprint)) {
    if (!problem->empty()) std::fprintf(g_err, "postbox: error: %s\n", problem->c_str());
    return 2;
  }
#endif
  return code;
}

int run_parsed(int argc, char** argv) {
  const std::unique_ptr<CLI::App> owned = make_app();
  CLI::App& app = *owned;
  const Walk walk = walk_commands(app, argc, argv);
  if (walk.unknown) return fail(*walk.unknown);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return check_stdout(print_help(app, e));
  } catch (const CLI::CallForAllHelp& e) {
    return check_stdout(print_help(app, e));
  } catch (const CLI::CallForVersion& e) {
    return check_stdout(print_help(app, e));
  } catch (const CLI::ParseError& e) {
    return fail(parse_error_message(app, e, walk));
  } catch (const InputError& e) {
    return fail(frontend::error_line(e));
  } catch (const std::bad_alloc&) {
    return fail("out of memory: the request needs more memory than this process can have (see the limits in --help)");
  } catch (const std::system_error& e) {
    return fail(std::string("the system refused: ") + e.what());
  }
  const int code = check_stdout(exit_code());
  if (code != 2) {
    for (const std::string& line : g_notes) std::fprintf(g_err, "%s\n", line.c_str());
  }
  g_notes.clear();
  return code;
}

}  // namespace postbox::cli
