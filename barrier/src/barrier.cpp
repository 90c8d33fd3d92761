#include "postbox/barrier/barrier.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "engine.hpp"
#include "postbox/barrier/version.hpp"
#include "postbox/collectives/plans.hpp"
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

int combine_rounds_lambda(const SendRecv& send_recv, int p) {
  validate_send_recv(send_recv.s, send_recv.r);
  if (p < 1) throw InputError("barrier: p must be at least 1, got " + std::to_string(p));
  return static_cast<int>(choose_postal(send_recv.lambda(), p).L);
}

namespace internal {

// Everything a barrier's engine is built from, computed once from the options (so that no
// constructor argument depends on the evaluation order of another).
struct Prepared {
  BarrierAlgorithm algorithm = BarrierAlgorithm::central;
  BarrierOptions options;  // wait = the policy in use; send_recv resolved where used
  std::string reason;
};

void BarrierTesting::set_phase(BarrierBase& barrier, std::uint64_t phase) { barrier.engine_->set_phase_for_testing(phase); }
int BarrierTesting::central_groups(const BarrierBase& barrier) { return barrier.engine_->central_groups_for_testing(); }
bool BarrierTesting::move_apart(const BarrierBase& barrier) { return barrier.engine_->move_apart(); }
bool BarrierTesting::waits_share_cpu(const BarrierBase& barrier) { return barrier.engine_->waits_share_cpu_for_testing(); }
std::uint64_t BarrierTesting::colocation_moves(const BarrierBase& barrier) {
  return barrier.engine_->colocation_moves_for_testing();
}

}  // namespace internal

BarrierBase::BarrierBase(int p, internal::Prepared&& x)
    : engine_(std::make_unique<internal::Engine>(x.algorithm, p, std::move(x.options), std::move(x.reason))) {}
BarrierBase::BarrierBase(BarrierBase&&) noexcept = default;
BarrierBase& BarrierBase::operator=(BarrierBase&&) noexcept = default;
BarrierBase::~BarrierBase() = default;

void BarrierBase::arrive_and_wait(int rank) { engine_->arrive_and_wait(rank, nullptr); }
BarrierToken BarrierBase::arrive(int rank) { return engine_->arrive(rank); }
void BarrierBase::wait(int rank, BarrierToken token) { engine_->wait(rank, token); }
void BarrierBase::arrive_and_drop(int rank) { engine_->arrive_and_drop(rank); }
void BarrierBase::abort() noexcept { engine_->abort(); }
void BarrierBase::reduce_impl(int rank, internal::ReduceArgs* args) { engine_->arrive_and_wait(rank, args); }
int BarrierBase::size() const noexcept { return engine_->size(); }
int BarrierBase::participants() const noexcept { return engine_->participants(); }
const char* BarrierBase::algorithm() const noexcept { return engine_->algorithm_name(); }
const std::string& BarrierBase::reason() const noexcept { return engine_->reason(); }

namespace {

using internal::Prepared;

// s and r as a barrier uses them, and where they came from (for reason()).
struct ResolvedSr {
  SendRecv sr;
  std::string from;
};

// Where s and r came from, for reason().
std::string source_text(const std::string& source) {
  if (source == "env") return "from POSTBOX_S_NS and POSTBOX_R_NS";
  if (source == "file") return "from the saved calibration (the file postbox calibrate saves)";
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

// s and r for Barrier's choice, never measured (a constructor must not time the machine, and
// the choice must not change from one process to the next): BarrierOptions::send_recv, else
// POSTBOX_S_NS/POSTBOX_R_NS or the saved calibration, else s = r (λ = 2, the uncalibrated
// figure), said so in reason().
ResolvedSr resolve_sr_saved(const BarrierOptions& o) {
  if (o.send_recv) return resolve_sr(o);
  if (const auto c = saved_latency()) {
    const auto s = std::max<std::int64_t>(1, std::llround(c->s_ns));
    const auto r = std::max<std::int64_t>(0, std::llround(c->r_ns));
    return {SendRecv{Rational(s), Rational(r)}, source_text(c->source)};
  }
  return {SendRecv{Rational(1), Rational(1)},
          "assumed: no saved calibration, and Barrier never measures (postbox calibrate measures this machine and saves one)"};
}

std::string sr_text(const ResolvedSr& x) {
  return "s = " + x.sr.s.str() + ", r = " + x.sr.r.str() + " ns (λ = " + x.sr.lambda().str() + ", " + x.from + ")";
}

std::string combine_text(const ResolvedSr& x, int p) {
  const PostalChoice c = choose_postal(x.sr.lambda(), p);
  std::string why;
  if (c.variant == "delay-send") why = ", delay-send (faster than delay-receive for p = " + std::to_string(p) + ")";
  if (c.variant == "delay-recv") why = ", delay-receive (not slower than delay-send for p = " + std::to_string(p) + ")";
  return "postal-model combine rounds with λ = " + std::to_string(c.L) + why + " from " + sr_text(x);
}

unsigned cpus_of(const BarrierOptions& o) { return o.cpus != 0 ? o.cpus : static_cast<unsigned>(allowed_cpu_count()); }

std::string us_text(std::int64_t ns) {
  char buf[32];
  if (ns % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%lld us", static_cast<long long>(ns / 1000));
  } else {
    std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  }
  return buf;
}

// The wait policy in use and its line for reason().
Prepared prepare(BarrierAlgorithm algorithm, int p, BarrierOptions o, std::string reason) {
  if (p < 1) throw InputError("barrier: p must be at least 1, got " + std::to_string(p));
  const unsigned cpus = cpus_of(o);
  const bool over = static_cast<unsigned>(p) > cpus;
  std::string wait = over && o.oversubscribed_wait ? "oversubscribed (p = " + std::to_string(p) + " > " +
                                                         std::to_string(cpus) + " CPUs): "
                                                   : "";
  if (over && o.oversubscribed_wait) o.wait = *o.oversubscribed_wait;
  const WaitPolicy& w = o.wait;
  if (o.fibers) {
    wait = "ranks are fibers: a waiting rank switches to the next ready rank of its worker";
    wait += o.debug_timeout.count() > 0 ? ", polling (debug mode)" : "";
    return Prepared{algorithm, std::move(o), std::move(reason) + "; waiting: " + wait};
  }
  wait += w.spin_ns > 0 ? "spin up to " + us_text(w.spin_ns) + " (adaptive)" : "no spin";
  wait += w.yield_ns > 0 ? ", yield up to " + us_text(w.yield_ns) : ", no yield";
  wait += o.debug_timeout.count() > 0 ? ", then poll (debug mode)" : ", then block in a futex";
  return Prepared{algorithm, std::move(o), std::move(reason) + "; waiting: " + wait};
}

// With the calibration resolved into the options (fibo, combine).
Prepared prepare_sr(BarrierAlgorithm algorithm, int p, BarrierOptions o, const std::string& head) {
  const ResolvedSr x = resolve_sr(o);
  o.send_recv = x.sr;
  std::string reason = algorithm == BarrierAlgorithm::combine ? "combine: " + combine_text(x, p)
                                                              : head + sr_text(x);
  return prepare(algorithm, p, std::move(o), std::move(reason));
}

// Number of distinct L3 groups (package groups where the topology has no L3) that the placed
// ranks span, by the grouping the hier shape uses; 1 without a topology.
int groups_spanned(int p, const BarrierOptions& o) {
  std::shared_ptr<const Topology> topo = o.topology;
  if (!topo) {
    try {
      topo = std::make_shared<const Topology>(Topology::machine());
    } catch (const InputError&) {
      return 1;
    }
  }
  std::vector<int> pus;
  for (int r = 0; r < p; ++r) {
    const int pu = o.placement.empty() ? r % topo->pus() : o.placement[static_cast<std::size_t>(r)];
    if (pu < 0 || pu >= topo->pus()) return 1;
    pus.push_back(pu);
  }
  const auto groups = topology_groups(*topo, pus);
  const auto& level = groups[topo->l3_groups() > 0 ? kGroupLevelL3 : kGroupLevelPackage];
  return static_cast<int>(std::set<int>(level.begin(), level.end()).size());
}

Prepared choose(int p, BarrierOptions o) {
  if (p < 1) throw InputError("barrier: p must be at least 1, got " + std::to_string(p));
  const unsigned cpus = cpus_of(o);
  if (p == 1) return prepare(BarrierAlgorithm::central, p, std::move(o), "central: p = 1, nothing to wait for");
  if (o.fibers) {
    return prepare(BarrierAlgorithm::central, p, std::move(o),
                   "central: the " + std::to_string(p) +
                       " ranks are fibers: each waiting rank costs one switch out and one back, while a tree or "
                       "round wake-up among the fibers of one worker is a sequence of switches per level, so one "
                       "release word, and a counter per worker whose last arriver counts once on the shared one");
  }
  if (static_cast<unsigned>(p) > cpus) {
    return prepare(BarrierAlgorithm::central, p, std::move(o),
                   "central: " + std::to_string(p) + " threads on " + std::to_string(cpus) +
                       " allowed CPUs are oversubscribed: a tree or round wake-up would pass through descheduled "
                       "threads, so one counter and one release word that every waiter checks between yields");
  }
  if (p >= 4) {
    const int groups = groups_spanned(p, o);
    if (groups > 1) {
      return prepare(BarrierAlgorithm::hier, p, std::move(o),
                     "hier: the " + std::to_string(p) + " ranks span " + std::to_string(groups) +
                         " L3/package groups; binomial trees per topology level");
    }
  }
  if (p == 2) {
    return prepare(BarrierAlgorithm::tournament, p, std::move(o),
                   "tournament: 2 ranks on " + std::to_string(cpus) +
                       " allowed CPUs: one two-input match; the second arriver completes the phase and leaves at once, "
                       "where a round of combine or dissemination makes each rank wait for the other's message");
  }
  const ResolvedSr x = resolve_sr_saved(o);
  o.send_recv = x.sr;
  const int l = combine_rounds_lambda(x.sr, p);
  if (p <= 16 || l <= 2) {
    return prepare(BarrierAlgorithm::combine, p, std::move(o),
                   "combine: " + std::to_string(p) + " ranks on " + std::to_string(cpus) +
                       " allowed CPUs, one group; every rank learns completion itself in " + combine_text(x, p));
  }
  return prepare(BarrierAlgorithm::fibo, p, std::move(o),
                 "fibo: " + std::to_string(p) + " ranks with a large receive latency (" + sr_text(x) +
                     "): binomial arrival, Fibo-tree wake-up sends fewer messages than combine rounds");
}

}  // namespace

CentralBarrier::CentralBarrier(int p, BarrierOptions options)
    : BarrierBase(p, prepare(BarrierAlgorithm::central, p, std::move(options), "central: one counter and one release word")) {}

DisseminationBarrier::DisseminationBarrier(int p, BarrierOptions options)
    : BarrierBase(p, prepare(BarrierAlgorithm::dissemination, p, std::move(options),
                             "dissemination: ceil(log2 p) rounds to i + 2^k")) {}

CombineBarrier::CombineBarrier(int p, BarrierOptions options)
    : BarrierBase(p, prepare_sr(BarrierAlgorithm::combine, p, std::move(options), "")) {}

McsBarrier::McsBarrier(int p, BarrierOptions options)
    : BarrierBase(p, prepare(BarrierAlgorithm::mcs, p, std::move(options), "mcs: 4-ary combining arrival, binary wake-up")) {}

TournamentBarrier::TournamentBarrier(int p, BarrierOptions options)
    : BarrierBase(p, prepare(BarrierAlgorithm::tournament, p, std::move(options),
                             "tournament: binomial arrival as two-input matches, wake-up in reverse round order")) {}

FiboBarrier::FiboBarrier(int p, BarrierOptions options)
    : BarrierBase(p, prepare_sr(BarrierAlgorithm::fibo, p, std::move(options),
                                "fibo: binomial combining arrival, Fibo-tree wake-up from ")) {}

HierBarrier::HierBarrier(int p, BarrierOptions options)
    : BarrierBase(p, prepare(BarrierAlgorithm::hier, p, std::move(options),
                             "hier: binomial trees per topology level, across leaders first")) {}

Barrier::Barrier(int p, BarrierOptions options) : BarrierBase(p, choose(p, std::move(options))) {}

const std::vector<std::string>& barrier_names() {
  static const std::vector<std::string> names = {"default", "fibo",          "combine",    "central",
                                                 "dissemination", "mcs", "tournament", "hier"};
  return names;
}

std::unique_ptr<AnyBarrier> make_barrier(std::string_view name, int p, BarrierOptions options) {
  if (p < 1) throw InputError("barrier: p must be at least 1, got " + std::to_string(p));
  auto wrap = [&](BarrierBase&& b) { return std::make_unique<AnyBarrier>(std::move(b), std::string(name)); };
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
