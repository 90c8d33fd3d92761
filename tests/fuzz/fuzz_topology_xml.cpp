// libFuzzer target: hwloc topology XML (topology.hpp: Topology::from_xml, `topo --xml FILE`).
// hwloc reads the file in a child process (topology.cpp), so its crashes become InputError;
// this target checks postbox's side: the child's handling, the export's reload, the walk.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz_support.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/postbox_fuzz_topology." + std::to_string(::getpid()) + ".xml";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0) std::abort();
  try {
    const postbox::Topology t = postbox::Topology::from_xml(path);
    if (t.pus() < 1) postbox::fuzz::violation("accepted a topology without PUs");
    for (int i = 0; i < t.pus(); ++i) (void)t.pu(i);
    (void)t.place(postbox::Placement::scatter(), t.pus());
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
  }
  std::remove(path.c_str());
  return 0;
}
