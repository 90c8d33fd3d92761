// Grammar-driven fuzzer of the CLI's option parsing. Half the command lines are
// random options from each subcommand's own option table (make_app(), so a new option is fuzzed
// without listing it here) with hostile values; the other half are valid, cheap lines (kBases)
// with one or two mutations. Each runs in-process: in dry-run mode (cli.hpp: parse and check,
// then stop before the work), or, when every number in it is small and its paths are fixed
// ones, for real every other time. The contract of --help: exit 0, 1 or 2; exit 2 with exactly
// one stderr line "postbox: error: ..." (at most 200 characters after the prefix) that names
// what the mutation touched (an option given or dropped, a value typed: the expectation comes
// from the mutation, not from the output); no exception escapes run_main(); no run takes longer
// than --case-seconds (SIGALRM); memory is capped (RLIMIT_AS), so a blow-up is bad_alloc, exit 2;
// a real `run` never exits 1 (a wrong result).
//
//   postbox_fuzz_cli [--seed N] [--runs N] [--seconds S] [--case-seconds S]
// Prints one summary line; exit 1 and the command line on the first violation.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cli.hpp"
#include "postbox/runtime/check.hpp"

namespace {

struct Command {
  std::vector<std::string> path;  // e.g. {"model", "fibo"}
  std::vector<std::string> options;  // long names with "--"
  std::vector<bool> takes_value;
  std::vector<std::string> subcommands;  // a command that needs one of these (plan, model)
};

void collect(CLI::App& app, std::vector<std::string> path, std::vector<Command>& out) {
  const auto subs = app.get_subcommands({});
  if (!path.empty()) {
    Command c{path, {}, {}, {}};
    if (app.get_require_subcommand_min() > 0)
      for (CLI::App* s : subs) c.subcommands.push_back(s->get_name());
    for (const CLI::Option* o : app.get_options({})) {
      for (const std::string& n : o->get_lnames()) {
        c.options.push_back("--" + n);
        c.takes_value.push_back(o->get_type_size_min() > 0);
      }
    }
    out.push_back(std::move(c));
  }
  for (CLI::App* s : subs) {
    auto p = path;
    p.push_back(s->get_name());
    collect(*s, p, out);
  }
}

// Values a hostile user types: every class of value the CLI once mishandled (radix prefixes,
// overflow, nan/inf, tiny/huge reals, huge dims, empty list elements, special files) plus valid
// words of the domain, so that parsing gets past the first option.
const std::vector<std::string> kValues = {
    "0", "1", "2", "3", "4", "8", "16", "64", "100", "-1", "-3", "010", "0x10", "08", "+5", " 4", "4 ", "1.5", "0.4",
    "2147483647", "2147483648", "4294967298", "9223372036854775807", "9223372036854775808", "18446744073709551616",
    "-9223372036854775809", "1e308", "1e-300", "1e300", "nan", "-nan", "inf", "-inf", "1/0", "9/5", "-1/2", "5/0",
    "3/2", "0/0", "1:2:1", "1.5:3.5:1", "1:1e-300:2", "0:10", "1,,2", ",", "1,2,3", "0-2147483647", "0-3", "3-0",
    "100000x100000", "5213847x13009525x1257271x4553488x12375613", "10x10", "4x4x4", "0x0", "x", "16777216",
    "33000", "65536", "1000000000000", "1073741824", "abc", "-", "--", "\t", "\xff\xfe", "/dev/full", "/etc",
    "/nonexistent/f", "/dev/null", "1\n2", "a\rb", "bcast", "reduce", "allreduce", "gather", "s2p", "one-to-all", "all-to-one",
    "all-to-all", "barrier", "binomial", "flat", "fibo", "lambda", "binary", "kary:4", "kary:1", "kary:0",
    "hier:fibo,binomial", "hier:", "br-xy-source", "1-lev-dir", "2-lev-dir", "delta", "paragon", "t3d", "manna",
    "local", "postal:2", "postal:nan", "sr:1:3", "sr:0:0", "logp:5:1:2:0.01", "logp:1:1:100:0", "compact",
    "scatter", "pack:2 core:2 pu:2", "core:65536 pu:1", "pu:0", "json", "goal", "dot", "svg", "ascii", "diag-right",
    "random", "column", "all", "p=4", "bytes=1:4:1"};

// Valid, cheap command lines (each exits 0 and runs in well under a second); the second half
// of the lines are one of these with one or two mutations, so that the checks behind the first
// refusal get exercised and real runs do work.
const std::vector<std::vector<std::string>> kBases = {
    {"run", "--op", "bcast", "--algo", "binomial", "--p", "4", "--verify"},
    {"run", "--op", "allreduce", "--algo", "recursive-doubling", "--p", "4", "--bytes", "64", "--verify"},
    {"run", "--op", "barrier", "--algo", "dissemination", "--p", "3"},
    {"run", "--op", "s2p", "--algo", "br-lin", "--p", "4", "--sources", "2", "--bytes", "8", "--verify"},
    {"run", "--op", "all-to-all", "--algo", "1-lev-dir", "--p", "4", "--bytes", "8", "--verify"},
    {"sim", "--op", "bcast", "--algo", "fibo", "--p", "16", "--machine", "sr:1:3"},
    {"sim", "--machine", "delta", "--op", "one-to-all", "--algo", "2-lev-rec", "--p", "16", "--bytes", "64"},
    {"tree", "--shape", "fibo", "--p", "16", "--s", "1", "--r", "3", "--format", "json"},
    {"model", "postal", "--lambda", "2", "--n", "16"},
    {"model", "fibo", "--s", "1", "--r", "2", "--p", "10"},
    {"model", "alpha-ranges", "--lambda", "2", "--n-max", "10"},
    {"c3", "--op", "all-to-all", "--algo", "2-lev-sq", "--p", "16", "--L", "64"},
    {"plan", "export", "--op", "bcast", "--algo", "binomial", "--p", "8", "--format", "json"},
    {"plan", "check", "--op", "reduce", "--algo", "binomial", "--p", "8"},
    {"topo", "--synthetic", "pack:2 core:2 pu:2", "--p", "8", "--places", "scatter"},
    {"sweep", "--machine", "postal:2", "--param", "p=2:8:2", "--op", "bcast", "--algo", "binomial"},
    {"calibrate", "--machine", "postal:2", "--sizes", "16,64"}};

std::string mutate(std::string v, std::mt19937_64& rng) {
  switch (rng() % 8) {
    case 0: return v + v;
    case 1: return v.empty() ? v : v.substr(0, rng() % v.size());
    case 2: return "-" + v;
    case 3: return v + std::string(1, static_cast<char>(' ' + rng() % 95));
    default: return v;
  }
}

volatile std::sig_atomic_t g_in_case = 0;
char g_line[4096];
int g_report_fd = 2;  // the fuzzer's own stderr; fd 2 is /dev/null while a case runs for real

void on_alarm(int) {
  const char msg[] = "fuzz_cli: VIOLATION: no answer within the time bound: ";
  (void)!write(g_report_fd, msg, sizeof msg - 1);
  (void)!write(g_report_fd, g_line, std::strlen(g_line));
  (void)!write(g_report_fd, "\n", 1);
  _exit(1);
}

std::string quoted(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "'" : " '") + a + "'";
  return s;
}

long arg_long(int argc, char** argv, const char* name, long def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return def;
}

// What one generated command line holds, recorded as it is built: the expectation for its
// error line comes from here, never from the output.
struct Made {
  std::vector<std::string> given;   // option names as typed ("--p")
  std::vector<std::string> values;  // values as typed, stray words included
  std::vector<std::string> dropped;  // options a mutation took out of a valid line
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.'; }

// `needle` occurs in `hay` not glued to a longer word ("--p" is not in "--peer", "0" not in "4096").
bool names(const std::string& hay, const std::string& needle) {
  if (needle.empty()) return false;
  for (std::size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) {
    const bool left = at == 0 || !word_char(hay[at - 1]) || !word_char(needle.front());
    const std::size_t end = at + needle.size();
    const bool right = end == hay.size() || !word_char(hay[end]) || !word_char(needle.back());
    if (left && right) return true;
  }
  return false;
}

// The error line must name what the mutation made wrong: an option it gave or a value it typed
// (as typed: the CLI prints a value on one line, so a newline reads as a space); or an option it
// did not give, when the line says that one is required; or, for a command that needs a
// subcommand, the command and one of its subcommands.
bool names_the_problem(const std::string& error, const Command& c, const Made& m) {
  for (const auto& o : m.given)
    if (names(error, o)) return true;
  for (std::string v : m.values) {
    for (char& ch : v)
      if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';  // the echo rule (check.hpp: one_line)
    if (names(error, v) || error.find("'" + v + "'") != std::string::npos) return true;
    // A value longer than the echo rule's word is echoed as its head and tail (check.hpp).
    if (v.size() + 2 > postbox::kMaxEchoedWord && v.find(' ') == std::string::npos &&
        (error.find(postbox::one_line(v)) != std::string::npos ||
         error.find(postbox::one_line("'" + v + "'")) != std::string::npos))
      return true;
  }
  for (const auto& o : m.dropped)
    if (names(error, o)) return true;
  if (error.find("required") != std::string::npos)
    for (const auto& o : c.options)
      if (names(error, o)) return true;
  // A command that runs only under an MPI launcher (bench cluster) names itself and the launcher:
  // the problem is where it runs, not an option.
  if (error.find("mpirun") != std::string::npos && names(error, c.path.back())) return true;
  if (!c.subcommands.empty() && names(error, c.path.back()))
    for (const auto& sub : c.subcommands)
      if (names(error, sub)) return true;
  return false;
}

// Commands that may run for real (not dry) when their values are small: each finishes in well
// under a second at p and bytes <= kCheapNumber. Left out: measurements (ping, calibrate on
// this machine, bench) and the server.
bool may_run(const Command& c) {
  const std::string& top = c.path.front();
  for (const char* name : {"run", "sim", "tree", "model", "c3", "plan", "topo", "sweep"})
    if (top == name) return true;
  return top == "calibrate";  // only with --machine (checked by the caller)
}

constexpr long kCheapNumber = 64;

// Every run of digits in the value is at most kCheapNumber ("1e308" has 308: not cheap) and a
// path is one of the few fixed ones (a real run may create a relative file in the scratch
// directory, never a new file elsewhere).
bool cheap_value(const std::string& v) {
  if (!v.empty() && v.front() == '/')
    return v == "/dev/null" || v == "/dev/full" || v == "/etc" || v == "/nonexistent/f";
  for (std::size_t i = 0; i < v.size();) {
    if (std::isdigit(static_cast<unsigned char>(v[i])) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < v.size() && std::isdigit(static_cast<unsigned char>(v[j])) != 0) ++j;
    if (j - i > 3 || std::stol(v.substr(i, j - i)) > kCheapNumber) return false;
    i = j;
  }
  return true;
}

// One option of c with a random value (or none, or a missing one) at the end of args.
void add_option(const Command& c, std::mt19937_64& rng, std::vector<std::string>& args, Made& made) {
  const std::size_t o = rng() % c.options.size();
  const std::string v = mutate(kValues[rng() % kValues.size()], rng);
  made.given.push_back(c.options[o]);
  if (!c.takes_value[o]) {
    args.push_back(c.options[o]);
  } else if (rng() % 4 == 0) {
    args.push_back(c.options[o] + "=" + v);
    made.values.push_back(v);
  } else {
    args.push_back(c.options[o]);
    if (rng() % 16 != 0) {  // sometimes the value is missing
      args.push_back(v);
      made.values.push_back(v);
    }
  }
}

// A valid base line with one or two mutations: a value replaced, an option added, or an
// option dropped. Only what the mutations touched goes into `made` (the base's own options
// are not what is wrong), and a dropped option into `made.dropped`.
const Command& mutate_base(const std::vector<Command>& commands, std::mt19937_64& rng, std::vector<std::string>& args,
                           Made& made) {
  const std::vector<std::string>& base = kBases[rng() % kBases.size()];
  const Command* c = nullptr;
  for (const Command& k : commands)
    if (std::equal(k.path.begin(), k.path.end(), base.begin(), base.begin() + static_cast<long>(std::min(k.path.size(), base.size()))) &&
        k.subcommands.empty() && (c == nullptr || k.path.size() > c->path.size()))
      c = &k;
  if (c == nullptr) std::abort();  // a base names no command: fix kBases
  // The base's options as (name, value or nullopt).
  std::vector<std::pair<std::string, std::optional<std::string>>> opts;
  for (std::size_t i = c->path.size(); i < base.size(); ++i) {
    if (i + 1 < base.size() && base[i + 1].rfind("--", 0) != 0) {
      opts.emplace_back(base[i], base[i + 1]);
      ++i;
    } else {
      opts.emplace_back(base[i], std::nullopt);
    }
  }
  std::vector<std::string> added;
  const int mutations = 1 + static_cast<int>(rng() % 2);
  for (int m = 0; m < mutations && !opts.empty(); ++m) {
    const std::size_t o = rng() % opts.size();
    switch (rng() % 3) {
      case 0:  // replace a value
        if (opts[o].second) {
          opts[o].second = mutate(kValues[rng() % kValues.size()], rng);
          made.given.push_back(opts[o].first);
          made.values.push_back(*opts[o].second);
        }
        break;
      case 1:  // drop an option
        made.dropped.push_back(opts[o].first);
        opts.erase(opts.begin() + static_cast<long>(o));
        break;
      default: {  // add one
        std::vector<std::string> tail;
        add_option(*c, rng, tail, made);
        added.insert(added.end(), tail.begin(), tail.end());
      }
    }
  }
  args.insert(args.end(), c->path.begin(), c->path.end());
  for (const auto& [name, value] : opts) {
    args.push_back(name);
    if (value) args.push_back(*value);
  }
  args.insert(args.end(), added.begin(), added.end());
  return *c;
}

}  // namespace

int main(int argc, char** argv) {
  const auto seed = static_cast<std::uint64_t>(arg_long(argc, argv, "--seed", 1));
  const long runs = arg_long(argc, argv, "--runs", 0);
  const long seconds = arg_long(argc, argv, "--seconds", runs > 0 ? 0 : 10);
  const auto case_seconds = static_cast<unsigned>(arg_long(argc, argv, "--case-seconds", 10));

  rlimit as{};
  as.rlim_cur = as.rlim_max = 8ULL << 30;  // a blow-up must become bad_alloc (exit 2), not take the box
  setrlimit(RLIMIT_AS, &as);
  std::signal(SIGALRM, on_alarm);
  if (std::freopen("/dev/null", "w", stdout) == nullptr) return 2;
  // Real runs work in a scratch directory (relative --out/--trace/--plot files land there) with
  // the cache there too (no --save reaches the user's), and fixed latencies instead of a
  // calibration measurement (runtime/calibrate.hpp: the environment comes first).
  std::string scratch = (std::filesystem::temp_directory_path() / "postbox_fuzz_cli.XXXXXX").string();
  if (mkdtemp(scratch.data()) == nullptr || chdir(scratch.c_str()) != 0) return 2;
  setenv("HOME", scratch.c_str(), 1);
  setenv("XDG_CACHE_HOME", scratch.c_str(), 1);
  setenv("POSTBOX_S_NS", "200", 1);
  setenv("POSTBOX_R_NS", "300", 1);
  g_report_fd = dup(2);
  const int devnull = open("/dev/null", O_WRONLY);
  if (g_report_fd < 0 || devnull < 0) return 2;

  std::vector<Command> commands;
  collect(*postbox::cli::make_app(), {}, commands);
  std::mt19937_64 rng(seed);
  long n = 0, real = 0, real_ok = 0, by_code[3] = {0, 0, 0};
  const auto start = std::chrono::steady_clock::now();
  auto done = [&] {
    if (runs > 0 && n >= runs) return true;
    return seconds > 0 && std::chrono::steady_clock::now() - start >= std::chrono::seconds(seconds);
  };
  while (!done()) {
    std::vector<std::string> args{"postbox"};
    Made made;
    const Command* cp = nullptr;
    if (rng() % 2 == 0) {
      cp = &commands[rng() % commands.size()];
      args.insert(args.end(), cp->path.begin(), cp->path.end());
      const int k = static_cast<int>(rng() % 6);
      for (int i = 0; i < k && !cp->options.empty(); ++i) add_option(*cp, rng, args, made);
      if (rng() % 32 == 0) {  // a stray word
        args.push_back(kValues[rng() % kValues.size()]);
        made.values.push_back(args.back());
      }
    } else {
      cp = &mutate_base(commands, rng, args, made);
    }
    const Command& c = *cp;
    const std::string line = quoted(args);
    std::snprintf(g_line, sizeof g_line, "%s", line.c_str());

    // Every other cheap line runs for real: the checks that only the work makes (threads,
    // memory, the emulator, writing files) and the exit status of the work itself.
    bool cheap = may_run(c) && rng() % 2 == 0;
    for (const auto& v : made.values) cheap = cheap && cheap_value(v);
    if (c.path.front() == "calibrate")
      cheap = cheap && std::find(made.given.begin(), made.given.end(), "--machine") != made.given.end();
    postbox::cli::set_dry_run(!cheap);
    real += cheap ? 1 : 0;

    std::vector<char*> av;
    for (auto& a : args) av.push_back(a.data());
    std::FILE* err = std::tmpfile();
    if (err == nullptr) return 2;
    int code = -1;
    std::string escaped;
    if (cheap) dup2(devnull, 2);  // what a command prints on stderr besides its error line
    alarm(case_seconds);
    try {
      code = postbox::cli::run_main(static_cast<int>(av.size()), av.data(), err);
    } catch (const std::exception& e) {
      escaped = e.what();
    } catch (...) {
      escaped = "(not a std::exception)";
    }
    alarm(0);
    if (cheap) dup2(g_report_fd, 2);
    std::clearerr(stdout);
    std::rewind(err);
    std::string text;
    for (int ch; (ch = std::fgetc(err)) != EOF;) text += static_cast<char>(ch);
    std::fclose(err);
    ++n;

    std::string problem;
    if (!escaped.empty()) {
      problem = "an exception escaped run_main (the tool would abort): " + escaped;
    } else if (code < 0 || code > 2) {
      problem = "exit " + std::to_string(code) + " is not 0, 1 or 2";
    } else if (code == 1 && cheap && c.path.front() == "run") {
      problem = "exit 1 from a real run: a collective computed a wrong result (run --verify)";
    } else if (code == 2) {
      const bool one_line = !text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1;
      if (!one_line || text.rfind("postbox: error: ", 0) != 0)
        problem = "exit 2 without exactly one error line: " + text;
      else if (text.size() - 1 - std::strlen("postbox: error: ") > 200)
        problem = "an error message of more than 200 characters: " + text;
      else if (!names_the_problem(text, c, made))
        problem = "the error line names no option or value the command line gave: " + text;
    }
    if (!problem.empty()) {
      std::fprintf(stderr, "fuzz_cli: VIOLATION (seed %llu, case %ld, %s): %s\n  command: %s\n",
                   static_cast<unsigned long long>(seed), n, cheap ? "real run" : "dry run", problem.c_str(),
                   line.c_str());
      std::filesystem::remove_all(scratch);
      return 1;
    }
    ++by_code[code];
    real_ok += cheap && code == 0 ? 1 : 0;
  }
  std::filesystem::remove_all(scratch);
  std::fprintf(stderr,
               "fuzz_cli: seed %llu: %ld command lines over %zu commands (%ld run for real, %ld of them to exit 0): "
               "exit 0: %ld, 1: %ld, 2: %ld; no violation\n",
               static_cast<unsigned long long>(seed), n, commands.size(), real, real_ok, by_code[0], by_code[1],
               by_code[2]);
  return 0;
}
