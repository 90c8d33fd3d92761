// goal_parse.hpp: a GOAL text read in pieces (read_goal_schedule_in_pieces, what
// read_goal_schedule and read_goal_file do from 8 MiB on) gives the schedule the sequential
// reading gives, array for array, and the same error message at the same line; texts that do not
// allow pieces are read whole.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "../collectives/algo_table.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/emulator/schedule.hpp"
#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/plan_export.hpp"
#include "postbox/runtime/check.hpp"

#include "input_error.hpp"
#include "scratch_dir.hpp"

namespace postbox {
namespace {

void expect_same(const sim::Schedule& a, const sim::Schedule& b) {
  EXPECT_EQ(a.p, b.p);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.first, b.first);
  ASSERT_EQ(a.items.size(), b.items.size());
  for (std::size_t g = 0; g < a.items.size(); ++g) {
    EXPECT_EQ(a.items[g].size, b.items[g].size) << g;
    EXPECT_EQ(a.items[g].peer, b.items[g].peer) << g;
    EXPECT_EQ(a.items[g].kind, b.items[g].kind) << g;
  }
  EXPECT_EQ(a.dep_first, b.dep_first);
  EXPECT_EQ(a.deps, b.deps);
  EXPECT_EQ(a.idep_first, b.idep_first);
  EXPECT_EQ(a.ideps, b.ideps);
  EXPECT_EQ(a.round, b.round);
  EXPECT_EQ(a.tags, b.tags);
  EXPECT_EQ(a.lines, b.lines);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.label_pool, b.label_pool);
  EXPECT_EQ(a.pacing, b.pacing);
  EXPECT_EQ(a.pacing_latency, b.pacing_latency);
}

// Whether the text allows pieces (then 1-byte pieces are one per rank block), does not, or
// does only where no cut lands inside a block.
enum class Pieces { allowed, refused, either };
void expect_same_read(const std::string& text, Pieces allowed = Pieces::allowed) {
  const GoalRead whole = read_goal_schedule(text);
  EXPECT_EQ(whole.pieces, 0);  // small: read whole
  for (std::size_t piece : {1, 7, 64, 1000}) {
    SCOPED_TRACE("piece_bytes " + std::to_string(piece));
    const GoalRead pieces = read_goal_schedule_in_pieces(text, "goal", piece);
    if (allowed == Pieces::allowed) {
      EXPECT_GE(pieces.pieces, piece == 1 ? pieces.schedule.p : 1);
    }
    if (allowed == Pieces::refused) {
      EXPECT_EQ(pieces.pieces, 0);
    }
    expect_same(pieces.schedule, whole.schedule);
    EXPECT_EQ(pieces.mesh_rows, whole.mesh_rows);
    EXPECT_EQ(pieces.mesh_cols, whole.mesh_cols);
  }
}

// The error of the sequential reading, and the same from pieces.
void expect_same_error(const std::string& text) {
  std::string whole, pieces;
  try {
    (void)read_goal_schedule(text);
  } catch (const InputError& e) {
    whole = e.what();
  }
  ASSERT_FALSE(whole.empty()) << text;
  for (std::size_t piece : {1, 16, 100}) {
    try {
      (void)read_goal_schedule_in_pieces(text, "goal", piece);
    } catch (const InputError& e) {
      pieces = e.what();
    }
    EXPECT_EQ(pieces, whole) << "piece_bytes " << piece;
  }
}

TEST(GoalPieces, EveryExportedPlanReadsTheSameInPieces) {
  for (const auto& a : testing_support::kAlgos) {
    SCOPED_TRACE(std::string(a.op) + "/" + a.algo);
    PlanRequest req;
    req.op = a.op;
    req.algo = a.algo;
    req.p = 13;
    req.bytes = 24;
    req.elem_bytes = 8;
    req.lambda = Rational(2);
    expect_same_read(plan_to_goal(build_plan(req)));
  }
}

TEST(GoalPieces, LabelsCommentsRoundsAndRanksOutOfOrder) {
  expect_same_read(
      "// a comment\nnum_ranks 4\n// postbox: time-unit 1e-3\n"
      "rank 2 {\nfirst: calc 5 // a comment on an op's line\nl1: send 8b to 0 tag 3\nfirst requires l1\n}\n"
      "rank 0 {\n// postbox: round 2\nrecv 8b from 2 tag 3\nx: recv 4b from -1 tag -1\n}\n"
      "rank 3 {\nsend 4b to 0 tag 9\n}\n"
      "rank 1 {\na: calc 1\nb: calc 2\nb irequires a\n}\n");
}

TEST(GoalPieces, TextsThatDoNotAllowPiecesAreReadWhole) {
  // A block comment, a directive or num_ranks after a block, no rank block at all.
  expect_same_read("num_ranks 2\n/* a\nblock comment */\nrank 0 {\nsend 1b to 1\n}\nrank 1 {\nrecv 1b from 0\n}\n", Pieces::refused);
  expect_same_read("num_ranks 2\nrank 0 {\ncalc 1000\n}\n// postbox: time-unit 1e-3\nrank 1 {\ncalc 1\n}\n", Pieces::refused);
  expect_same_read("num_ranks 2\nrank 0 {\ncalc 1\n}\nnum_ranks 2\nrank 1 {\ncalc 1\n}\n", Pieces::refused);
  expect_same_read("num_ranks 3\n", Pieces::refused);
  // A label named rank, at the start of a line inside a block: a cut there is no block's start.
  expect_same_read("num_ranks 2\nrank 0 {\nrank: calc 1\nl1: calc 2\nrank requires l1\n}\nrank 1 {\ncalc 3\n}\n", Pieces::either);
}

TEST(GoalPieces, ErrorsAreTheSequentialReadingsAtTheSameLine) {
  expect_same_error("num_ranks 3\nrank 0 {\ncalc 1\n}\nrank 1 {\ncalc 1\n}\nrank 0 {\ncalc 2\n}\n");     // given twice
  expect_same_error("num_ranks 3\nrank 0 {\ncalc 1\n}\nrank 1 {\nsend 1b to 7\n}\nrank 2 {\ncalc x\n}\n");  // peer
  expect_same_error("num_ranks 2\nrank 0 {\ncalc 1\n}\nrank 1 {\ncalc 1\n");                               // not closed
  expect_same_error("num_ranks 2\nrank 0 {\nsend 1b to 1 tag -1\n}\nrank 1 {\nrecv 1b from 0\n}\n");        // finish()
  expect_same_error("num_ranks 2\nrank 0 {\nl0: calc 1\nl0 requires nope\n}\nrank 1 {\ncalc 1\n}\n");       // label
}

// goal_parse.hpp, read_goal_file: a file that is not a regular file is refused, a FIFO without
// waiting for a writer (a blocking open would hang here).
TEST(GoalFile, ADeviceOrAFifoIsRefusedWithoutWaiting) {
  using testing_support::input_error_of;
  EXPECT_EQ(input_error_of([] { (void)read_goal_file("/dev/zero", "zero"); }),
            "GOAL file '/dev/zero' is not a regular file");
  const testing_support::ScratchDir dir("postbox-goal-file-test");
  const std::string fifo = (dir.path() / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // (The message elides the middle of a long path.)
  const std::string message = input_error_of([&] { (void)read_goal_file(fifo, "fifo"); });
  EXPECT_THAT(message, ::testing::StartsWith("GOAL file '/"));
  EXPECT_THAT(message, ::testing::EndsWith("/fifo' is not a regular file"));
}

}  // namespace
}  // namespace postbox
