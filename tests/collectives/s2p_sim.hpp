// Test-only reference executor for plans: applies the matching rule of runtime/plan.hpp
// (k-th send from a to b ↔ k-th receive from a at b, sends to one peer and receives from one
// peer in program order) and the deps, picking among ready operations in a seeded random order,
// so exact-result tests do not depend on threads. Optionally checks that every pair of
// operations of one rank that touch overlapping bytes (one of them writing) is ordered by deps
// or by the per-peer program order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "postbox/runtime/plan.hpp"

namespace postbox::testing {

struct SimResult {
  std::vector<std::vector<std::uint8_t>> user;  // per rank, after the run
  std::string error;                            // empty when the plan ran to completion
};

inline SimResult simulate(const Plan& plan, std::vector<std::vector<std::uint8_t>> user, std::uint64_t seed) {
  SimResult res;
  const int p = plan.p;
  std::vector<std::vector<std::uint8_t>> scratch(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    if (user[static_cast<std::size_t>(r)].size() != plan.user_bytes[static_cast<std::size_t>(r)]) {
      res.error = "user buffer size mismatch at rank " + std::to_string(r);
      return res;
    }
    scratch[static_cast<std::size_t>(r)].assign(plan.scratch_bytes[static_cast<std::size_t>(r)], 0xEE);
  }
  // Global op ids; the edges in compressed rows (succ of id = succ[first[id] .. first[id + 1])).
  std::vector<std::size_t> base(static_cast<std::size_t>(p) + 1, 0);
  for (int r = 0; r < p; ++r) base[static_cast<std::size_t>(r) + 1] = base[static_cast<std::size_t>(r)] + plan.ops(r).size();
  const std::size_t n = base.back();
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  std::vector<int> indeg(n, 0);
  auto edge = [&](std::size_t a, std::size_t b) {
    edges.emplace_back(a, b);
    ++indeg[b];
  };
  std::map<std::pair<int, int>, std::vector<std::size_t>> sends, recvs;  // (from, to) → ops in program order
  for (int r = 0; r < p; ++r) {
    const RankOps ops = plan.ops(r);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const std::size_t id = base[static_cast<std::size_t>(r)] + i;
      for (auto d : ops[i].deps) {
        if (d >= i) {
          res.error = "dep does not point backwards";
          return res;
        }
        edge(base[static_cast<std::size_t>(r)] + d, id);
      }
      if (ops[i].code == OpCode::send) sends[{r, ops[i].peer}].push_back(id);
      if (ops[i].code == OpCode::recv) recvs[{ops[i].peer, r}].push_back(id);
    }
  }
  std::vector<std::size_t> match(n, SIZE_MAX);
  for (auto& [pr, v] : sends) {
    for (std::size_t k = 1; k < v.size(); ++k) edge(v[k - 1], v[k]);
    auto it = recvs.find(pr);
    if (it == recvs.end() || it->second.size() != v.size()) {
      res.error = "unmatched sends " + std::to_string(pr.first) + "->" + std::to_string(pr.second);
      return res;
    }
    for (std::size_t k = 0; k < v.size(); ++k) {
      edge(v[k], it->second[k]);
      match[it->second[k]] = v[k];
    }
  }
  for (auto& [pr, v] : recvs) {
    if (!sends.contains(pr)) {
      res.error = "receive without send";
      return res;
    }
    for (std::size_t k = 1; k < v.size(); ++k) edge(v[k - 1], v[k]);
  }
  std::vector<std::size_t> first(n + 1, 0);
  for (const auto& e : edges) ++first[e.first + 1];
  for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  std::vector<std::size_t> succ(edges.size());
  {
    std::vector<std::size_t> fill(first.begin(), first.end() - 1);
    for (const auto& e : edges) succ[fill[e.first]++] = e.second;
  }
  edges = {};
  auto rank_of = [&](std::size_t id) {
    return static_cast<int>(std::upper_bound(base.begin(), base.end(), id) - base.begin()) - 1;
  };
  auto mem = [&](int r, const Region& g) -> std::uint8_t* {
    auto& buf = g.buffer == Buffer::user ? user[static_cast<std::size_t>(r)] : scratch[static_cast<std::size_t>(r)];
    if (g.offset + g.bytes > buf.size()) return nullptr;
    return buf.data() + g.offset;
  };
  std::vector<std::vector<std::uint8_t>> in_flight(n);  // send id → payload
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (indeg[i] == 0) ready.push_back(i);
  }
  std::mt19937_64 g(seed);
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::size_t pick = static_cast<std::size_t>(g() % ready.size());
    const std::size_t id = ready[pick];
    ready[pick] = ready.back();
    ready.pop_back();
    const int r = rank_of(id);
    const OpView op = plan.ops(r)[id - base[static_cast<std::size_t>(r)]];
    std::uint8_t* a = mem(r, op.a);
    if (a == nullptr && op.a.bytes > 0) {
      res.error = "region outside its buffer at rank " + std::to_string(r);
      return res;
    }
    switch (op.code) {
      case OpCode::send:
        in_flight[id].assign(a, a + op.a.bytes);
        break;
      case OpCode::recv: {
        auto& payload = in_flight[match[id]];
        if (payload.size() != op.a.bytes) {
          res.error = "size mismatch on receive at rank " + std::to_string(r);
          return res;
        }
        if (!payload.empty()) std::memcpy(a, payload.data(), payload.size());
        payload = {};
        break;
      }
      case OpCode::copy:
      case OpCode::reduce: {
        std::uint8_t* b = mem(r, op.b);
        if ((b == nullptr && op.b.bytes > 0) || op.a.bytes != op.b.bytes) {
          res.error = "bad copy/reduce region at rank " + std::to_string(r);
          return res;
        }
        if (op.code == OpCode::copy) {
          if (op.a.bytes > 0) std::memmove(a, b, op.a.bytes);
        } else {
          for (std::uint64_t t = 0; t < op.a.bytes; ++t) a[t] = static_cast<std::uint8_t>(a[t] + b[t]);
        }
        break;
      }
    }
    ++done;
    for (std::size_t e = first[id]; e < first[id + 1]; ++e) {
      if (--indeg[succ[e]] == 0) ready.push_back(succ[e]);
    }
  }
  if (done != n) {
    res.error = "deadlock: " + std::to_string(n - done) + " operations never became ready";
    return res;
  }
  res.user = std::move(user);
  return res;
}

// First pair of unordered conflicting operations of one rank, or "" (the ordering is deps plus
// per-peer program order, in-rank only: sufficient, not necessary).
inline std::string find_race(const Plan& plan) {
  for (int r = 0; r < plan.p; ++r) {
    const RankOps ops = plan.ops(r);
    const std::size_t n = ops.size();
    const std::size_t words = (n + 63) / 64;
    std::vector<std::uint64_t> before(n * words, 0);  // before[j] has bit i when i precedes j
    std::map<std::pair<int, int>, std::size_t> last;   // (kind, peer) → last op
    for (std::size_t j = 0; j < n; ++j) {
      std::vector<std::size_t> preds(ops[j].deps.begin(), ops[j].deps.end());
      if (ops[j].code == OpCode::send || ops[j].code == OpCode::recv) {
        const std::pair<int, int> key{static_cast<int>(ops[j].code), ops[j].peer};
        if (auto it = last.find(key); it != last.end()) preds.push_back(it->second);
        last[key] = j;
      }
      for (std::size_t i : preds) {
        before[j * words + i / 64] |= std::uint64_t{1} << (i % 64);
        for (std::size_t w = 0; w < words; ++w) before[j * words + w] |= before[i * words + w];
      }
    }
    auto writes = [](const OpView& o) { return o.code != OpCode::send; };
    auto overlap = [](const Region& x, const Region& y) {
      return x.buffer == y.buffer && x.bytes > 0 && y.bytes > 0 && x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
    };
    auto touches = [&](const OpView& o, const Region& w) {
      return overlap(o.a, w) || ((o.code == OpCode::copy || o.code == OpCode::reduce) && overlap(o.b, w));
    };
    for (std::size_t j = 0; j < n; ++j) {
      if (!writes(ops[j])) continue;
      for (std::size_t i = 0; i < n; ++i) {
        if (i == j || !touches(ops[i], ops[j].a)) continue;
        const std::size_t lo = std::min(i, j), hi = std::max(i, j);
        if (!(before[hi * words + lo / 64] >> (lo % 64) & 1)) {
          return "rank " + std::to_string(r) + ": ops " + std::to_string(lo) + " and " + std::to_string(hi) + " race";
        }
      }
    }
  }
  return "";
}

}  // namespace postbox::testing
