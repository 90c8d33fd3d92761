// A network from a DOT file (flow_network.hpp, network_file.hpp): the reader, the routes, the
// fluid max-congestion model and the engine's use of it, against times computed by hand here.
#include "postbox/emulator/flow_network.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "postbox/emulator/machine.hpp"
#include "postbox/emulator/schedule.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/frontend/network_file.hpp"
#include "postbox/runtime/check.hpp"

#include "input_error.hpp"

namespace postbox::sim {
namespace {

constexpr Ticks kUs = kTicksPerUnit;  // the machines below are in microseconds

// Hosts H0..H3 on one switch S: every message crosses its sender's link up and its receiver's
// link down.
const char* const kStar = R"(digraph star {
  H0; H1; H2; H3;
  H0 -> S [comment="*"]; S -> H0 [comment="H0"];
  H1 -> S [comment="*"]; S -> H1 [comment="H1"];
  H2 -> S [comment="*"]; S -> H2 [comment="H2"];
  H3 -> S [comment="*"]; S -> H3 [comment="H3"];
})";

// H0, H1 on switch A; H2, H3 on switch B; one trunk each way between A and B.
const char* const kTrunk = R"(digraph trunk {
  H0; H1; H2; H3;
  H0 -> A [comment="*"]; H1 -> A [comment="*"]; H2 -> B [comment="*"]; H3 -> B [comment="*"];
  A -> H0 [comment="H0"]; A -> H1 [comment="H1"]; A -> B [comment="H2,H3"];
  B -> H2 [comment="H2"]; B -> H3 [comment="H3"]; B -> A [comment="H0 H1"];
})";

std::shared_ptr<const NetworkTopology> dot(const char* text) { return parse_network_dot(text, "test.dot"); }

// L = 10 µs, o = 1 µs, g = 0, G = 1 µs per byte: a message of 101 bytes has 100 µs of bytes after
// its first (LogGP charges (b - 1)·G).
Machine logp(std::shared_ptr<const NetworkTopology> net) {
  Machine m = load_machine("logp:10:1:0:1");
  m.network = std::move(net);
  return m;
}

SimResult run(const std::string& goal, const Machine& m) { return simulate(read_goal_schedule(goal).schedule, m); }

Ticks finish(const SimResult& r, int rank) { return r.per_rank_ticks[static_cast<std::size_t>(rank)]; }

using testing_support::input_error_of;

TEST(FlowNetworkTest, SingleMessageTakesWhatLogGPGives) {
  const std::string goal = "num_ranks 2\nrank 0 {\nl1: send 101b to 1 tag 0\n}\nrank 1 {\nl1: recv 101b from 0 tag 0\n}\n";
  // LogGP: o + L + (b - 1)·G + o = 1 + 10 + 100 + 1.
  const Ticks expected = 112 * kUs;
  const SimResult with = run(goal, logp(dot(kStar)));
  const SimResult without = run(goal, logp(nullptr));
  EXPECT_EQ(finish(with, 1), expected);
  EXPECT_EQ(finish(without, 1), expected);
  EXPECT_EQ(with.max_link_flows, 1u);
  EXPECT_EQ(with.slowed_flows, 0u);
}

TEST(FlowNetworkTest, TwoMessagesOnOneLinkTakeTwiceTheWireTime) {
  // H0 -> H2 and H1 -> H3 both cross the trunk A -> B from t = 0: each moves at half speed, so
  // its 100 µs of bytes take 200 µs; it arrives o + L after, and the receive takes o.
  const std::string goal =
      "num_ranks 4\nrank 0 {\nl1: send 101b to 2 tag 0\n}\nrank 1 {\nl1: send 101b to 3 tag 0\n}\n"
      "rank 2 {\nl1: recv 101b from 0 tag 0\n}\nrank 3 {\nl1: recv 101b from 1 tag 0\n}\n";
  const SimResult r = run(goal, logp(dot(kTrunk)));
  EXPECT_EQ(finish(r, 2), (200 + 1 + 10 + 1) * kUs);
  EXPECT_EQ(finish(r, 3), (200 + 1 + 10 + 1) * kUs);
  EXPECT_EQ(r.max_link_flows, 2u);
  EXPECT_EQ(r.slowed_flows, 2u);
  // On the star the two share no link: each takes what it takes alone.
  const SimResult star = run(goal, logp(dot(kStar)));
  EXPECT_EQ(finish(star, 2), 112 * kUs);
  EXPECT_EQ(finish(star, 3), 112 * kUs);
}

TEST(FlowNetworkTest, MessageStartingWhenAnotherIsHalfDone) {
  // A (H0 -> H2) starts at 0; B (H1 -> H3) after a calc of 50 µs, when A has 50 µs of bytes left.
  // Both at half speed: A's 50 take 100 µs, A ends at 150; B has done 50 by then, its last 50
  // alone end at 200.
  const std::string goal =
      "num_ranks 4\nrank 0 {\nl1: send 101b to 2 tag 0\n}\n"
      "rank 1 {\nl1: calc 50\nl2: send 101b to 3 tag 0\nl2 requires l1\n}\n"
      "rank 2 {\nl1: recv 101b from 0 tag 0\n}\nrank 3 {\nl1: recv 101b from 1 tag 0\n}\n";
  const SimResult r = run(goal, logp(dot(kTrunk)));
  EXPECT_EQ(finish(r, 2), (150 + 11 + 1) * kUs);
  EXPECT_EQ(finish(r, 3), (200 + 11 + 1) * kUs);
}

TEST(FlowNetworkTest, AllToOneOnAStar) {
  // H1, H2, H3 send to H0 at 0: the three share S -> H0, each at a third of full speed, and all
  // end at 300 µs; they arrive at 311 and rank 0 accepts them one after the other (o each, g = 0).
  const std::string goal =
      "num_ranks 4\nrank 0 {\nl1: recv 101b from 1 tag 0\nl2: recv 101b from 2 tag 0\nl3: recv 101b from 3 tag 0\n}\n"
      "rank 1 {\nl1: send 101b to 0 tag 0\n}\nrank 2 {\nl1: send 101b to 0 tag 0\n}\nrank 3 {\nl1: send 101b to 0 tag 0\n}\n";
  const SimResult r = run(goal, logp(dot(kStar)));
  EXPECT_EQ(finish(r, 0), (300 + 11 + 3) * kUs);
  EXPECT_EQ(r.max_link_flows, 3u);
  // Without the network (LogGP): all arrive at 11, and each accept keeps the CPU o + (b - 1)·G =
  // 101 µs (longer than the gap g + (b - 1)·G), one after the other.
  const SimResult loggp = run(goal, logp(nullptr));
  EXPECT_EQ(finish(loggp, 0), (11 + 3 * 101) * kUs);
}

TEST(FlowNetworkTest, MessagesSharingNoLinkGiveLogGPsTimes) {
  // The binomial broadcast over the star: the root's two sends are spaced by its gap
  // g + (b - 1)·G, so they never share its link up; rank 2's send to 3 shares no link with the
  // root's to 1. With O = 0 every rank finishes when LogGP says: rank 2 receives at o + L +
  // (b - 1)·G + o = 1 + 10 + 1000 + 1 = 1012 and its send keeps it o more; rank 1 receives 1012
  // after the root's second send starts at g + 1000 = 1000, and rank 3 1012 after rank 2's
  // send starts at 1012.
  const std::string goal =
      "num_ranks 4\nrank 0 {\nl1: send 1001b to 2 tag 0\nl2: send 1001b to 1 tag 0\nl2 requires l1\n}\n"
      "rank 1 {\nl1: recv 1001b from 0 tag 0\n}\n"
      "rank 2 {\nl1: recv 1001b from 0 tag 0\nl2: send 1001b to 3 tag 0\nl2 requires l1\n}\n"
      "rank 3 {\nl1: recv 1001b from 2 tag 0\n}\n";
  const SimResult with = run(goal, logp(dot(kStar)));
  const SimResult without = run(goal, logp(nullptr));
  EXPECT_EQ(finish(with, 2), (1012 + 1) * kUs);
  EXPECT_EQ(finish(with, 1), (1000 + 1012) * kUs);
  EXPECT_EQ(finish(with, 3), (1012 + 1012) * kUs);
  EXPECT_EQ(with.per_rank_ticks, without.per_rank_ticks);
  EXPECT_EQ(with.slowed_flows, 0u);
}

TEST(FlowNetworkTest, ModelDirectly) {
  // Flows on the trunk: a from 0 with 10 ticks of work, b from 4 with 10: a has 6 left at 4, at
  // half speed until 16; b has done 6 by then, its last 4 alone end at 20.
  FlowNetwork net(dot(kTrunk), 4);
  net.insert(0, 0, 2, 10, 7);
  net.insert(4, 1, 3, 10, 8);
  ASSERT_FALSE(net.empty());
  EXPECT_EQ(net.next_time(), 16);
  const FlowNetwork::Ended a = net.pop();
  EXPECT_EQ(a.t, 16);
  EXPECT_EQ(a.msg, 7u);
  const FlowNetwork::Ended b = net.pop();
  EXPECT_EQ(b.t, 20);
  EXPECT_EQ(b.msg, 8u);
  EXPECT_TRUE(net.empty());
}

TEST(FlowNetworkTest, ThirdsRoundUpToWholeTicks) {
  // Three flows of 1 tick of work on S -> H0: each does 1/3 tick per tick (floor(10^6 / 3) of
  // 10^6 per tick), so the first whole tick at which the work is done is 3, for all three.
  FlowNetwork net(dot(kStar), 4);
  for (int s = 1; s <= 3; ++s) net.insert(0, s, 0, 1, static_cast<std::uint32_t>(s));
  for (std::uint32_t s = 1; s <= 3; ++s) {
    const FlowNetwork::Ended e = net.pop();
    EXPECT_EQ(e.t, 3);
    EXPECT_EQ(e.msg, s);  // ties: the one inserted first
  }
}

TEST(FlowNetworkTest, RoutesFollowComments) {
  const auto fat = read_network_file(POSTBOX_SOURCE_DIR "/examples/fat_tree_8.dot");
  ASSERT_EQ(fat->hosts(), 8);
  const Routes routes(fat);
  auto names = [&](int s, int d) {
    std::string out = fat->node_names[static_cast<std::size_t>(fat->host_nodes[static_cast<std::size_t>(s)])];
    for (std::int32_t l : routes.route(s, d)) out += ">" + fat->node_names[static_cast<std::size_t>(fat->links[static_cast<std::size_t>(l)].to)];
    return out;
  };
  EXPECT_EQ(names(0, 1), "H0>L0>H1");        // same leaf: no spine
  EXPECT_EQ(names(0, 3), "H0>L0>S1>L1>H3");  // odd destination: spine S1
  EXPECT_EQ(names(5, 6), "H5>L2>S0>L3>H6");  // even destination: spine S0
  EXPECT_TRUE(routes.route(4, 4).empty());
}

TEST(FlowNetworkTest, ExampleFatTreeAllToAllIsDeterministic) {
  const auto fat = read_network_file(POSTBOX_SOURCE_DIR "/examples/fat_tree_8.dot");
  std::string goal = "num_ranks 8\n";
  for (int r = 0; r < 8; ++r) {
    goal += "rank " + std::to_string(r) + " {\n";
    for (int d = 0; d < 8; ++d)
      if (d != r) goal += "s" + std::to_string(d) + ": send 1001b to " + std::to_string(d) + " tag 0\n";
    for (int s = 0; s < 8; ++s)
      if (s != r) goal += "r" + std::to_string(s) + ": recv 1001b from " + std::to_string(s) + " tag 0\n";
    goal += "}\n";
  }
  Machine m = load_machine("logp:5:1:0:0.01");
  m.network = fat;
  const SimResult a = run(goal, m);
  const SimResult b = run(goal, m);
  EXPECT_EQ(a.per_rank_ticks, b.per_rank_ticks);
  SimOptions reference;
  reference.reference_queue = true;
  const SimResult c = simulate(read_goal_schedule(goal).schedule, m, reference);
  EXPECT_EQ(a.per_rank_ticks, c.per_rank_ticks);
  EXPECT_GT(a.slowed_flows, 0u);
}

TEST(FlowNetworkTest, BadFilesAreOneLineErrors) {
  EXPECT_NE(input_error_of([] { dot("digraph { H0 -> S [comment=\"H1\""); }).find("test.dot': not a DOT graph"), std::string::npos);
  EXPECT_NE(input_error_of([] { dot("graph { H0 -- H1 }"); }).find("undirected"), std::string::npos);
  EXPECT_NE(input_error_of([] { dot("digraph { A -> B }"); }).find("no host"), std::string::npos);
  EXPECT_NE(input_error_of([] { dot("digraph { H0 -> H1 [comment=\"H7\"] }"); }).find("names 'H7', which is not a node"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { dot(""); }).find("not a DOT graph"), std::string::npos);
  EXPECT_EQ(input_error_of([] { read_network_file("/no/such/file.dot"); }), "network file '/no/such/file.dot': no such file");
  EXPECT_EQ(input_error_of([] { read_network_file("/"); }), "network file '/' is not a regular file");
  // Fewer hosts than ranks.
  EXPECT_EQ(input_error_of([] { FlowNetwork(dot(kStar), 5); }),
            "network file 'test.dot' has 4 hosts (nodes named H...), fewer than p = 5");
  // A loop: S1 sends H1's messages back to S0, which sends them to S1.
  const auto loop = dot("digraph { H0; H1; H0 -> S0; S0 -> S1 [comment=\"H1\"]; S0 -> H0 [comment=\"H0\"];"
                        " S1 -> S0 [comment=\"H1\"]; S1 -> H1 [comment=\"H0\"] }");
  EXPECT_NE(input_error_of([&] { (void)Routes(loop).route(0, 1); }).find("(a routing loop)"), std::string::npos);
  // No link routes the destination at S.
  const auto lost = dot("digraph { H0; H1; H0 -> S; S -> H0 [comment=\"H0\"]; S -> X [comment=\"H0\"]; H1 -> S }");
  EXPECT_EQ(input_error_of([&] { (void)Routes(lost).route(0, 1); }),
            "network file 'test.dot': the route from H0 (rank 0) to H1 (rank 1) reaches node S, none of whose 2 links "
            "names H1 in its comment (nor is \"*\")");
  // A dead end.
  const auto dead = dot("digraph { H0; H1; H0 -> S; H1 -> S }");
  EXPECT_NE(input_error_of([&] { (void)Routes(dead).route(0, 1); }).find("reaches node S, which has no outgoing link"), std::string::npos);
  // In a run: the error of the first message that needs the route.
  EXPECT_NE(input_error_of([&] { run("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\nrank 1 {\nl1: recv 8b from 0 tag 0\n}\n", logp(dead)); })
                .find("which has no outgoing link"),
            std::string::npos);
  // Only a logp machine takes a network.
  Machine postal = load_machine("postal:2");
  postal.network = dot(kStar);
  EXPECT_NE(input_error_of([&] { run("num_ranks 1\nrank 0 {\nl1: calc 1\n}\n", postal); }).find("needs a logp machine"),
            std::string::npos);
  Machine cluster = load_machine("cluster:2x2");
  cluster.network = dot(kStar);
  EXPECT_NE(input_error_of([&] { run("num_ranks 1\nrank 0 {\nl1: calc 1\n}\n", cluster); }).find("needs a logp machine"),
            std::string::npos);
}

}  // namespace
}  // namespace postbox::sim
