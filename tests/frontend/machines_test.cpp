// Machine profiles and model strings: the shipped profiles load; bad input names the field.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::sim {
namespace {

const char* kGoodMesh = R"(
name = "tiny"
[model]
kind = "mesh"
[mesh]
dims = [2, 3]
wrap = false
switching = "wormhole"
packet_bytes = 512
header_bytes = 32
link_mb_per_s = 25
router_delay_us = 0.1
send_buffer_packets = 1
[host]
send = "blocking"
send_overhead = { base_us = 35 }
isend_overhead = { base_us = 35, per_byte_us = 0.0 }
recv_overhead = { base_us = 30, per_packet_us = 1.5 }
[placement]
kind = "snake"
)";

TEST(Profile, ParsesAMeshProfile) {
  const Machine m = parse_profile(kGoodMesh, "tiny.toml");
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.kind, ModelKind::mesh);
  EXPECT_EQ(m.mesh.dims, (std::vector<int>{2, 3}));
  EXPECT_EQ(m.mesh.nodes(), 6);
  EXPECT_EQ(m.mesh.packet_bytes, 512U);
  EXPECT_DOUBLE_EQ(m.mesh.link_bytes_per_us, 25);
  EXPECT_EQ(m.send_mode, SendMode::blocking);
  EXPECT_DOUBLE_EQ(m.recv_overhead.at(1000, 2), 33);
  EXPECT_EQ(m.placement.kind, PlacementKind::snake);
  EXPECT_EQ(place_ranks(m.mesh, m.placement, 6), (std::vector<std::int64_t>{0, 1, 2, 5, 4, 3}));
}

struct BadProfile {
  const char* file;
  int line;
  std::string from;  // text replaced in kGoodMesh
  std::string to;
  std::string expect;  // must appear in the message
};

class BadProfiles : public ::testing::TestWithParam<BadProfile> {};

TEST_P(BadProfiles, NameTheField) {
  const BadProfile& c = GetParam();
  SCOPED_TRACE(std::string(c.file) + ":" + std::to_string(c.line));
  std::string text = kGoodMesh;
  const auto pos = text.find(c.from);
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, c.from.size(), c.to);
  try {
    (void)parse_profile(text, "bad.toml");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadProfiles,
    ::testing::Values(
        BadProfile{__FILE__, __LINE__, "packet_bytes = 512\n", "", "missing field 'mesh.packet_bytes'"},
        BadProfile{__FILE__, __LINE__, "link_mb_per_s = 25", "link_mb_per_s = -25", "'mesh.link_mb_per_s' must not be negative"},
        BadProfile{__FILE__, __LINE__, "router_delay_us = 0.1", "router_delay_us = \"fast\"", "'mesh.router_delay_us' must be a number"},
        BadProfile{__FILE__, __LINE__, "send_overhead = { base_us = 35 }", "send_overhead = { base_us = -1 }", "'host.send_overhead.base_us' must not be negative"},
        BadProfile{__FILE__, __LINE__, "recv_overhead = { base_us = 30, per_packet_us = 1.5 }", "", "missing table 'host.recv_overhead'"},
        BadProfile{__FILE__, __LINE__, "wrap = false", "wrap = false\nbandwidth = 3", "unknown field 'mesh.bandwidth'"},
        BadProfile{__FILE__, __LINE__, "wrap = false", "wrap = 0", "'mesh.wrap' must be true or false"},
        BadProfile{__FILE__, __LINE__, "dims = [2, 3]", "dims = [2, 0]", "'mesh.dims'"},
        BadProfile{__FILE__, __LINE__, "dims = [2, 3]", "dims = 6", "'mesh.dims' must be an array"},
        BadProfile{__FILE__, __LINE__, "switching = \"wormhole\"", "switching = \"cut-through\"", "'mesh.switching'"},
        BadProfile{__FILE__, __LINE__, "kind = \"mesh\"", "kind = \"hypercube\"", "'model.kind'"},
        BadProfile{__FILE__, __LINE__, "send = \"blocking\"", "send = \"sometimes\"", "'host.send'"},
        BadProfile{__FILE__, __LINE__, "kind = \"snake\"", "kind = \"spiral\"", "'placement.kind'"},
        BadProfile{__FILE__, __LINE__, "name = \"tiny\"", "", "missing field 'name'"},
        BadProfile{__FILE__, __LINE__, "[model]", "[model", "TOML syntax error"},
        // Non-ASCII where toml++ 3.3 asks whether it is whitespace (undefined behaviour there):
        // refused before toml++ sees the text, naming the line.
        BadProfile{__FILE__, __LINE__, "wrap = false", "wrap = false\nsend_us \xc3\xb6" "der = 1",
                   "bad.toml: line 8: a non-ASCII character outside a string or comment"},
        BadProfile{__FILE__, __LINE__, "name = \"tiny\"", "name = \"tiny\" \xc2\xb5", "line 2: a non-ASCII character outside"},
        BadProfile{__FILE__, __LINE__, "name = \"tiny\"", "\xc2\xa7name = \"tiny\"", "line 2: a non-ASCII character outside"},
        BadProfile{__FILE__, __LINE__, "name = \"tiny\"", "name = \"tiny\"\ndescription = \"\"\"a \\\n  \xc2\xb5s\"\"\"",
                   "line 4: a non-ASCII character after a line-ending backslash in a multi-line string"},
        BadProfile{__FILE__, __LINE__, "name = \"tiny\"", "name = \"tiny\"\ndescription = \"\"\"a\\\xc2\xb5\"\"\"",
                   "line 3: a non-ASCII character right after a backslash in a multi-line string"},
        // After a string closed by four quotes (the first is content), the scan is outside again.
        BadProfile{__FILE__, __LINE__, "name = \"tiny\"", "name = \"tiny\"\ndescription = \"\"\"a\"\"\"\"\xc2\xb5",
                   "line 3: a non-ASCII character outside"},
        // A table header not starting with a key fails an assertion inside toml++ (found by
        // the profile fuzz target in the ASan tree).
        BadProfile{__FILE__, __LINE__, "[model]", "[{model]", "bad.toml: line 3: a table header must start with a key"},
        BadProfile{__FILE__, __LINE__, "[model]", "[[ .model]]", "bad.toml: line 3: a table header must start with a key"}));

// Non-ASCII is TOML's inside strings and comments, and stays allowed there.
TEST(Profile, NonAsciiInStringsAndCommentsIsAccepted) {
  std::string text = kGoodMesh;
  const std::string from = "name = \"tiny\"";
  // A '[' first on a line inside a multi-line array is no table header.
  const std::string table = "\n[\"\xc2\xb5\"]\nkey = '''\xc2\xb5 \\ \xc2\xb5'''\nnested = [\n[1, 2],\n  [ ],\n]";
  text.replace(text.find(from), from.size(),
               "# 27 \xc2\xb5s, \xc2\xa7" "5 \"\n"
               "name = \"tiny \xc2\xb5\" # \xc3\xb6\n"
               "description = \"\"\"\xc2\xb5s \\\"\xc2\xb5\\\" \\\n  x \xc2\xb5 \"\"\xc2\xb5\"\"\"\" # \xc2\xb5" +
                   table);
  // The extra table is an unknown field, named as such: the text got past the check and toml++.
  try {
    (void)parse_profile(text, "ok.toml");
    FAIL() << "accepted an unknown table";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown field"), std::string::npos) << e.what();
  }
  text.erase(text.find(table), table.size());
  EXPECT_EQ(parse_profile(text, "ok.toml").name, "tiny \xc2\xb5");
}

TEST(Profile, ModelStrings) {
  EXPECT_EQ(load_machine("postal:1.8").kind, ModelKind::postal);
  EXPECT_DOUBLE_EQ(load_machine("postal:1.8").lambda, 1.8);
  const Machine sr = load_machine("sr:27:88");
  EXPECT_DOUBLE_EQ(nominal_lambda(sr, 1), 1 + 88.0 / 27);
  const Machine lg = load_machine("logp:5:2:3:0.5");
  EXPECT_DOUBLE_EQ(lg.L, 5);
  EXPECT_DOUBLE_EQ(lg.G, 0.5);
  for (const char* bad : {"postal:0.5", "postal:x", "postal", "sr:0:3", "sr:1", "logp:1:2:3", "logp:1:2:3:-4",
                          "no-such-machine", "/no/such/file.toml", ""}) {
    EXPECT_THROW((void)load_machine(bad), InputError) << bad;
  }
}

// LogGOPS's O and S follow logp's numbers (and its C) as O=X and S=N, each once, in either order;
// strings without them keep their meaning (O = 0, no rendezvous). Every problem is one line
// naming the string.
TEST(Profile, LogGOPSStrings) {
  const Machine plain = load_machine("logp:5:2:3:0.5:0.25");
  EXPECT_EQ(plain.O, 0);
  EXPECT_EQ(plain.S, kAlwaysEager);
  EXPECT_EQ(plain.reduce_us_per_byte, 0.25);
  const Machine both = load_machine("logp:5:2:3:0.5:S=65535:O=0.001");
  EXPECT_EQ(both.O, 0.001);
  EXPECT_EQ(both.S, 65535U);
  EXPECT_EQ(both.reduce_us_per_byte, 0);
  EXPECT_EQ(both.G, 0.5);
  const Machine withc = load_machine("logp:5:2:3:0.5:0.25:O=1:S=0");
  EXPECT_EQ(withc.reduce_us_per_byte, 0.25);
  EXPECT_EQ(withc.O, 1);
  EXPECT_EQ(withc.S, 0U);
  EXPECT_EQ(load_machine("logp:5:2:3:0.5:S=1000000000").S, 1000000000U);
  const std::pair<const char*, const char*> bad[] = {
      {"logp:5:2:3:0.5:O=1:0.25", "the numbers come before O= and S="},
      {"logp:5:2:3:0.5:O=1:O=2", "gives O= twice"},
      {"logp:5:2:3:0.5:X=1", "takes O= and S=, not 'X='"},
      {"logp:5:2:3:O=1", "takes 4 or 5 numbers"},
      {"logp:5:2:3:0.5:O=-1", "logp O must not be negative"},
      {"logp:5:2:3:0.5:O=", "logp O"},
      {"logp:5:2:3:0.5:S=1.5", "logp S"},
      {"logp:5:2:3:0.5:S=-1", "logp S must not be negative"},
      {"logp:5:2:3:0.5:S=1000000001", "logp S must be at most 1000000000"},
      {"postal:2:S=3", "postal"},
  };
  for (const auto& [spec, expect] : bad) {
    try {
      (void)load_machine(spec);
      ADD_FAILURE() << spec << " accepted";
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(expect), std::string::npos) << spec << ": " << msg;
      EXPECT_NE(msg.find(spec), std::string::npos) << spec << ": " << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos);
    }
  }
}

TEST(Profile, LogGOPSFields) {
  const char* text = "name = \"g\"\n[model]\nkind = \"logp\"\nL_us = 5\no_us = 2\ng_us = 3\nG_us_per_byte = 0.5\n"
                     "O_us_per_byte = 0.25\nS_bytes = 4096\n";
  const Machine m = parse_profile(text, "g.toml");
  EXPECT_EQ(m.O, 0.25);
  EXPECT_EQ(m.S, 4096U);
  const Machine plain = parse_profile("name = \"g\"\n[model]\nkind = \"logp\"\nL_us = 5\no_us = 2\ng_us = 3\n"
                                      "G_us_per_byte = 0.5\n",
                                      "g.toml");
  EXPECT_EQ(plain.O, 0);
  EXPECT_EQ(plain.S, kAlwaysEager);
  for (const auto& [field, expect] : {std::pair{"S_bytes = 1.5", "field 'model.S_bytes' must be an integer"},
                                      std::pair{"S_bytes = -1", "field 'model.S_bytes' must not be negative"},
                                      std::pair{"O_us_per_byte = -1", "field 'model.O_us_per_byte' must not be negative"}}) {
    try {
      (void)parse_profile("name = \"g\"\n[model]\nkind = \"logp\"\nL_us = 5\no_us = 2\ng_us = 3\nG_us_per_byte = 0.5\n" +
                              std::string(field) + "\n",
                          "g.toml");
      ADD_FAILURE() << field << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
  }
}

// A profile path that names a FIFO is refused without opening it (the read would wait for a
// writer); a hang here is the watchdog's.
TEST(Profile, AFifoIsRefusedNotRead) {
  const std::string fifo =
      (std::filesystem::temp_directory_path() / ("postbox_profile_fifo." + std::to_string(::getpid()) + ".toml")).string();
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string message;
  try {
    (void)load_machine(fifo);
  } catch (const InputError& e) {
    message = e.what();
  }
  std::remove(fifo.c_str());
  EXPECT_EQ(message, "machine '" + fifo + "' is not a regular file");
}

TEST(Profile, ShippedProfilesLoadByName) {
  for (const char* name : {"delta", "paragon", "t3d", "manna", "cluster-example"}) {
    const Machine m = load_machine(name);
    EXPECT_EQ(m.name, name);
  }
  EXPECT_EQ(load_machine("delta").mesh.dims, (std::vector<int>{16, 32}));
  EXPECT_EQ(load_machine("delta").mesh.packet_bytes, 512U);
  EXPECT_EQ(load_machine("delta").mesh.header_bytes, 32U);
  EXPECT_TRUE(load_machine("t3d").mesh.wrap);
  EXPECT_EQ(load_machine("t3d").mesh.dims.size(), 3U);
  EXPECT_DOUBLE_EQ(load_machine("manna").send_us, 27);
  EXPECT_DOUBLE_EQ(load_machine("manna").recv_us, 88);
}

TEST(Placement, RandomIsASeededPermutation) {
  MeshSpec mesh;
  mesh.dims = {8, 8};
  const auto a = place_ranks(mesh, parse_placement("random", 7), 64);
  EXPECT_EQ(a, place_ranks(mesh, parse_placement("random", 7), 64));
  EXPECT_NE(a, place_ranks(mesh, parse_placement("random", 8), 64));
  std::vector<bool> seen(64, false);
  for (auto n : a) seen[static_cast<std::size_t>(n)] = true;
  for (bool s : seen) EXPECT_TRUE(s);
}

TEST(Placement, ListAndErrors) {
  MeshSpec mesh;
  mesh.dims = {2, 2};
  EXPECT_EQ(place_ranks(mesh, parse_placement("list:3,1,0", 1), 3), (std::vector<std::int64_t>{3, 1, 0}));
  EXPECT_THROW((void)place_ranks(mesh, parse_placement("list:3,3", 1), 2), InputError);
  EXPECT_THROW((void)place_ranks(mesh, parse_placement("list:4", 1), 1), InputError);
  EXPECT_THROW((void)place_ranks(mesh, parse_placement("row-major", 1), 5), InputError);
  EXPECT_THROW((void)parse_placement("diagonal", 1), InputError);
  EXPECT_EQ(parse_dims("16x32", "--mesh"), (std::vector<int>{16, 32}));
  EXPECT_THROW((void)parse_dims("16by32", "--mesh"), InputError);
}

// Regression: huge numbers gave "time inf us" and huge dims bad_alloc or, with
// overflow, a wrong node count; both are refused naming the field.
TEST(Profile, NumbersAndDimsAreBounded) {
  std::string delay = kGoodMesh;
  delay.replace(delay.find("router_delay_us = 0.1"), 21, "router_delay_us = 1e300");
  EXPECT_THROW((void)parse_profile(delay, "t.toml"), InputError);
  std::string dims = kGoodMesh;
  dims.replace(dims.find("dims = [2, 3]"), 13, "dims = [100000, 100000]");
  EXPECT_THROW((void)parse_profile(dims, "t.toml"), InputError);
  EXPECT_THROW((void)parse_dims("5213847x13009525x1257271x4553488x12375613", "--mesh"), InputError);
  EXPECT_THROW((void)parse_dims("2x2x2x2x2x2x2", "--mesh"), InputError);
  EXPECT_EQ(parse_dims("32768x32768", "--mesh"), (std::vector<int>{32768, 32768}));
  EXPECT_THROW((void)load_machine("logp:1:1:1:1e300"), InputError);
  EXPECT_THROW((void)load_machine("postal:nan"), InputError);
  EXPECT_THROW((void)load_machine("/"), InputError);
}

// ---- the cluster machine ----

const char* kGoodCluster = R"(
name = "c"
description = "two levels"
[model]
kind = "cluster"
[cluster]
nodes = 4
cores_per_node = 8
[intra]
kind = "sr"
send_us = 0.2
recv_us = 0.5
[inter]
kind = "logp"
L_us = 1.5
o_us = 0.5
g_us = 0.8
G_us_per_byte = 0.0001
[host]
reduce_us_per_byte = 0.001
[calibration]
anything = "free-form"
)";

TEST(Cluster, ParsesBothLevels) {
  const Machine m = parse_profile(kGoodCluster, "c.toml");
  EXPECT_EQ(m.kind, ModelKind::cluster);
  EXPECT_EQ(m.cluster.nodes, 4);
  EXPECT_EQ(m.cluster.cores_per_node, 8);
  ASSERT_EQ(m.levels.size(), 2U);
  EXPECT_EQ(m.levels[0].kind, ModelKind::send_recv);
  EXPECT_EQ(m.levels[0].send_us, 0.2);
  EXPECT_EQ(m.levels[0].recv_us, 0.5);
  EXPECT_EQ(m.levels[1].kind, ModelKind::loggp);
  EXPECT_EQ(m.levels[1].L, 1.5);
  EXPECT_EQ(m.levels[1].G, 0.0001);
  EXPECT_EQ(m.reduce_us_per_byte, 0.001);
  EXPECT_EQ(m.cluster.node_of(7), 0);  // rank r on node r / cores_per_node
  EXPECT_EQ(m.cluster.node_of(8), 1);
}

// A cluster level of kind logp takes LogGOPS's fields too.
TEST(Cluster, ALogpLevelTakesOAndS) {
  std::string cluster = kGoodCluster;
  cluster.replace(cluster.find("G_us_per_byte = 0.0001"), 22, "G_us_per_byte = 0.0001\nS_bytes = 64\nO_us_per_byte = 0.5");
  const Machine c = parse_profile(cluster, "c.toml");
  EXPECT_EQ(c.levels[1].S, 64U);
  EXPECT_EQ(c.levels[1].O, 0.5);
  EXPECT_TRUE(has_rendezvous(c));
  EXPECT_FALSE(has_rendezvous(parse_profile(kGoodCluster, "c.toml")));
}

TEST(Cluster, BadFieldsNameTheField) {
  const std::pair<std::pair<const char*, const char*>, const char*> cases[] = {
      {{"kind = \"sr\"", "kind = \"mesh\""}, "field 'intra.kind' must be postal, sr, crossbar or logp"},
      {{"nodes = 4", "nodes = 0"}, "table 'cluster' must have at least 1 node"},
      {{"cores_per_node = 8\n", ""}, "missing field 'cluster.cores_per_node'"},
      {{"send_us = 0.2", "send_us = 0"}, "'intra.send_us' must be positive"},
      {{"L_us = 1.5", "L_us = -1"}, "'inter.L_us' must not be negative"},
      {{"g_us = 0.8", "g_us = 0.8\nh_us = 1"}, "unknown field 'inter.h_us'"},
      {{"[inter]", "[outer]"}, "unknown field 'outer'"},
      {{"kind = \"cluster\"", "kind = \"sr\"\nsend_us = 1\nrecv_us = 1"}, "table 'cluster' is only for model.kind = \"cluster\""},
  };
  for (const auto& [edit, expect] : cases) {
    std::string text = kGoodCluster;
    const auto pos = text.find(edit.first);
    ASSERT_NE(pos, std::string::npos) << edit.first;
    text.replace(pos, std::string(edit.first).size(), edit.second);
    try {
      (void)parse_profile(text, "c.toml");
      ADD_FAILURE() << "accepted: " << expect;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

TEST(Cluster, MachineStringScalesTheProfile) {
  const Machine example = load_machine("cluster-example");
  EXPECT_EQ(example.kind, ModelKind::cluster);
  const Machine m = load_machine("cluster:64x16");
  EXPECT_EQ(m.cluster.nodes, 64);
  EXPECT_EQ(m.cluster.cores_per_node, 16);
  EXPECT_EQ(m.levels[1].L, example.levels[1].L);
  EXPECT_EQ(load_machine("cluster:3x5:cluster-example").cluster.nodes, 3);
  for (const char* bad : {"cluster", "cluster:", "cluster:64", "cluster:64x", "cluster:0x4", "cluster:4x0", "cluster:4x4x4",
                          "cluster:-1x4", "cluster:65536x65536", "cluster:4x4:delta", "cluster:4x4:", "cluster:4x4:nosuch"}) {
    try {
      (void)load_machine(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << bad;
    }
  }
}

}  // namespace
}  // namespace postbox::sim
