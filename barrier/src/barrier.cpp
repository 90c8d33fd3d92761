#include "postbox/barrier/barrier.hpp"

#include <algorithm>
#include <thread>

#include "engine.hpp"
#include "postbox/barrier/version.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox {

const char* version() noexcept { return "0.1.0"; }

int combine_rounds_lambda(const SendRecv& send_recv) {
  validate_send_recv(send_recv.s, send_recv.r);
  const Rational lambda = send_recv.lambda();
  if (lambda.is_integer()) return static_cast<int>(lambda.num());
  const auto lo = lambda.floor();
  // Bruck §3.3: delay-send (⌊λ⌋ rounds, sends stretched to λ/⌊λ⌋) is faster below the break-even λ.
  return lambda.to_double() < break_even_lambda(static_cast<int>(lo)) ? static_cast<int>(lo)
                                                                        : static_cast<int>(lambda.ceil());
}

namespace internal {

BarrierBase::BarrierBase(Algorithm algorithm, int p, BarrierOptions options, std::string reason)
    : engine_(std::make_unique<Engine>(algorithm, p, std::move(options), std::move(reason))) {}
BarrierBase::BarrierBase(BarrierBase&&) noexcept = default;
BarrierBase& BarrierBase::operator=(BarrierBase&&) noexcept = default;
BarrierBase::~BarrierBase() = default;

void BarrierBase::arrive_and_wait(int rank) { engine_->arrive_and_wait(rank, nullptr); }
BarrierToken BarrierBase::arrive(int rank) { return engine_->arrive(rank); }
void BarrierBase::wait(int rank, BarrierToken token) { engine_->wait(rank, token); }
void BarrierBase::arrive_and_drop(int rank) { engine_->arrive_and_drop(rank); }
void BarrierBase::reduce_impl(int rank, ReduceArgs* args) { engine_->arrive_and_wait(rank, args); }
int BarrierBase::size() const noexcept { return engine_->size(); }
int BarrierBase::participants() const noexcept { return engine_->participants(); }
const char* BarrierBase::algorithm() const noexcept { return engine_->algorithm_name(); }
const std::string& BarrierBase::reason() const noexcept { return engine_->reason(); }

}  // namespace internal

namespace {

using internal::Algorithm;

std::string sr_text(const BarrierOptions& o) {
  if (!o.send_recv) return "uncalibrated s = 1, r = 1 (λ = 2)";
  validate_send_recv(o.send_recv->s, o.send_recv->r);
  return "s = " + o.send_recv->s.str() + ", r = " + o.send_recv->r.str() + " (λ = " + o.send_recv->lambda().str() + ")";
}

std::string combine_text(const BarrierOptions& o) {
  const SendRecv sr = o.send_recv.value_or(SendRecv{Rational(1), Rational(1)});
  const int l = combine_rounds_lambda(sr);
  std::string why;
  if (!sr.lambda().is_integer()) {
    why = l == sr.lambda().floor() ? ", delay-send below the break-even λ" : ", delay-receive at or above the break-even λ";
  }
  return "postal-model combine rounds with λ = " + std::to_string(l) + why + " from " + sr_text(o);
}

struct Choice {
  Algorithm algorithm;
  std::string reason;
};

// Number of distinct L3 (else package) groups the placed ranks span, or 1 without a topology.
int groups_spanned(int p, const BarrierOptions& o) {
  std::shared_ptr<const Topology> topo = o.topology;
  if (!topo) {
    try {
      topo = std::make_shared<const Topology>(Topology::machine());
    } catch (const InputError&) {
      return 1;
    }
  }
  std::vector<int> keys;
  for (int r = 0; r < p; ++r) {
    const int pu = o.placement.empty() ? r % topo->pus() : o.placement[static_cast<std::size_t>(r)];
    if (pu < 0 || pu >= topo->pus()) return 1;
    const PuInfo& info = topo->pu(pu);
    const int key = info.l3 >= 0 ? info.l3 : (info.package >= 0 ? 1'000'000 + info.package : 0);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  return static_cast<int>(keys.size());
}

Choice choose(int p, const BarrierOptions& o) {
  if (p < 1) throw InputError("barrier: p must be at least 1, got " + std::to_string(p));
  unsigned hw = o.hardware_threads;
  if (hw == 0) hw = std::max(1U, std::thread::hardware_concurrency());
  if (p == 1) return {Algorithm::central, "central: p = 1, nothing to wait for"};
  if (static_cast<unsigned>(p) > hw) {
    return {Algorithm::central, "central: " + std::to_string(p) + " threads on " + std::to_string(hw) +
                                    " hardware threads are oversubscribed, so a tree or round wake-up would wait on "
                                    "descheduled threads; one release word with a blocking wake-up instead"};
  }
  if (p >= 4) {
    const int groups = groups_spanned(p, o);
    if (groups > 1) {
      return {Algorithm::hier, "hier: the " + std::to_string(p) + " ranks span " + std::to_string(groups) +
                                   " L3/package groups; inner trees per group, one tree across leaders"};
    }
  }
  const SendRecv sr = o.send_recv.value_or(SendRecv{Rational(1), Rational(1)});
  const int l = combine_rounds_lambda(sr);
  if (p <= 16 || l <= 2) {
    return {Algorithm::combine, "combine: " + std::to_string(p) + " ranks on " + std::to_string(hw) +
                                    " hardware threads, one group; every rank learns completion itself in " +
                                    combine_text(o)};
  }
  return {Algorithm::fibo, "fibo: " + std::to_string(p) + " ranks with a large receive latency (" + sr_text(o) +
                               "): binomial arrival, Fibo-tree wake-up sends fewer messages than combine rounds"};
}

}  // namespace

CentralBarrier::CentralBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::central, p, std::move(options), "central: sense-reversing counter and release word") {}

DisseminationBarrier::DisseminationBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::dissemination, p, std::move(options), "dissemination: ceil(log2 p) rounds to i + 2^k") {}

CombineBarrier::CombineBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::combine, p, options, "combine: " + combine_text(options)) {}

McsBarrier::McsBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::mcs, p, std::move(options), "mcs: 4-ary arrival into the parent's line, binary wake-up") {}

TournamentBarrier::TournamentBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::tournament, p, std::move(options),
                  "tournament: static winners over ceil(log2 p) rounds, champion wakes in reverse") {}

FiboBarrier::FiboBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::fibo, p, options, "fibo: binomial arrival, Fibo-tree wake-up from " + sr_text(options)) {}

HierBarrier::HierBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::hier, p, std::move(options), "hier: binomial tree per L3/package group and across leaders") {}

namespace {
// Barrier's base needs the choice before construction; computing it twice is cheap.
Algorithm chosen_algorithm(int p, const BarrierOptions& o) { return choose(p, o).algorithm; }
}  // namespace

Barrier::Barrier(int p, BarrierOptions options)
    : BarrierBase(chosen_algorithm(p, options), p, options, choose(p, options).reason) {}

const std::vector<std::string>& barrier_names() {
  static const std::vector<std::string> names = {"default", "fibo",          "combine",    "central",
                                                 "dissemination", "mcs", "tournament", "hier"};
  return names;
}

std::unique_ptr<AnyBarrier> make_barrier(std::string_view name, int p, BarrierOptions options) {
  if (p < 1) throw InputError("barrier: p must be at least 1, got " + std::to_string(p));
  auto wrap = [&](internal::BarrierBase&& b) { return std::make_unique<AnyBarrier>(std::move(b), std::string(name)); };
  if (name == "default") return wrap(Barrier(p, std::move(options)));
  if (name == "fibo") return wrap(FiboBarrier(p, std::move(options)));
  if (name == "combine") return wrap(CombineBarrier(p, std::move(options)));
  if (name == "central") return wrap(CentralBarrier(p, std::move(options)));
  if (name == "dissemination") return wrap(DisseminationBarrier(p, std::move(options)));
  if (name == "mcs") return wrap(McsBarrier(p, std::move(options)));
  if (name == "tournament") return wrap(TournamentBarrier(p, std::move(options)));
  if (name == "hier") return wrap(HierBarrier(p, std::move(options)));
  throw InputError("unknown barrier '" + std::string(name) +
                   "' (known: default, fibo, combine, central, dissemination, mcs, tournament, hier)");
}

}  // namespace postbox
