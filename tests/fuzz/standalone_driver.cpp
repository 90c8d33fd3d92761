// A libFuzzer stand-in for trees built without libFuzzer (the GCC ASan + UBSan tree of
// `./run.sh test`): it links with one target's LLVMFuzzerTestOneInput, replays every file of the
// corpus directories given, then feeds seeded mutations of them (libFuzzer's kinds: byte and bit
// flips, inserts, erases, copies, splices of two inputs, ASCII integers and tokens that break
// parsers). No coverage guidance: the mutations are blind, the seed fixes them.
//
// Command line (libFuzzer's spelling, so one ctest line serves either build):
//   postbox_fuzz_T [-runs=N] [-max_total_time=S] [-timeout=S] [-seed=K] [-max_len=L] DIR|FILE...
// -runs: mutated inputs after the replay (default 1000); -max_total_time: stop mutating after S
// seconds (default 10); -timeout: one input running longer than S seconds is a hang (default
// 10); -seed: the mutations' seed (default 1); -max_len: longest mutated input (default 4096).
// Other -flags are refused.
//
// Exit 0 when every input returned. A crash, an abort (a target's violation(), an exception
// escaping), a hang, or an ASan/UBSan report writes the input to ./crash-<target>-<seed>-<n>,
// names it on stderr and exits non-zero.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Sanitizer runtimes call this before they exit on an error report (weak: absent without them).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace {

using Bytes = std::vector<std::uint8_t>;

// The input now running, for the crash handlers (written only between inputs).
const std::uint8_t* g_data = nullptr;
std::size_t g_size = 0;
char g_crash_path[512] = "";
volatile sig_atomic_t g_dumped = 0;

// Async-signal-safe: open, write, close.
void write_all(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w <= 0) return;
    c += w;
    n -= static_cast<std::size_t>(w);
  }
}
void say(const char* s) { write_all(2, s, std::strlen(s)); }

void dump_input() {
  if (g_dumped != 0 || g_crash_path[0] == '\0') return;
  g_dumped = 1;
  const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (g_data != nullptr) write_all(fd, g_data, g_size);
    ::close(fd);
  }
  say("fuzz driver: the input that failed is in ");
  say(g_crash_path);
  say("\n");
}

void on_signal(int sig) {
  if (sig == SIGALRM) say("fuzz driver: an input ran past -timeout (a hang)\n");
  dump_input();
  ::signal(sig, SIG_DFL);
  if (sig == SIGALRM) ::_exit(70);
  ::raise(sig);
}

[[noreturn]] void usage(const std::string& what) {
  std::fprintf(stderr, "fuzz driver: %s\n", what.c_str());
  std::exit(2);
}

std::uint64_t flag_value(std::string_view arg, std::string_view name) {
  const std::string_view v = arg.substr(name.size());
  if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string_view::npos)
    usage("'" + std::string(arg) + "': the value must be a whole number");
  return std::stoull(std::string(v));
}

Bytes read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) usage("cannot read '" + path.string() + "'");
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Text that breaks parsers: numbers at type limits, non-finite words, separators, non-ASCII
// (a lone continuation byte, a 2-, 3- and 4-byte UTF-8 code point, an overlong form), quotes.
const std::vector<std::string>& tokens() {
  static const std::vector<std::string> t = {
      "0", "-0", "1", "-1", "2", "127", "128", "255", "256", "65535", "65536", "2147483647", "2147483648",
      "-2147483648", "4294967295", "4294967296", "4294967297", "9223372036854775807", "9223372036854775808",
      "-9223372036854775809", "18446744073709551616", "1e308", "1e309", "-1e308", "1e-320", "0.5", "1.8", "9/5",
      "1/0", "0/0", "nan", "inf", "-inf", "0x10", "010", "+3", ".", "..", ",", ",,", ":", "x", "X", "-", "/", " ",
      "\t", "\n", "\r\n", "\"", "'", "\\", "[", "]", "{", "}", "=", "#", "\x80", "\xc3\xa9", "\xe2\x80\xa8",
      "\xf0\x9f\x98\x80", "\xc0\x80", "\xff", std::string(1, '\0')};
  return t;
}

class Mutator {
 public:
  Mutator(std::uint64_t seed, std::size_t max_len) : rng_(seed), max_len_(max_len) {}

  Bytes mutate(const std::vector<Bytes>& corpus) {
    Bytes b = corpus[below(corpus.size())];
    const std::size_t n = 1 + below(5);
    for (std::size_t i = 0; i < n; ++i) once(b, corpus);
    if (b.size() > max_len_) b.resize(max_len_);
    return b;
  }

 private:
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng_() % n); }
  std::uint8_t byte() { return static_cast<std::uint8_t>(rng_()); }

  void insert(Bytes& b, std::string_view s) {
    const std::size_t at = below(b.size() + 1);
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), s.begin(), s.end());
  }

  void once(Bytes& b, const std::vector<Bytes>& corpus) {
    switch (below(10)) {
      case 0:  // erase a run
        if (!b.empty()) {
          const std::size_t at = below(b.size());
          const std::size_t len = 1 + below(std::min<std::size_t>(b.size() - at, 16));
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + len));
        }
        break;
      case 1:  // insert random bytes
        for (std::size_t k = 1 + below(4); k > 0; --k) insert(b, std::string(1, static_cast<char>(byte())));
        break;
      case 2:  // change a byte
        if (!b.empty()) b[below(b.size())] = byte();
        break;
      case 3:  // flip a bit
        if (!b.empty()) b[below(b.size())] ^= static_cast<std::uint8_t>(1u << below(8));
        break;
      case 4:  // copy a run elsewhere (repeats structure: nesting, long lists)
        if (!b.empty()) {
          const std::size_t at = below(b.size());
          const std::size_t len = 1 + below(std::min<std::size_t>(b.size() - at, 64));
          const Bytes run(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + len));
          const std::size_t to = below(b.size() + 1);
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(to), run.begin(), run.end());
        }
        break;
      case 5:  // splice: a prefix of this input and a suffix of another
      {
        const Bytes& other = corpus[below(corpus.size())];
        const std::size_t cut = below(b.size() + 1);
        const std::size_t from = below(other.size() + 1);
        b.resize(cut);
        b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
      case 6:  // a token
      case 7: insert(b, tokens()[below(tokens().size())]); break;
      case 8:  // replace a token-sized run by a token
        if (!b.empty()) {
          const std::size_t at = below(b.size());
          const std::size_t len = 1 + below(std::min<std::size_t>(b.size() - at, 8));
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + len));
          const std::string& t = tokens()[below(tokens().size())];
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), t.begin(), t.end());
        }
        break;
      default:  // change an ASCII integer: +-1, x2, /2, a random one, a huge one
        change_integer(b);
        break;
    }
  }

  void change_integer(Bytes& b) {
    if (b.empty()) return;
    std::size_t at = below(b.size());
    while (at < b.size() && (b[at] < '0' || b[at] > '9')) ++at;
    if (at == b.size()) return;
    std::size_t end = at;
    while (end < b.size() && end - at < 18 && b[end] >= '0' && b[end] <= '9') ++end;
    std::uint64_t v = 0;
    for (std::size_t i = at; i < end; ++i) v = v * 10 + (b[i] - '0');
    switch (below(6)) {
      case 0: ++v; break;
      case 1: --v; break;
      case 2: v *= 2; break;
      case 3: v /= 2; break;
      case 4: v = rng_() % 100000; break;
      default: v = rng_(); break;
    }
    const std::string s = std::to_string(v);
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(end));
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), s.begin(), s.end());
  }

  std::mt19937_64 rng_;
  std::size_t max_len_;
};

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t runs = 1000, seconds = 10, timeout = 10, seed = 1, max_len = 4096;
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.rfind("-runs=", 0) == 0) runs = flag_value(a, "-runs=");
    else if (a.rfind("-max_total_time=", 0) == 0) seconds = flag_value(a, "-max_total_time=");
    else if (a.rfind("-timeout=", 0) == 0) timeout = flag_value(a, "-timeout=");
    else if (a.rfind("-seed=", 0) == 0) seed = flag_value(a, "-seed=");
    else if (a.rfind("-max_len=", 0) == 0) max_len = flag_value(a, "-max_len=");
    else if (a.rfind('-', 0) == 0) usage("unknown flag '" + std::string(a) + "'");
    else inputs.emplace_back(a);
  }
  if (inputs.empty()) usage("give at least one corpus directory or file");
  if (timeout < 1) usage("-timeout must be at least 1");

  std::vector<std::filesystem::path> files;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(in, ec)) {
      for (const auto& e : std::filesystem::directory_iterator(in))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (std::filesystem::is_regular_file(in, ec)) {
      files.push_back(in);
    } else {
      usage("'" + in.string() + "' is neither a directory nor a file");
    }
  }
  std::sort(files.begin(), files.end());  // directory order is not stable
  if (files.empty()) usage("the corpus is empty");

  const std::string target = std::filesystem::path(argv[0]).filename().string();
  // A sanitizer runtime reports faults itself (its report names the stack), then calls back.
  for (int sig : {SIGABRT, SIGALRM}) ::signal(sig, on_signal);
  if (__sanitizer_set_death_callback != nullptr) {
    __sanitizer_set_death_callback(dump_input);
  } else {
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, on_signal);
  }

  std::uint64_t n = 0;
  auto run_one = [&](const Bytes& b) {
    // The target sees exactly size bytes: a copy of its own, so reading past it is ASan's.
    std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[b.size() == 0 ? 1 : b.size()]);
    if (!b.empty()) std::memcpy(copy.get(), b.data(), b.size());
    std::snprintf(g_crash_path, sizeof g_crash_path, "crash-%s-%llu-%llu", target.c_str(),
                  static_cast<unsigned long long>(seed), static_cast<unsigned long long>(n));
    g_data = copy.get();
    g_size = b.size();
    ::alarm(static_cast<unsigned>(timeout));
    LLVMFuzzerTestOneInput(copy.get(), b.size());
    ::alarm(0);
    g_data = nullptr;
    ++n;
  };

  std::vector<Bytes> corpus;
  for (const auto& f : files) corpus.push_back(read_file(f));
  for (const auto& b : corpus) run_one(b);
  const std::uint64_t replayed = n;

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::seconds(seconds);
  Mutator mutator(seed, max_len);
  std::uint64_t mutated = 0;
  for (; mutated < runs && std::chrono::steady_clock::now() < deadline; ++mutated) run_one(mutator.mutate(corpus));
  g_crash_path[0] = '\0';  // a leak report at exit names no input
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: replayed %llu corpus inputs, then %llu mutated inputs (seed %llu) in %.1f s: no crash, hang or "
              "sanitizer report\n",
              target.c_str(), static_cast<unsigned long long>(replayed), static_cast<unsigned long long>(mutated),
              static_cast<unsigned long long>(seed), took);
  return 0;
}
