#include "postbox/barrier/barrier.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "engine.hpp"
#include "postbox/barrier/version.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/runtime/calibrate.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox {

const char* version() noexcept { return "0.1.0"; }

const WaitPolicy& barrier_wait_policy() {
  static const WaitPolicy policy = WaitPolicy::from_env(WaitPolicy{200'000, 50'000});
  return policy;
}

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
void BarrierBase::abort() noexcept { engine_->abort(); }
void BarrierBase::reduce_impl(int rank, ReduceArgs* args) { engine_->arrive_and_wait(rank, args); }
int BarrierBase::size() const noexcept { return engine_->size(); }
int BarrierBase::participants() const noexcept { return engine_->participants(); }
const char* BarrierBase::algorithm() const noexcept { return engine_->algorithm_name(); }
const std::string& BarrierBase::reason() const noexcept { return engine_->reason(); }

}  // namespace internal

namespace {

using internal::Algorithm;
using internal::Choice;
using internal::ResolvedSr;

// Where s and r came from, for reason().
std::string source_text(const std::string& source) {
  if (source == "env") return "from POSTBOX_S_NS and POSTBOX_R_NS";
  if (source == "file") return "from the saved calibration (postbox calibrate --save)";
  if (source == "measured") return "measured at first use (no saved calibration)";
  if (source == "assumed") return "assumed (the first-use measurement failed)";
  if (source.rfind("env+", 0) == 0) return "one from POSTBOX_S_NS/POSTBOX_R_NS, the other " + source_text(source.substr(4));
  return "from " + source;
}

// s and r as the library takes them: BarrierOptions::send_recv, else calibrated_latency() in
// whole nanoseconds (the shapes depend on r/s only, and 1 ns is below the measurement's noise),
// with where they came from. Resolved at construction only, never on the hot path.
ResolvedSr resolve_sr(const BarrierOptions& o) {
  if (o.send_recv) {
    validate_send_recv(o.send_recv->s, o.send_recv->r);
    return {*o.send_recv, "given in BarrierOptions::send_recv"};
  }
  const Calibration& c = calibrated_latency();
  const auto s = std::max<std::int64_t>(1, std::llround(c.s_ns));
  const auto r = std::max<std::int64_t>(0, std::llround(c.r_ns));
  return {SendRecv{Rational(s), Rational(r)}, source_text(c.source)};
}

std::string sr_text(const ResolvedSr& x) {
  return "s = " + x.sr.s.str() + ", r = " + x.sr.r.str() + " ns (λ = " + x.sr.lambda().str() + ", " + x.from + ")";
}

BarrierOptions with_sr(BarrierOptions o, const ResolvedSr& x) {
  o.send_recv = x.sr;
  return o;
}

std::string combine_text(const ResolvedSr& x) {
  const SendRecv& sr = x.sr;
  const int l = combine_rounds_lambda(sr);
  std::string why;
  if (!sr.lambda().is_integer()) {
    why = l == sr.lambda().floor() ? ", delay-send below the break-even λ" : ", delay-receive at or above the break-even λ";
  }
  return "postal-model combine rounds with λ = " + std::to_string(l) + why + " from " + sr_text(x);
}



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
  if (p == 1) return {Algorithm::central, "central: p = 1, nothing to wait for", std::nullopt};
  if (static_cast<unsigned>(p) > hw) {
    return {Algorithm::central, "central: " + std::to_string(p) + " threads on " + std::to_string(hw) +
                                    " hardware threads are oversubscribed: a tree or round wake-up would pass through "
                                    "descheduled threads, so one counter and one futex word; waiters yield for at most 3 us, "
                                    "then block, and the last arriver wakes all with one call",
            std::nullopt};
  }
  if (p >= 4) {
    const int groups = groups_spanned(p, o);
    if (groups > 1) {
      return {Algorithm::hier, "hier: the " + std::to_string(p) + " ranks span " + std::to_string(groups) +
                                   " L3/package groups; inner trees per group, one tree across leaders",
              std::nullopt};
    }
  }
  const ResolvedSr x = resolve_sr(o);
  const int l = combine_rounds_lambda(x.sr);
  if (p <= 16 || l <= 2) {
    return {Algorithm::combine,
            "combine: " + std::to_string(p) + " ranks on " + std::to_string(hw) +
                " hardware threads, one group; every rank learns completion itself in " + combine_text(x),
            x.sr};
  }
  return {Algorithm::fibo,
          "fibo: " + std::to_string(p) + " ranks with a large receive latency (" + sr_text(x) +
              "): binomial arrival, Fibo-tree wake-up sends fewer messages than combine rounds",
          x.sr};
}

}  // namespace

CentralBarrier::CentralBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::central, p, std::move(options), "central: sense-reversing counter and release word") {}

DisseminationBarrier::DisseminationBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::dissemination, p, std::move(options), "dissemination: ceil(log2 p) rounds to i + 2^k") {}

CombineBarrier::CombineBarrier(int p, BarrierOptions options) : CombineBarrier(p, std::move(options), resolve_sr(options)) {}

CombineBarrier::CombineBarrier(int p, BarrierOptions options, const internal::ResolvedSr& x)
    : BarrierBase(Algorithm::combine, p, with_sr(std::move(options), x), "combine: " + combine_text(x)) {}

McsBarrier::McsBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::mcs, p, std::move(options), "mcs: 4-ary arrival into the parent's line, binary wake-up") {}

TournamentBarrier::TournamentBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::tournament, p, std::move(options),
                  "tournament: static winners over ceil(log2 p) rounds, champion wakes in reverse") {}

FiboBarrier::FiboBarrier(int p, BarrierOptions options) : FiboBarrier(p, std::move(options), resolve_sr(options)) {}

FiboBarrier::FiboBarrier(int p, BarrierOptions options, const internal::ResolvedSr& x)
    : BarrierBase(Algorithm::fibo, p, with_sr(std::move(options), x), "fibo: binomial arrival, Fibo-tree wake-up from " + sr_text(x)) {}

HierBarrier::HierBarrier(int p, BarrierOptions options)
    : BarrierBase(Algorithm::hier, p, std::move(options), "hier: binomial tree per L3/package group and across leaders") {}

Barrier::Barrier(int p, BarrierOptions options) : Barrier(p, std::move(options), choose(p, options)) {}

Barrier::Barrier(int p, BarrierOptions options, internal::Choice&& choice)
    : BarrierBase(choice.algorithm, p,
                  choice.send_recv ? with_sr(std::move(options), internal::ResolvedSr{*choice.send_recv, {}})
                                   : std::move(options),
                  std::move(choice.reason)) {}

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
