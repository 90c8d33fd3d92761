// Grammar-driven fuzzer of the explorer's HTTP API, in-process: request targets built from the
// API's own index (/api lists every endpoint and the parameters it takes, so a new endpoint is
// fuzzed without listing it here), with hostile values (limits and one past them, signs, spaces,
// exponents, control characters, percent escapes, non-ASCII, 300-character words) and hostile
// query grammar (a name repeated, an empty name, an unknown name, '&&', '#', a bogus endpoint).
// Each target goes the server's way: parse_query(), then Api::handle().
//
// The contract (api.hpp, server.hpp, docs/explorer.md): the status is 200, 400 or 404 (never
// 500: a bug; 503 only for a measurement the machine spoiled); an error body is one line
// "postbox: error: MESSAGE\n" (text/plain), MESSAGE at most 200 characters; a 200 body is JSON;
// a repeated or empty name is a 400 naming it; no case takes longer than --case-seconds (a hang).
// Prints one summary line with the outcomes; exit 1 and the target on the first violation.
//
//   postbox_fuzz_api [--seed N] [--runs N] [--case-seconds S]
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "postbox/explorer/api.hpp"
#include "postbox/explorer/server.hpp"

namespace {

using postbox::explorer::Api;
using postbox::explorer::Query;
using postbox::explorer::Reply;

long arg_long(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}

struct Endpoint {
  std::string name;
  std::vector<std::string> params;
};

std::vector<Endpoint> endpoints(const Api& api) {
  const Reply index = api.handle("", {});
  std::vector<Endpoint> out;
  const nlohmann::json list = nlohmann::json::parse(index.body);
  for (const auto& e : list.at("endpoints")) {
    Endpoint ep;
    ep.name = e.at("path").get<std::string>().substr(5);  // "/api/NAME"
    for (const auto& p : e.at("params")) ep.params.push_back(p.get<std::string>());
    out.push_back(std::move(ep));
  }
  return out;
}

// Values: valid ones of every endpoint's kinds, the limits and one past them, and hostile text.
const std::vector<std::string>& values() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> out{
        "fibo", "binomial", "lambda", "greedy", "flat", "binary", "kary:3", "hier", "bcast", "allreduce", "reduce",
        "gather", "barrier", "s2p", "all-to-all", "one-to-all", "postal", "recursive-doubling", "2-lev-rc", "br-lin",
        "0", "1", "2", "3", "8", "16", "64", "100", "1000", "4096", "4097", "2048", "2049", "10000", "10001",
        "65536", "1048576", "2147483647", "2147483648", "9223372036854775807", "18446744073709551616", "-1", "-0",
        "+5", " 5", "5 ", "0x10", "010", "1e3", "1e308", "1e-320", "nan", "inf", "-inf", "0.5", "1/3", "10/3", "2.5",
        "0.001", "0.0001", "9/0", "", "postal:2", "postal:1.8", "sr:1:3", "sr:27:88", "logp:5:1:2:0.25", "delta",
        "paragon", "t3d", "manna", "cluster-example", "cluster:4x4", "cluster:8192x1", "local", "nosuch",
        "/etc/passwd", "../../profiles/delta", "4x4", "2X3", "3x5", "0x4", "row-major", "snake", "random",
        "list:0,1,2,3", "list:0,+1", "pack:2 core:2 pu:2", "core:2 pack:2 pu:1", "pu:65536", "pack:2 core:x",
        "\x1b[31mred\x1b[0m", "a\nb", "tab\there", "\xce\xbb", "\xff\xfe", std::string(300, 'x'), "%", "%zz", "%00"};
    return out;
  }();
  return v;
}

std::string encode(const std::string& s, bool raw) {
  if (raw) return s;  // '&', '#', '%' and spaces reach the query grammar as typed
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == ':' || c == '/') {
      out.push_back(static_cast<char>(c));
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

struct Case {
  std::string target;
  std::string name;   // the endpoint
  bool repeated = false;  // a name given twice
  bool empty_name = false;
};

Case make_case(std::mt19937_64& rng, const std::vector<Endpoint>& eps) {
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  Case c;
  const bool bogus = pick(40) == 0;
  const Endpoint& ep = eps[pick(eps.size())];
  c.name = bogus ? "no-such-endpoint" : ep.name;
  std::vector<std::pair<std::string, std::string>> items;
  const std::size_t k = ep.params.empty() ? 0 : pick(std::min<std::size_t>(ep.params.size(), 5) + 1);
  for (std::size_t i = 0; i < k; ++i) {
    const std::string& name = ep.params[pick(ep.params.size())];
    bool seen = false;
    for (const auto& it : items) seen = seen || it.first == name;
    if (seen) continue;
    items.emplace_back(name, values()[pick(values().size())]);
  }
  if (pick(12) == 0 && !items.empty()) {
    items.push_back(items[pick(items.size())]);  // the same name (and value) again
    c.repeated = true;
  }
  if (pick(15) == 0) items.emplace_back("unknown-param", "1");
  std::string query;
  for (const auto& [n, v] : items) query += (query.empty() ? "" : "&") + encode(n, false) + "=" + encode(v, pick(10) == 0);
  if (pick(20) == 0) {
    query += "&=1";
    c.empty_name = true;
  }
  if (pick(20) == 0) query += "&&";
  c.target = "/api/" + c.name + (query.empty() && pick(2) == 0 ? "" : "?" + query);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const auto seed = static_cast<std::uint64_t>(arg_long(argc, argv, "--seed", 1));
  const long runs = arg_long(argc, argv, "--runs", 2000);
  const double case_seconds = static_cast<double>(arg_long(argc, argv, "--case-seconds", 10));
  const Api api;
  const std::vector<Endpoint> eps = endpoints(api);
  if (eps.empty()) {
    std::fprintf(stderr, "fuzz_api: the API lists no endpoint: %s\n", api.handle("", {}).body.c_str());
    return 1;
  }
  std::mt19937_64 rng(seed);
  std::map<int, long> statuses;
  std::size_t longest_line = 0;
  std::string longest_text;
  double slowest = 0;
  std::string slowest_target;
  auto violation = [&](long n, const Case& c, const std::string& why) {
    std::fprintf(stderr, "fuzz_api: VIOLATION (seed %llu, case %ld): %s\n  target: %s\n",
                 static_cast<unsigned long long>(seed), n, why.c_str(), c.target.c_str());
    return 1;
  };
  for (long n = 0; n < runs; ++n) {
    const Case c = make_case(rng, eps);
    const auto t0 = std::chrono::steady_clock::now();
    Query query;
    Reply r;
    const std::optional<std::string> problem = postbox::explorer::parse_query(c.target, query);
    if (problem) {
      r = postbox::explorer::error_reply(400, *problem);
    } else {
      const std::string path = c.target.substr(0, c.target.find('?'));
      r = api.handle(std::string_view(path).substr(5), query);
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (took > slowest) {
      slowest = took;
      slowest_target = c.target;
    }
    ++statuses[r.status];
    if (took > case_seconds) return violation(n, c, "took " + std::to_string(took) + " s");
    // 503: a measurement (/api/calibration?measure=1) that a busy machine spoiled.
    const bool measures = c.target.find("/api/calibration?") == 0 && query.count("measure") != 0;
    if (r.status != 200 && r.status != 400 && r.status != 404 && !(r.status == 503 && measures))
      return violation(n, c, "status " + std::to_string(r.status) + ": " + r.body);
    if (r.status != 200) {
      const std::string prefix = "postbox: error: ";
      if (r.body.rfind(prefix, 0) != 0 || r.body.back() != '\n' || r.body.find('\n') != r.body.size() - 1)
        return violation(n, c, "error body is not one line 'postbox: error: ...': " + r.body);
      if (r.body.size() - 1 - prefix.size() > longest_line) {
        longest_line = r.body.size() - 1 - prefix.size();
        longest_text = r.body.substr(0, r.body.size() - 1);
      }
      if (r.body.size() - 1 > 200 + prefix.size())
        return violation(n, c, "an error message of " + std::to_string(r.body.size() - 1 - prefix.size()) + " characters: " + r.body);
      for (const char ch : r.body.substr(0, r.body.size() - 1))
        if (static_cast<unsigned char>(ch) < 0x20) return violation(n, c, "control character in the error line");
    } else if (!nlohmann::json::accept(r.body)) {
      return violation(n, c, "a 200 body that is not JSON");
    }
    if (c.repeated && !problem) return violation(n, c, "a repeated name was not refused");
    if (c.empty_name && r.status != 400) return violation(n, c, "an empty name was not refused");
  }
  std::printf("fuzz_api: seed %llu, %ld requests over %zu endpoints:", static_cast<unsigned long long>(seed), runs, eps.size());
  for (const auto& [status, count] : statuses) std::printf(" %d x%ld", status, count);
  std::printf("; longest error message %zu characters; slowest %.3f s (%s); no violation\n", longest_line, slowest,
              slowest_target.size() > 120 ? (slowest_target.substr(0, 120) + "...").c_str() : slowest_target.c_str());
  if (std::getenv("FUZZ_API_SHOW_LONGEST") != nullptr) std::printf("longest: %s\n", longest_text.c_str());
  return 0;
}
