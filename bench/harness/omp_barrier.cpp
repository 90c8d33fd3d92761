// postbox-omp-gomp / postbox-omp-llvm: `#pragma omp barrier` measured with the EPCC syncbench
// method (syncbench.hpp), one executable per OpenMP runtime because libgomp and LLVM libomp
// cannot share a process. `postbox bench barrier` runs them as child processes.
//
// With --postbox ALGORITHM the same OpenMP team calls postbox's barrier through its C API
// (postbox_barrier_wait with the OpenMP thread number as the rank) instead of `#pragma omp
// barrier`: the way a C or Fortran OpenMP program would use it.
//
// Usage: postbox-omp-X --impl NAME --p 2,4,8 --outer N --target-ns T [--method barrier|late]
//        [--tail] [--postbox ALGORITHM]
// Prints {"rows": [{"p": .., "impl": NAME, "median_ns": .., "mean_ns": .., "sd_ns": .., "samples_ns": [..],
// "tail_buckets": [[bucket, count], ...]}, ...]} (samples_ns: the overhead per barrier of each
// outer repetition; tail_buckets: syncbench::Histogram's non-empty buckets, with --tail).
#include <omp.h>

#include "postbox/barrier.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "syncbench.hpp"

namespace {

[[noreturn]] void usage(const char* what) {
  std::fprintf(stderr, "postbox-omp: error: %s (usage: --impl NAME --p LIST --outer N --target-ns T)\n", what);
  std::exit(2);
}

long parse_long(const char* text, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1) usage(what);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string impl = "omp";
  std::string algorithm;  // --postbox: postbox's barrier through the C API
  std::vector<int> ps;
  postbox::syncbench::Params prm;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tail") {
      prm.tail = true;
      continue;
    }
    if (i + 1 >= argc) usage("missing value");
    const char* v = argv[++i];
    if (a == "--impl") {
      impl = v;
    } else if (a == "--p") {
      std::string list = v;
      std::size_t pos = 0;
      while (pos <= list.size()) {
        const auto comma = list.find(',', pos);
        const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        ps.push_back(static_cast<int>(parse_long(item.c_str(), "--p needs positive integers")));
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
    } else if (a == "--outer") {
      prm.outer = static_cast<int>(parse_long(v, "--outer must be a positive integer"));
    } else if (a == "--target-ns") {
      prm.target_ns = parse_long(v, "--target-ns must be a positive integer");
    } else if (a == "--method") {
      const std::string m = v;
      if (m != "barrier" && m != "late") usage("--method must be barrier or late");
      prm.method = m == "late" ? postbox::syncbench::Method::late : postbox::syncbench::Method::barrier;
    } else if (a == "--postbox") {
      algorithm = v;
    } else {
      usage("unknown option");
    }
  }
  if (ps.empty()) usage("--p is required");
  omp_set_dynamic(0);
  std::printf("{\"rows\": [");
  bool first = true;
  for (int p : ps) {
    postbox::syncbench::Shared sh;
    int got = 0;
    postbox_barrier_t* barrier = nullptr;
    if (!algorithm.empty()) {
      barrier = postbox_barrier_create(p, algorithm.c_str());
      if (barrier == nullptr) usage("--postbox: postbox_barrier_create failed");
    }
#pragma omp parallel num_threads(p)
    {
#pragma omp single
      got = omp_get_num_threads();
      if (barrier != nullptr) {
        postbox::syncbench::body(omp_get_thread_num(), p, sh, prm, [barrier](int rank) {
          if (postbox_barrier_wait(barrier, rank) != 0) std::abort();
        });
      } else {
        postbox::syncbench::body(omp_get_thread_num(), p, sh, prm, [](int) {
#pragma omp barrier
        });
      }
    }
    postbox_barrier_destroy(barrier);
    if (got != p) {
      std::fprintf(stderr, "postbox-omp: error: asked for %d threads, the runtime gave %d\n", p, got);
      return 1;
    }
    const auto s = postbox::syncbench::summarize(sh.per_barrier_ns, sh.inner_used);
    std::printf("%s{\"p\": %d, \"impl\": \"%s\", \"median_ns\": %.3f, \"mean_ns\": %.3f, \"sd_ns\": %.3f, \"samples_ns\": [",
                first ? "" : ", ", p, impl.c_str(), s.median_ns, s.mean_ns, s.sd_ns);
    for (std::size_t i = 0; i < sh.per_barrier_ns.size(); ++i) std::printf("%s%.3f", i == 0 ? "" : ", ", sh.per_barrier_ns[i]);
    std::printf("], \"tail_buckets\": [");
    bool first_bucket = true;
    for (std::size_t b = 0; b < sh.tail.count.size(); ++b) {
      if (sh.tail.count[b] == 0) continue;
      std::printf("%s[%zu, %llu]", first_bucket ? "" : ", ", b, static_cast<unsigned long long>(sh.tail.count[b]));
      first_bucket = false;
    }
    std::printf("]}");
    first = false;
  }
  std::printf("]}\n");
  return 0;
}
