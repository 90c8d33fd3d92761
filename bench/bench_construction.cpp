// Building λ-trees (Bruck et al. §2.3): the greedy two-queue O(n) construction, the bottom-up
// table of eq. 2 (O(f·log n) to build, plus O(n) to materialise), and build_tree(lambda) with the
// α look-up table (α-split recursion, Bruck §2.4), side by side for n up to 10^6.
// λ = 1.8 (f = 5); the nodes/s counter is the construction rate.
#include <benchmark/benchmark.h>

#include "postbox/collectives/postal.hpp"
#include "postbox/collectives/tree.hpp"

namespace {

const postbox::SendRecv kModel = postbox::SendRecv::from_lambda(postbox::Rational(9, 5));

// Nodes built per second.
void per_node(benchmark::State& state) {
  state.counters["nodes/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * static_cast<double>(state.range(0)), benchmark::Counter::kIsRate);
}

void BM_GreedyTwoQueue(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(postbox::greedy_two_queue_tree(n, kModel));
  per_node(state);
}

void BM_BottomUpTable(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(postbox::LambdaTreeTable::build(state.range(0), kModel));
  state.counters["table"] = static_cast<double>(postbox::LambdaTreeTable::build(state.range(0), kModel).table_size());
}

void BM_BottomUpMaterialize(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(postbox::LambdaTreeTable::build(state.range(0), kModel).materialize());
  per_node(state);
}

void BM_BuildTreeLambdaAuto(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  const postbox::ShapeSpec spec = postbox::ShapeSpec::parse("lambda");
  for (auto _ : state) benchmark::DoNotOptimize(postbox::build_tree(spec, n, 0, kModel));
  per_node(state);
}

void BM_BuildTreeFibo(benchmark::State& state) {
  const auto n = static_cast<int>(state.range(0));
  const postbox::ShapeSpec spec = postbox::ShapeSpec::parse("fibo");
  for (auto _ : state) benchmark::DoNotOptimize(postbox::build_tree(spec, n, 0, kModel));
  per_node(state);
}

}  // namespace

BENCHMARK(BM_GreedyTwoQueue)->RangeMultiplier(10)->Range(1000, 1'000'000)->Unit(benchmark::kMicrosecond)->MinTime(0.1);
BENCHMARK(BM_BottomUpTable)->RangeMultiplier(10)->Range(1000, 1'000'000)->Unit(benchmark::kMicrosecond)->MinTime(0.1);
BENCHMARK(BM_BottomUpMaterialize)->RangeMultiplier(10)->Range(1000, 1'000'000)->Unit(benchmark::kMicrosecond)->MinTime(0.1);
BENCHMARK(BM_BuildTreeLambdaAuto)->RangeMultiplier(10)->Range(1000, 1'000'000)->Unit(benchmark::kMicrosecond)->MinTime(0.1);
BENCHMARK(BM_BuildTreeFibo)->RangeMultiplier(10)->Range(1000, 1'000'000)->Unit(benchmark::kMicrosecond)->MinTime(0.1);

BENCHMARK_MAIN();
