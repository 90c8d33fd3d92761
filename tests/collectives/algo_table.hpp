// Every (op, algorithm) of the built-in bcast/reduce/gather/allreduce plans: the grid that
// plans_test (plans validated, run symbolically) and ops_test (run on threads) both sweep.
#pragma once

#include <vector>

namespace postbox::testing_support {

struct Algo {
  const char* op;
  const char* algo;
};

inline const std::vector<Algo> kAlgos{
    {"bcast", "flat"},        {"bcast", "binary"},       {"bcast", "kary:3"},
    {"bcast", "binomial"},    {"bcast", "lambda"},       {"bcast", "greedy"},
    {"bcast", "fibo"},        {"bcast", "hier"},         {"reduce", "binomial"},
    {"gather", "binomial"},   {"allreduce", "postal"},   {"allreduce", "postal-delay-recv"},
    {"allreduce", "postal-delay-send"}, {"allreduce", "recursive-doubling"}, {"allreduce", "reduce-bcast"},
};

}  // namespace postbox::testing_support
