#include "postbox/runtime/topology.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <hwloc.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

// ---- counts ------------------------------------------------------------------------------

struct CountCase {
  const char* file;
  int line;
  const char* desc;
  int pus, cores, packages, numa_nodes, l3_groups;
};

class TopologyCounts : public testing::TestWithParam<CountCase> {};

TEST_P(TopologyCounts, MatchTheSyntheticDescription) {
  const CountCase& c = GetParam();
  SCOPED_TRACE(testing::Message() << c.file << ":" << c.line << " " << c.desc);
  const Topology t = Topology::synthetic(c.desc);
  EXPECT_EQ(t.source(), Topology::Source::synthetic);
  EXPECT_STREQ(t.source_name(), "synthetic");
  EXPECT_EQ(t.origin(), c.desc);
  EXPECT_EQ(t.pus(), c.pus);
  EXPECT_EQ(t.cores(), c.cores);
  EXPECT_EQ(t.packages(), c.packages);
  EXPECT_EQ(t.numa_nodes(), c.numa_nodes);
  EXPECT_EQ(t.l3_groups(), c.l3_groups);
  // Per-PU indices are in range, and -1 exactly where the level is absent.
  for (int i = 0; i < t.pus(); ++i) {
    const PuInfo& p = t.pu(i);
    EXPECT_EQ(p.os_index, i) << "synthetic OS indices follow the logical order";
    EXPECT_EQ(p.core >= 0, c.cores > 0);
    EXPECT_LT(p.core, c.cores);
    EXPECT_EQ(p.package >= 0, c.packages > 0);
    EXPECT_LT(p.package, c.packages);
    EXPECT_EQ(p.l3 >= 0, c.l3_groups > 0);
    EXPECT_LT(p.l3, c.l3_groups);
    EXPECT_GE(p.numa, 0);
    EXPECT_LT(p.numa, c.numa_nodes);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Synthetic, TopologyCounts,
    testing::Values(CountCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", 16, 8, 2, 1, 0},
                    CountCase{__FILE__, __LINE__, "pack:2 l3:2 core:2 pu:2", 16, 8, 2, 1, 4},
                    CountCase{__FILE__, __LINE__, "pack:2 [numa] l3:2 core:2 pu:2", 16, 8, 2, 2, 4},
                    CountCase{__FILE__, __LINE__, "pack:2 l3:1 numa:2 core:2 pu:2", 16, 8, 2, 4, 2},
                    CountCase{__FILE__, __LINE__, "pack:2 [numa] [numa] core:2 pu:1", 4, 4, 2, 4, 0},
                    CountCase{__FILE__, __LINE__, "core:4 pu:1", 4, 4, 0, 1, 0},
                    CountCase{__FILE__, __LINE__, "pack:2 pu:3", 6, 0, 2, 1, 0},
                    CountCase{__FILE__, __LINE__, "pu:1", 1, 0, 0, 1, 0}));

TEST(Topology, PuIndicesOfTwoPackagesOfFourTwoWayCores) {
  const Topology t = Topology::synthetic("pack:2 core:4 pu:2");
  EXPECT_EQ(t.pu(0).core, 0);
  EXPECT_EQ(t.pu(1).core, 0);
  EXPECT_EQ(t.pu(2).core, 1);
  EXPECT_EQ(t.pu(15).core, 7);
  EXPECT_EQ(t.pu(7).package, 0);
  EXPECT_EQ(t.pu(8).package, 1);
}

TEST(Topology, MostLocalNumaNodeWhenTwoCoverAPu) {
  // Two nodes per package with equal cpusets (e.g. DRAM + HBM): the lower index is chosen.
  const Topology t = Topology::synthetic("pack:2 [numa] [numa] core:2 pu:1");
  EXPECT_EQ(t.pu(0).numa, 0);
  EXPECT_EQ(t.pu(1).numa, 0);
  EXPECT_EQ(t.pu(2).numa, 2);
  EXPECT_EQ(t.pu(3).numa, 2);
}

TEST(Topology, CopiesShareOneTopology) {
  const Topology a = Topology::synthetic("pack:2 core:4 pu:2");
  const Topology b = a;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the point
  EXPECT_EQ(&a.pu(3), &b.pu(3));
}

// ---- placement ---------------------------------------------------------------------------

struct PlaceCase {
  const char* file;
  int line;
  const char* desc;
  const char* places;
  int p;
  std::vector<int> expected;
  bool wraps;
};

class TopologyPlace : public testing::TestWithParam<PlaceCase> {};

TEST_P(TopologyPlace, GivesTheExpectedPus) {
  const PlaceCase& c = GetParam();
  SCOPED_TRACE(testing::Message() << c.file << ":" << c.line << " " << c.desc << " / " << c.places << " p=" << c.p);
  const Topology t = Topology::synthetic(c.desc);
  const Placement pl = Placement::parse(c.places);
  EXPECT_EQ(t.place(pl, c.p), c.expected);
  EXPECT_EQ(t.wraps(pl, c.p), c.wraps);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, TopologyPlace,
    testing::Values(
        PlaceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", "compact", 5, {0, 1, 2, 3, 4}, false},
        PlaceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", "compact", 18,
                  {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1}, true},
        // Packages first, then cores, then the second PU of each core.
        PlaceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", "scatter", 16,
                  {0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15}, false},
        PlaceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", "scatter", 3, {0, 8, 2}, false},
        PlaceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", "scatter", 17,
                  {0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15, 0}, true},
        // Inside a package, the two L3 groups alternate before cores do.
        PlaceCase{__FILE__, __LINE__, "pack:2 l3:2 core:2 pu:2", "scatter", 16,
                  {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15}, false},
        PlaceCase{__FILE__, __LINE__, "core:4 pu:1", "scatter", 4, {0, 1, 2, 3}, false},
        PlaceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", "0,2,5", 5, {0, 2, 5, 0, 2}, true},
        PlaceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", "0,2,5", 3, {0, 2, 5}, false},
        PlaceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", "15, 3-5,0", 5, {15, 3, 4, 5, 0}, false},
        PlaceCase{__FILE__, __LINE__, "pu:1", "compact", 3, {0, 0, 0}, true}));

class TopologyScatterProperty : public testing::TestWithParam<const char*> {};

TEST_P(TopologyScatterProperty, IsAPermutationThatSpreadsPackagesThenCores) {
  const Topology t = Topology::synthetic(GetParam());
  const std::vector<int> order = t.place(Placement::scatter(), t.pus());
  EXPECT_EQ(order, t.scatter_order());
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < t.pus(); ++i) ASSERT_EQ(sorted[static_cast<std::size_t>(i)], i);
  std::set<int> packages;
  for (int r = 0; r < t.packages(); ++r) packages.insert(t.pu(order[static_cast<std::size_t>(r)]).package);
  EXPECT_EQ(static_cast<int>(packages.size()), t.packages());
  std::set<int> cores;
  for (int r = 0; r < t.cores(); ++r) cores.insert(t.pu(order[static_cast<std::size_t>(r)]).core);
  EXPECT_EQ(static_cast<int>(cores.size()), t.cores());
}

INSTANTIATE_TEST_SUITE_P(Synthetic, TopologyScatterProperty,
                         testing::Values("pack:2 core:4 pu:2", "pack:4 core:3 pu:2", "pack:2 l3:2 core:2 pu:4",
                                         "pack:2 l3:1 numa:2 core:2 pu:2", "pack:3 core:5 pu:1"));

TEST(Topology, PlaceRejectsBadRequests) {
  const Topology t = Topology::synthetic("pack:2 core:4 pu:2");
  EXPECT_THROW((void)t.place(Placement::compact(), 0), InputError);
  EXPECT_THROW((void)t.place(Placement::scatter(), -3), InputError);
  EXPECT_THROW((void)t.place(Placement::parse("0,16"), 2), InputError);
  EXPECT_THROW((void)t.place(Placement::list({}), 2), InputError);
  try {
    (void)t.place(Placement::parse("3,99"), 1);
    FAIL() << "PU 99 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("99"), std::string::npos) << e.what();
  }
  // The error quotes the list as typed (`topo --places 0-3` on 2 PUs used to name neither).
  try {
    (void)t.place(Placement::parse("0-16"), 1);
    FAIL() << "PU 16 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'0-16'"), std::string::npos) << e.what();
  }
}

// ---- parsing -----------------------------------------------------------------------------

TEST(Placement, ParsesPoliciesAndLists) {
  EXPECT_EQ(Placement::parse("compact").policy, Placement::Policy::compact);
  EXPECT_EQ(Placement::parse("scatter").policy, Placement::Policy::scatter);
  const Placement l = Placement::parse("0,2,5-7");
  EXPECT_EQ(l.policy, Placement::Policy::list);
  EXPECT_EQ(l.pus, (std::vector<int>{0, 2, 5, 6, 7}));
  EXPECT_EQ(l.to_string(), "0,2,5,6,7");
  EXPECT_EQ(Placement::parse(Placement::scatter().to_string()).policy, Placement::Policy::scatter);
}

std::string parse_error(const char* text) {
  try {
    (void)Placement::parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Placement, ErrorsNameTheCulprit) {
  EXPECT_NE(parse_error("spread").find("unknown placement 'spread'"), std::string::npos) << parse_error("spread");
  EXPECT_NE(parse_error("1,a").find("'a' is not a PU index"), std::string::npos) << parse_error("1,a");
  EXPECT_NE(parse_error("4-2").find("'4-2' is backwards"), std::string::npos) << parse_error("4-2");
}

class PlacementParseError : public testing::TestWithParam<const char*> {};

TEST_P(PlacementParseError, IsAnInputErrorOfOneLine) {
  try {
    (void)Placement::parse(GetParam());
    FAIL() << "accepted '" << GetParam() << "'";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_FALSE(what.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Bad, PlacementParseError,
                         testing::Values("", "spread", "Compact", "1,,2", "1,a", "-1", "3-1", ",", "1,", "1-2-3",
                                         "99999999999999999999"));

// ---- synthetic and XML errors ------------------------------------------------------------

class SyntheticError : public testing::TestWithParam<const char*> {};

TEST_P(SyntheticError, NamesTheDescription) {
  try {
    (void)Topology::synthetic(GetParam());
    FAIL() << "accepted '" << GetParam() << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(std::string("'") + GetParam() + "'"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Bad, SyntheticError, testing::Values("", "   ", "pack:2 core:x pu:2", "pu:0", "banana:3"));

class TempFile {
 public:
  explicit TempFile(const std::string& name)
      : path_((std::filesystem::temp_directory_path() / (name + "." + std::to_string(::getpid()))).string()) {}
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(Topology, LoadsAnXmlExport) {
  TempFile xml("postbox_topology_test.xml");
  {
    hwloc_topology_t h = nullptr;
    ASSERT_EQ(hwloc_topology_init(&h), 0);
    ASSERT_EQ(hwloc_topology_set_synthetic(h, "pack:2 core:3 pu:2"), 0);
    ASSERT_EQ(hwloc_topology_load(h), 0);
    ASSERT_EQ(hwloc_topology_export_xml(h, xml.path().c_str(), 0), 0);
    hwloc_topology_destroy(h);
  }
  const Topology t = Topology::from_xml(xml.path());
  EXPECT_EQ(t.source(), Topology::Source::xml);
  EXPECT_EQ(t.origin(), xml.path());
  EXPECT_EQ(t.pus(), 12);
  EXPECT_EQ(t.cores(), 6);
  EXPECT_EQ(t.packages(), 2);
  EXPECT_EQ(t.place(Placement::scatter(), 2), (std::vector<int>{0, 6}));
  EXPECT_EQ(t.distance(0, 6), Topology::kMachine);
}

TEST(Topology, RejectsUnreadableAndInvalidXml) {
  EXPECT_THROW((void)Topology::from_xml("/nonexistent/postbox/topo.xml"), InputError);
  TempFile bad("postbox_topology_test_bad.xml");
  {
    std::ofstream out(bad.path());
    out << "this is not xml\n";
  }
  try {
    (void)Topology::from_xml(bad.path());
    FAIL() << "garbage XML accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(bad.path()), std::string::npos) << e.what();
  }
}

// A FIFO named as the XML file is refused at once, not opened: opening it would wait for a
// writer (postbox topo --xml on a FIFO ran into its 20 s limit). A hang here is the watchdog's.
TEST(Topology, RefusesAFifoWithoutOpeningIt) {
  TempFile fifo("postbox_topology_test_fifo.xml");
  ::unlink(fifo.path().c_str());
  ASSERT_EQ(::mkfifo(fifo.path().c_str(), 0600), 0);
  try {
    (void)Topology::from_xml(fifo.path());
    FAIL() << "a FIFO was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "topology XML file '" + fifo.path() + "' is not a regular file");
  }
}

// Regression: hwloc 2.9 segfaults reading an XML file whose objects lack
// complete_cpuset; the load runs in a child, so this process gets one InputError line.
TEST(Topology, XmlThatCrashesHwlocIsAnInputError) {
  TempFile xml("postbox_topology_test_crash.xml");
  {
    hwloc_topology_t h = nullptr;
    ASSERT_EQ(hwloc_topology_init(&h), 0);
    ASSERT_EQ(hwloc_topology_set_synthetic(h, "pack:2 core:2 pu:1"), 0);
    ASSERT_EQ(hwloc_topology_load(h), 0);
    char* buf = nullptr;
    int len = 0;
    ASSERT_EQ(hwloc_topology_export_xmlbuffer(h, &buf, &len, 0), 0);
    std::string text(buf, static_cast<std::size_t>(len - 1));
    hwloc_free_xmlbuffer(h, buf);
    hwloc_topology_destroy(h);
    for (std::size_t at; (at = text.find(" complete_cpuset=\"")) != std::string::npos;)
      text.erase(at, text.find('"', text.find('"', at) + 1) - at + 1);
    std::ofstream(xml.path()) << text;
  }
  try {
    (void)Topology::from_xml(xml.path());
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(xml.path()), std::string::npos) << e.what();
  }
}

TEST(Topology, SyntheticLimits) {
  EXPECT_EQ(Topology::synthetic("pack:2 core:2 pu:2").pus(), 8);
  try {
    (void)Topology::synthetic("pack:256 core:256 pu:2");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has 131072 PUs, more than 2048"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)Topology::synthetic("pack:99999999999999999999999 pu:1"), InputError);
  // The largest loads (the slowest shape at the limit: seven levels of 2048 objects).
  EXPECT_EQ(Topology::synthetic("pack:2048 numa:1 l3:1 l2:1 l1:1 core:1 pu:1").pus(), 2048);
  EXPECT_THROW((void)Topology::synthetic("pu:2049"), InputError);
}

// Levels go from the outermost to the innermost; numa and group may sit anywhere, and a type
// postbox does not know is left to hwloc.
TEST(Topology, SyntheticLevelsOutOfOrderAreRefused) {
  auto error_of = [](const char* desc) -> std::string {
    try {
      (void)Topology::synthetic(desc);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(error_of("core:2 pack:2 pu:1").find("level 'pack:2' lies inside 'core:2' before it"), std::string::npos)
      << error_of("core:2 pack:2 pu:1");
  EXPECT_NE(error_of("pack:2 pu:2 core:2").find("level 'core:2' lies inside 'pu:2'"), std::string::npos);
  EXPECT_NE(error_of("pack:2 core:2 core:2").find("level 'core:2' lies inside 'core:2'"), std::string::npos);
  EXPECT_NE(error_of("pack:2 L2:2 L3:2 pu:1").find("level 'L3:2' lies inside 'L2:2'"), std::string::npos);
  EXPECT_EQ(Topology::synthetic("numa:2 pack:2 core:2 pu:1").pus(), 8);
  EXPECT_EQ(Topology::synthetic("pack:2 numa:2 l3:1 core:2 pu:2").pus(), 16);
  EXPECT_EQ(Topology::synthetic("Package:2 L3Cache:1 Core:2 PU:2").pus(), 8);
}

TEST(Placement, BoundsOfTheList) {
  EXPECT_EQ(Placement::parse("65535").pus, (std::vector<int>{65535}));
  EXPECT_THROW((void)Placement::parse("0-2147483647"), InputError);
  EXPECT_THROW((void)Placement::parse("65536"), InputError);
  EXPECT_THROW((void)Placement::parse("99999999999999"), InputError);
  std::string many;
  for (int i = 0; i < 17; ++i) many += (i ? "," : "") + std::string("0-65535");
  EXPECT_THROW((void)Placement::parse(many), InputError);
}

// ---- distances ---------------------------------------------------------------------------

struct DistanceCase {
  const char* file;
  int line;
  const char* desc;
  int a, b;
  int distance;
  int common_depth;  // -1: not checked
};

class TopologyDistance : public testing::TestWithParam<DistanceCase> {};

TEST_P(TopologyDistance, IsTheFirstSharedLevel) {
  const DistanceCase& c = GetParam();
  SCOPED_TRACE(testing::Message() << c.file << ":" << c.line << " " << c.desc << " (" << c.a << "," << c.b << ")");
  const Topology t = Topology::synthetic(c.desc);
  EXPECT_EQ(t.distance(c.a, c.b), c.distance);
  EXPECT_EQ(t.distance(c.b, c.a), c.distance);
  if (c.common_depth >= 0) {
    EXPECT_EQ(t.common_depth(c.a, c.b), c.common_depth);
    EXPECT_EQ(t.common_depth(c.b, c.a), c.common_depth);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Synthetic, TopologyDistance,
    testing::Values(
        // Depths: machine 0, package 1, core 2, PU 3. The machine-wide NUMA node hides nothing.
        DistanceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", 5, 5, Topology::kSamePu, 3},
        DistanceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", 0, 1, Topology::kSameCore, 2},
        DistanceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", 0, 2, Topology::kSamePackage, 1},
        DistanceCase{__FILE__, __LINE__, "pack:2 core:4 pu:2", 7, 8, Topology::kMachine, 0},
        DistanceCase{__FILE__, __LINE__, "pack:2 [numa] l3:2 core:2 pu:2", 0, 3, Topology::kSameL3, -1},
        DistanceCase{__FILE__, __LINE__, "pack:2 [numa] l3:2 core:2 pu:2", 0, 4, Topology::kSameNuma, -1},
        DistanceCase{__FILE__, __LINE__, "pack:2 [numa] l3:2 core:2 pu:2", 0, 8, Topology::kMachine, 0},
        DistanceCase{__FILE__, __LINE__, "pack:2 l3:2 core:2 pu:2", 4, 7, Topology::kSameL3, -1},
        DistanceCase{__FILE__, __LINE__, "pack:2 l3:2 core:2 pu:2", 3, 4, Topology::kSamePackage, -1},
        // Sub-NUMA clustering: the package-wide L3 holds two NUMA nodes and is not a level.
        DistanceCase{__FILE__, __LINE__, "pack:2 l3:1 numa:2 core:2 pu:2", 0, 2, Topology::kSameNuma, -1},
        DistanceCase{__FILE__, __LINE__, "pack:2 l3:1 numa:2 core:2 pu:2", 0, 4, Topology::kSamePackage, -1},
        DistanceCase{__FILE__, __LINE__, "pack:2 l3:1 numa:2 core:2 pu:2", 0, 8, Topology::kMachine, -1},
        // No cores: PUs of one package share only the package.
        DistanceCase{__FILE__, __LINE__, "pack:2 pu:3", 0, 2, Topology::kSamePackage, 1}));

class DistanceEquivalence : public testing::TestWithParam<const char*> {};

TEST_P(DistanceEquivalence, EveryThresholdIsTransitive) {
  const Topology t = Topology::synthetic(GetParam());
  const int n = t.pus();
  for (int k = Topology::kSamePu; k <= Topology::kMachine; ++k) {
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (t.distance(a, b) > k) continue;
        for (int c = 0; c < n; ++c) {
          if (t.distance(b, c) <= k) {
            ASSERT_LE(t.distance(a, c), k) << GetParam() << " k=" << k << " " << a << "," << b << "," << c;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Synthetic, DistanceEquivalence,
                         testing::Values("pack:2 core:4 pu:2", "pack:2 [numa] l3:2 core:2 pu:2",
                                         "pack:2 l3:1 numa:2 core:2 pu:2", "pack:2 numa:2 l3:1 core:2 pu:2"));

// ---- tree --------------------------------------------------------------------------------

TEST(Topology, TreeListsEveryLevelWithItsPus) {
  const Topology t = Topology::synthetic("pack:2 core:4 pu:2");
  const std::vector<Topology::Node> tree = t.tree();
  int machines = 0, numas = 0, packages = 0, cores = 0, pus = 0;
  for (const auto& n : tree) {
    if (n.kind == "Machine") ++machines;
    if (n.kind == "NUMANode") ++numas;
    if (n.kind == "Package") ++packages;
    if (n.kind == "Core") ++cores;
    if (n.kind == "PU") ++pus;
  }
  EXPECT_EQ(machines, 1);
  EXPECT_EQ(numas, 1);
  EXPECT_EQ(packages, 2);
  EXPECT_EQ(cores, 8);
  EXPECT_EQ(pus, 16);
  ASSERT_FALSE(tree.empty());
  EXPECT_EQ(tree.front().kind, "Machine");
  EXPECT_EQ(tree.front().first_pu, 0);
  EXPECT_EQ(tree.front().last_pu, 15);
  for (const auto& n : tree) {
    if (n.kind == "Package" && n.logical_index == 1) {
      EXPECT_EQ(n.level, 1);
      EXPECT_EQ(n.first_pu, 8);
      EXPECT_EQ(n.last_pu, 15);
    }
    if (n.kind == "PU") {
      EXPECT_EQ(n.level, 3);
    }
    if (n.kind == "NUMANode") {
      EXPECT_EQ(n.last_pu, 15);
    }
  }
}

// ---- the machine and binding -------------------------------------------------------------

TEST(Topology, MachineIsSharedAndCanBind) {
  const Topology m = Topology::machine();
  EXPECT_EQ(m.source(), Topology::Source::machine);
  EXPECT_GE(m.pus(), 1);
  EXPECT_TRUE(m.can_bind());
  EXPECT_EQ(&Topology::machine().pu(0), &m.pu(0));
}

TEST(Topology, BindThreadRunsTheThreadOnThatPu) {
  const Topology m = Topology::machine();
  const int last = m.pus() - 1;
  bool bound = false;
  int cpu = -1;
  std::thread th([&] {
    bound = m.bind_thread(last);
    cpu = ::sched_getcpu();
  });
  th.join();
  EXPECT_TRUE(bound);
  EXPECT_EQ(cpu, m.pu(last).os_index);
}

TEST(Topology, SyntheticCannotBind) {
  const Topology t = Topology::synthetic("pack:2 core:4 pu:2");
  EXPECT_FALSE(t.can_bind());
  bool bound = true;
  std::thread th([&] { bound = t.bind_thread(0); });
  th.join();
  EXPECT_FALSE(bound);
}

// ---- allowed_cpu_count -------------------------------------------------------------------

int affinity_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  return CPU_COUNT(&set);
}

TEST(AllowedCpuCount, IsTheProcessAffinityMask) {
  // The test runs on the main thread, whose mask is the process's.
  EXPECT_EQ(allowed_cpu_count(), affinity_count());
  EXPECT_GE(allowed_cpu_count(), 1);
}

TEST(AllowedCpuCount, AThreadPinnedToOneCpuStillSeesTheProcessSet) {
  const int process = allowed_cpu_count();
  int pinned = -1;
  int own = -1;
  std::thread th([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(::sched_getcpu(), &one);
    ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
    own = affinity_count();
    pinned = allowed_cpu_count();
  });
  th.join();
  EXPECT_EQ(own, 1);
  EXPECT_EQ(pinned, process);
}

TEST(AllowedCpuCountDeathTest, IsOneInAProcessAllowedOneCpu) {
  // A child process restricted as `taskset -c N` would: its main thread and every thread it
  // starts see one CPU, whatever the host has.
  EXPECT_EXIT(
      {
        if (allowed_cpu_count() < 1) std::_Exit(4);  // read once before: nothing may be cached
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(::sched_getcpu(), &one);
        if (::sched_setaffinity(0, sizeof one, &one) != 0) std::_Exit(3);
        int in_thread = -1;
        std::thread th([&] { in_thread = allowed_cpu_count(); });
        th.join();
        std::fprintf(stderr, "main %d thread %d\n", allowed_cpu_count(), in_thread);
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), "main 1 thread 1");
}

#if defined(__x86_64__)
// Restricts this process to one CPU, makes sched_getaffinity fail (a seccomp filter, as some
// sandboxes install), prints allowed_cpu_count() and hwloc's allowed count, and exits 0 when they
// agree.
[[noreturn]] void count_without_sched_getaffinity() {
  const int hwloc_allowed = Topology::machine().pus();  // loaded before the filter
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(::sched_getcpu(), &one);
  if (::sched_setaffinity(0, sizeof one, &one) != 0) std::_Exit(3);
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_getaffinity, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    std::_Exit(5);
  }
  cpu_set_t probe;
  if (::sched_getaffinity(0, sizeof probe, &probe) == 0) std::_Exit(6);  // the filter did not take
  const int count = allowed_cpu_count();
  std::fprintf(stderr, "count %d hwloc %d\n", count, hwloc_allowed);
  std::_Exit(count == hwloc_allowed ? 0 : 7);
}

// Where sched_getaffinity is unavailable the count is hwloc's allowed cpuset: the affinity
// restriction to one CPU no longer shows.
TEST(AllowedCpuCountDeathTest, FallsBackToHwlocsAllowedCpusetWithoutSchedGetaffinity) {
  EXPECT_EXIT(count_without_sched_getaffinity(), testing::ExitedWithCode(0), "count [0-9]+ hwloc [0-9]+");
}
#endif

TEST(TopologyDeathTest, PuOutOfRangeIsAProgrammingError) {
  const Topology t = Topology::synthetic("pack:1 core:2 pu:1");
  EXPECT_DEATH((void)t.pu(2), "PU 2 outside 0..1");
  EXPECT_DEATH((void)t.distance(0, -1), "outside");
}

}  // namespace
}  // namespace postbox
