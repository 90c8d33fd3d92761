// postbox run: one collective on threads (a cached plan on the thread executor), timed over
// --iters runs, optionally verified byte for byte on every rank; postbox run --list. The s2p and
// C³ ops take their extra options (--mesh, --sources, --dist, --seed, --source-list) as the
// registry's PlanRequest::params.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "postbox/collectives/c3.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/executor.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox::cli {

namespace {

bool is_c3_op(const std::string& op) {
  const auto& ops = c3_ops();
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

struct RunArgs {
  std::shared_ptr<TextOptions> sel;
  int iters = 10;
  bool verify = false;
  bool json = false;
  bool list = false;
};

std::uint8_t pattern(int rank, std::size_t i) { return static_cast<std::uint8_t>((rank * 131 + static_cast<int>(i) * 29 + 17) & 0xff); }

// Unsigned wrapping sum of `count` elements of width W.
template <class W>
void sum_fn(const std::byte* x, const std::byte* y, std::byte* out, std::size_t count, const void*) {
  for (std::size_t i = 0; i < count; ++i) {
    W a, b;
    std::memcpy(&a, x + i * sizeof(W), sizeof(W));
    std::memcpy(&b, y + i * sizeof(W), sizeof(W));
    const W c = static_cast<W>(a + b);
    std::memcpy(out + i * sizeof(W), &c, sizeof(W));
  }
}

ReduceFn sum_of(std::uint32_t elem) {
  switch (elem) {
    case 1: return {&sum_fn<std::uint8_t>, nullptr, 1, true};
    case 2: return {&sum_fn<std::uint16_t>, nullptr, 2, true};
    case 4: return {&sum_fn<std::uint32_t>, nullptr, 4, true};
    default: return {&sum_fn<std::uint64_t>, nullptr, 8, true};
  }
}

// Each rank's input: its own pattern (bcast: the root's pattern at the root, its complement
// elsewhere, so a missed receive shows).
void fill(const Plan& plan, std::vector<std::vector<std::byte>>& bufs) {
  const std::size_t b = plan.bytes;
  for (int r = 0; r < plan.p; ++r) {
    auto& buf = bufs[static_cast<std::size_t>(r)];
    std::fill(buf.begin(), buf.end(), std::byte{0xEE});
    const std::size_t at = plan.op == "gather" && r == plan.root ? static_cast<std::size_t>(r) * b : 0;
    for (std::size_t i = 0; i < b; ++i) {
      std::uint8_t v = pattern(plan.op == "bcast" ? plan.root : r, i);
      if (plan.op == "bcast" && r != plan.root) v = static_cast<std::uint8_t>(~v);
      buf[at + i] = static_cast<std::byte>(v);
    }
  }
}

// The first (rank, byte) that differs from the expected result, or nullopt.
struct Mismatch {
  int rank;
  std::size_t byte;
  unsigned want, got;
};
std::optional<Mismatch> verify(const Plan& plan, const std::vector<std::vector<std::byte>>& bufs) {
  const std::size_t b = plan.bytes;
  std::vector<std::byte> want;
  auto check = [&](int r, const std::vector<std::byte>& expect, std::size_t n) -> std::optional<Mismatch> {
    const auto& got = bufs[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < n; ++i) {
      if (got[i] != expect[i]) return Mismatch{r, i, static_cast<unsigned>(expect[i]), static_cast<unsigned>(got[i])};
    }
    return std::nullopt;
  };
  if (plan.op == "bcast") {
    want.resize(b);
    for (std::size_t i = 0; i < b; ++i) want[i] = static_cast<std::byte>(pattern(plan.root, i));
    for (int r = 0; r < plan.p; ++r)
      if (auto m = check(r, want, b)) return m;
    return std::nullopt;
  }
  if (plan.op == "gather") {
    want.resize(b * static_cast<std::size_t>(plan.p));
    for (int q = 0; q < plan.p; ++q)
      for (std::size_t i = 0; i < b; ++i) want[static_cast<std::size_t>(q) * b + i] = static_cast<std::byte>(pattern(q, i));
    return check(plan.root, want, want.size());
  }
  // reduce / allreduce: the element-wise sum of every rank's pattern.
  const ReduceFn sum = sum_of(plan.elem_bytes);
  want.resize(b);
  std::vector<std::byte> in(b);
  for (std::size_t i = 0; i < b; ++i) want[i] = static_cast<std::byte>(pattern(0, i));
  for (int q = 1; q < plan.p; ++q) {
    for (std::size_t i = 0; i < b; ++i) in[i] = static_cast<std::byte>(pattern(q, i));
    if (b != 0) sum.fn(want.data(), in.data(), want.data(), b / plan.elem_bytes, nullptr);
  }
  for (int r = 0; r < plan.p; ++r) {
    if (plan.op == "reduce" && r != plan.root) continue;
    if (auto m = check(r, want, b)) return m;
  }
  return std::nullopt;
}

// s2p and C³ buffers (s2p.hpp, c3.hpp) as blocks of `bytes` bytes. Block byte t is
// block_byte(from, to, t); a block not `given` before the run holds its complement then, so a
// missed receive shows in every byte. `result` blocks are what the op promises afterwards.
struct Block {
  int rank;
  std::uint64_t offset;
  int from, to;
  bool given, result;
};

std::uint8_t block_byte(int from, int to, std::uint64_t t) {
  return static_cast<std::uint8_t>((from * 131 + to * 71 + static_cast<int>(t % 256) * 29 + 17) & 0xff);
}

// The sources of the request, in source order.
std::vector<int> s2p_sources(const PlanRequest& req) { return s2p_request_sources(req, s2p_request_mesh(req)); }

std::vector<Block> blocks_of(const Plan& plan, const PlanRequest& req) {
  std::vector<Block> out;
  const int p = plan.p;
  const std::uint64_t L = plan.bytes;
  if (plan.op == "s2p") {
    const std::vector<int> src = s2p_sources(req);
    PB_CHECK(plan.user_bytes[0] == src.size() * L, "s2p plan's buffer is not sources*bytes");
    for (int r = 0; r < p; ++r) {
      for (std::size_t k = 0; k < src.size(); ++k) out.push_back({r, k * L, src[k], static_cast<int>(k), src[k] == r, true});
    }
  } else if (plan.op == "one-to-all") {
    const int root = plan.root;
    for (int j = 0; j < p; ++j) {
      out.push_back({root, static_cast<std::uint64_t>(j) * L, root, j, true, j == root});
      if (j != root) out.push_back({j, 0, root, j, false, true});
    }
  } else if (plan.op == "all-to-one") {
    const int root = plan.root;
    for (int j = 0; j < p; ++j) {
      if (j != root) out.push_back({j, 0, j, root, true, false});
      out.push_back({root, static_cast<std::uint64_t>(j) * L, j, root, j == root, true});
    }
  } else {  // all-to-all
    const auto P = static_cast<std::uint64_t>(p);
    for (int i = 0; i < p; ++i) {
      for (int j = 0; j < p; ++j) {
        out.push_back({i, static_cast<std::uint64_t>(j) * L, i, j, true, false});
        out.push_back({j, P * L + static_cast<std::uint64_t>(i) * L, i, j, false, true});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Block& a, const Block& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.offset < b.offset;
  });
  return out;
}

void fill_blocks(const Plan& plan, const std::vector<Block>& blocks, std::vector<std::vector<std::byte>>& bufs) {
  for (auto& buf : bufs) std::fill(buf.begin(), buf.end(), std::byte{0xEE});
  for (const Block& b : blocks) {
    auto& buf = bufs[static_cast<std::size_t>(b.rank)];
    for (std::uint64_t t = 0; t < plan.bytes; ++t) {
      const std::uint8_t v = block_byte(b.from, b.to, t);
      buf[b.offset + t] = static_cast<std::byte>(b.given ? v : static_cast<std::uint8_t>(~v));
    }
  }
}

std::optional<Mismatch> verify_blocks(const Plan& plan, const std::vector<Block>& blocks,
                                      const std::vector<std::vector<std::byte>>& bufs) {
  for (const Block& b : blocks) {
    if (!b.result) continue;
    const auto& buf = bufs[static_cast<std::size_t>(b.rank)];
    for (std::uint64_t t = 0; t < plan.bytes; ++t) {
      const std::uint8_t want = block_byte(b.from, b.to, t);
      const auto got = static_cast<std::uint8_t>(buf[b.offset + t]);
      if (got != want) return Mismatch{b.rank, static_cast<std::size_t>(b.offset + t), want, got};
    }
  }
  return std::nullopt;
}

bool uses_blocks(const std::string& op) { return op == "s2p" || is_c3_op(op); }

void list_algorithms() {
  for (const auto& b : list_plan_builders()) std::cout << b.op << " " << b.algo << "  " << b.description << "\n";
}

void run_collective(const RunArgs& args) {
  if (args.list) {
    list_algorithms();
    return;
  }
  if (args.iters < 1) throw InputError("--iters must be at least 1, got " + std::to_string(args.iters));
  const PlanRequest req = select_plan(args.sel->given(), kRunDefaults);
  const std::shared_ptr<const Plan> plan = cached_plan(req);
  if (plan->op == "barrier" && args.verify) {
    throw InputError("--verify does not apply to barrier: its messages carry no data (a run that returns has completed "
                     "every rank's arrival and wake-up)");
  }
  const bool known = plan->op == "bcast" || plan->op == "reduce" || plan->op == "gather" || plan->op == "allreduce" ||
                     uses_blocks(plan->op);
  if (!known && args.verify) {
    throw InputError("--verify knows bcast, reduce, gather, allreduce, s2p, one-to-all, all-to-one and all-to-all, not " +
                     plan->op);
  }
  const std::vector<Block> blocks = uses_blocks(plan->op) ? blocks_of(*plan, req) : std::vector<Block>{};
  PlanExecutor exec(plan);
  TeamOptions opts;
  // Rings that hold whatever the plan needs to be deadlock-free in program order.
  opts.mailbox.ring_bytes = 64 * 1024;
  if (validate_rings(*plan, opts.mailbox.ring_bytes)) opts.mailbox.ring_bytes = ring_bytes_needed(*plan);
  Team team(plan->p, opts);
  std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(plan->p));
  std::vector<std::span<std::byte>> users;
  for (int r = 0; r < plan->p; ++r) {
    bufs[static_cast<std::size_t>(r)].resize(plan->user_bytes[static_cast<std::size_t>(r)]);
    users.emplace_back(bufs[static_cast<std::size_t>(r)]);
  }
  const ReduceFn sum = sum_of(plan->elem_bytes);
  std::vector<double> ns;
  for (int it = -1; it < args.iters; ++it) {  // iteration -1: untimed warm-up
    if (uses_blocks(plan->op)) fill_blocks(*plan, blocks, bufs);
    else fill(*plan, bufs);
    const auto t0 = std::chrono::steady_clock::now();
    exec.run(team, users, &sum);
    const auto t1 = std::chrono::steady_clock::now();
    if (it >= 0) ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  std::sort(ns.begin(), ns.end());
  const double median = ns[(ns.size() - 1) / 2];
  const double p90 = ns[std::min(ns.size() - 1, static_cast<std::size_t>(0.9 * static_cast<double>(ns.size() - 1) + 0.5))];
  std::optional<bool> verified;
  if (args.verify) {
    const auto bad = uses_blocks(plan->op) ? verify_blocks(*plan, blocks, bufs) : verify(*plan, bufs);
    verified = !bad;
    if (bad) {
      std::fprintf(stderr, "postbox: verify failed: rank %d byte %zu: expected 0x%02x, got 0x%02x\n", bad->rank, bad->byte,
                   bad->want, bad->got);
      set_exit_code(1);
    }
  }
  if (args.json) {
    nlohmann::ordered_json j{{"op", plan->op},           {"algo", plan->algo},   {"p", plan->p},
                             {"bytes", plan->bytes},     {"iters", args.iters},  {"median_ns", median},
                             {"p90_ns", p90},            {"verified", nullptr}};
    if (verified) j["verified"] = *verified;
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::printf("%s/%s p=%d bytes=%llu iters=%d: median %.1f us, p90 %.1f us%s\n", plan->op.c_str(), plan->algo.c_str(), plan->p,
              static_cast<unsigned long long>(plan->bytes), args.iters, median / 1e3, p90 / 1e3,
              !verified ? "" : (*verified ? ", verified" : ", VERIFY FAILED"));
}

}  // namespace

void register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run one collective on threads (a plan on the thread executor): time it over --iters runs, "
             "optionally verify every rank's result byte for byte (exit 1 on a mismatch)");
  args->sel = std::make_shared<TextOptions>(cmd, plan_selection_options(), kRunDefaults.defaults);
  cmd->add_option("--iters", args->iters, "Timed runs, at least 1 (after one untimed warm-up run)")->capture_default_str();
  cmd->add_flag("--verify", args->verify,
                "Fill every rank's input per the op's buffer layout (docs/plans.md, s2p.hpp, c3.hpp) and check every "
                "rank's result byte for byte (reduce/allreduce: unsigned sums of --elem-bytes); exit 1 naming the "
                "first wrong rank");
  cmd->add_flag("--json", args->json, R"(Print {"op","algo","p","bytes","iters","median_ns","p90_ns","verified"})");
  cmd->add_flag("--list", args->list, "List every registered op and algorithm, one per line, and exit");
  cmd->callback([args] { run_collective(*args); });
}

}  // namespace postbox::cli
