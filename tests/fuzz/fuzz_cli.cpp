// Grammar-driven fuzzer of the CLI's option parsing (issue 16). It builds command lines from each
// subcommand's own option table (make_app(), so a new option is fuzzed without listing it here)
// and hostile values, runs them in-process in dry-run mode (cli.hpp: parse and check, then stop
// before the work), and checks the contract of --help: exit 0, 1 or 2; exit 2 with exactly one
// stderr line "postbox: error: ..."; no exception escapes run_main(); no run takes longer than
// --case-seconds (SIGALRM); memory is capped (RLIMIT_AS), so a blow-up is bad_alloc, exit 2.
//
//   postbox_fuzz_cli [--seed N] [--runs N] [--seconds S] [--case-seconds S]
// Prints one summary line; exit 1 and the command line on the first violation.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "cli.hpp"

namespace {

struct Command {
  std::vector<std::string> path;  // e.g. {"model", "fibo"}
  std::vector<std::string> options;  // long names with "--"
  std::vector<bool> takes_value;
};

void collect(CLI::App& app, std::vector<std::string> path, std::vector<Command>& out) {
  const auto subs = app.get_subcommands({});
  if (!path.empty()) {
    Command c{path, {}, {}};
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

// Values a hostile user types: every issue-16 class (radix prefixes, overflow, nan/inf,
// tiny/huge reals, huge dims, empty list elements, special files) plus valid words of the
// domain, so that parsing gets past the first option.
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

void on_alarm(int) {
  const char msg[] = "fuzz_cli: VIOLATION: no answer within the time bound: ";
  (void)!write(2, msg, sizeof msg - 1);
  (void)!write(2, g_line, std::strlen(g_line));
  (void)!write(2, "\n", 1);
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
  postbox::cli::set_dry_run(true);

  std::vector<Command> commands;
  collect(*postbox::cli::make_app(), {}, commands);
  std::mt19937_64 rng(seed);
  long n = 0, by_code[3] = {0, 0, 0};
  const auto start = std::chrono::steady_clock::now();
  auto done = [&] {
    if (runs > 0 && n >= runs) return true;
    return seconds > 0 && std::chrono::steady_clock::now() - start >= std::chrono::seconds(seconds);
  };
  while (!done()) {
    const Command& c = commands[rng() % commands.size()];
    std::vector<std::string> args{"postbox"};
    args.insert(args.end(), c.path.begin(), c.path.end());
    const int k = static_cast<int>(rng() % 6);
    for (int i = 0; i < k && !c.options.empty(); ++i) {
      const std::size_t o = rng() % c.options.size();
      std::string v = mutate(kValues[rng() % kValues.size()], rng);
      if (!c.takes_value[o]) {
        args.push_back(c.options[o]);
      } else if (rng() % 4 == 0) {
        args.push_back(c.options[o] + "=" + v);
      } else {
        args.push_back(c.options[o]);
        if (rng() % 16 != 0) args.push_back(v);  // sometimes the value is missing
      }
    }
    if (rng() % 32 == 0) args.push_back(kValues[rng() % kValues.size()]);  // a stray word
    const std::string line = quoted(args);
    std::snprintf(g_line, sizeof g_line, "%s", line.c_str());

    std::vector<char*> av;
    for (auto& a : args) av.push_back(a.data());
    std::FILE* err = std::tmpfile();
    if (err == nullptr) return 2;
    int code = -1;
    std::string escaped;
    alarm(case_seconds);
    try {
      code = postbox::cli::run_main(static_cast<int>(av.size()), av.data(), err);
    } catch (const std::exception& e) {
      escaped = e.what();
    } catch (...) {
      escaped = "(not a std::exception)";
    }
    alarm(0);
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
    } else if (code == 2) {
      const bool one_line = !text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1;
      if (!one_line || text.rfind("postbox: error: ", 0) != 0) problem = "exit 2 without exactly one error line: " + text;
    }
    if (!problem.empty()) {
      std::fprintf(stderr, "fuzz_cli: VIOLATION (seed %llu, case %ld): %s\n  command: %s\n",
                   static_cast<unsigned long long>(seed), n, problem.c_str(), line.c_str());
      return 1;
    }
    ++by_code[code];
  }
  std::fprintf(stderr, "fuzz_cli: seed %llu: %ld command lines over %zu commands: exit 0: %ld, 1: %ld, 2: %ld; no violation\n",
               static_cast<unsigned long long>(seed), n, commands.size(), by_code[0], by_code[1], by_code[2]);
  return 0;
}
