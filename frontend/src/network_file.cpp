// DOT network files through graphviz's cgraph (network_file.hpp).
#include "postbox/frontend/network_file.hpp"

#include <graphviz/cgraph.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/file.hpp"

namespace postbox::sim {
namespace {

// cgraph keeps its error state and handler in globals: one parse at a time.
std::mutex cgraph_mutex;
std::string* cgraph_messages = nullptr;  // where the handler puts cgraph's messages (under the mutex)

int collect_message(char* text) {
  if (cgraph_messages != nullptr && text != nullptr) *cgraph_messages += text;
  return 0;
}

// cgraph's parser reports to a handler instead of stderr while a parse runs; restored after.
class CgraphErrors {
 public:
  CgraphErrors() : lock_(cgraph_mutex) {
    cgraph_messages = &text_;
    previous_ = agseterrf(collect_message);
    agreseterrors();
  }
  ~CgraphErrors() {
    agseterrf(previous_);
    cgraph_messages = nullptr;
  }
  CgraphErrors(const CgraphErrors&) = delete;
  CgraphErrors& operator=(const CgraphErrors&) = delete;
  // The first line of what cgraph said, without its "Error: " prefix.
  [[nodiscard]] std::string first_line() const {
    std::string line = text_.substr(0, text_.find('\n'));
    for (const std::string prefix : {"Error: ", "Warning: "})
      if (line.rfind(prefix, 0) == 0) line.erase(0, prefix.size());
    return line;
  }

 private:
  std::lock_guard<std::mutex> lock_;
  std::string text_;
  agusererrf previous_ = nullptr;
};

struct GraphCloser {
  void operator()(Agraph_t* g) const { agclose(g); }
};

}  // namespace

std::shared_ptr<const NetworkTopology> parse_network_dot(std::string_view text, std::string_view origin) {
  const std::string where = "network file '" + std::string(origin) + "'";
  if (text.find('\0') != std::string_view::npos) throw InputError(where + ": not DOT text (it holds a NUL byte)");
  const std::string buffer(text);
  auto topo = std::make_shared<NetworkTopology>();
  topo->origin = std::string(origin);
  CgraphErrors errors;
  std::unique_ptr<Agraph_t, GraphCloser> graph(agmemread(buffer.c_str()));
  if (!graph) {
    const std::string said = errors.first_line();
    throw InputError(where + ": not a DOT graph" + (said.empty() ? std::string(" (no graph in it)") : ": " + said));
  }
  Agraph_t* g = graph.get();
  if (!agisdirected(g)) throw InputError(where + ": an undirected graph; the network's links are directed (digraph, a -> b)");

  std::unordered_map<std::string, std::int32_t> id;
  std::vector<Agnode_t*> nodes;
  for (Agnode_t* n = agfstnode(g); n != nullptr; n = agnxtnode(g, n)) {
    const std::string name = agnameof(n);
    const auto node = static_cast<std::int32_t>(nodes.size());
    id.emplace(name, node);
    nodes.push_back(n);
    topo->node_names.push_back(name);
    if (name.rfind('H', 0) == 0) topo->host_nodes.push_back(node);
  }
  if (topo->host_nodes.empty()) throw InputError(where + ": no host (a node whose name starts with 'H')");

  Agsym_t* comment = agattr(g, AGEDGE, const_cast<char*>("comment"), nullptr);
  for (std::size_t from = 0; from < nodes.size(); ++from) {
    for (Agedge_t* e = agfstout(g, nodes[from]); e != nullptr; e = agnxtout(g, e)) {
      NetworkTopology::Link link;
      link.from = static_cast<std::int32_t>(from);
      const std::string to = agnameof(aghead(e));
      link.to = id.at(to);
      const std::string text_of = comment != nullptr ? std::string(agxget(e, comment)) : std::string();
      std::size_t at = 0;
      while (at < text_of.size()) {
        const std::size_t begin = text_of.find_first_not_of(", \t\r\n", at);
        if (begin == std::string::npos) break;
        const std::size_t end = std::min(text_of.find_first_of(", \t\r\n", begin), text_of.size());
        const std::string name = text_of.substr(begin, end - begin);
        at = end;
        if (name == "*") {
          link.any = true;
          continue;
        }
        const auto it = id.find(name);
        if (it == id.end())
          throw InputError(where + ": the comment of edge " + topo->node_names[from] + " -> " + to + " names '" + name +
                           "', which is not a node of the graph");
        link.dests.push_back(it->second);
      }
      topo->links.push_back(std::move(link));
    }
  }
  return topo;
}

std::shared_ptr<const NetworkTopology> read_network_file(const std::string& path) {
  return parse_network_dot(read_regular_file(path, "network file '" + path + "'"), path);
}

}  // namespace postbox::sim
