// The Chrome trace of an emulated run, and the names of its mesh channels.
#include "postbox/frontend/trace_writer.hpp"

#include <cstdio>
#include <ostream>
#include <string>
#include <utility>

namespace postbox::sim {

namespace {

void put_num(std::ostream& out, double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  out << buf;
}

const char* span_name(std::uint8_t what) {
  switch (what) {
    case 0: return "send";
    case 1: return "recv";
    case 2: return "reduce";
    case 3: return "copy";
    case 5: return "calc";
    case 6: return "noise";
    default: return "busy";
  }
}

void write_trace(std::ostream& out, const SimResult& result, const std::string& op, const std::string& algo, int p,
                 const Machine& machine) {
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"machine\":\"";
  for (char c : machine.name) {
    if (c == '"' || c == '\\') out << '\\';
    out << c;
  }
  out << "\",\"op\":\"" << op << "\",\"algo\":\"";
  for (char c : algo) {
    if (c == '"' || c == '\\') out << '\\';
    out << c;
  }
  out << "\",\"p\":" << p << "},\"traceEvents\":[\n";
  out << R"({"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"ranks"}})";
  for (int r = 0; r < p; ++r)
    out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << r << ",\"args\":{\"name\":\"rank " << r << "\"}}";
  for (const Span& s : result.rank_spans) {
    out << ",\n{\"name\":\"" << span_name(s.what) << "\",\"ph\":\"X\",\"pid\":1,\"tid\":" << s.track << ",\"ts\":";
    put_num(out, s.begin_us);
    out << ",\"dur\":";
    put_num(out, s.end_us - s.begin_us);
    out << ",\"args\":{\"peer\":" << s.peer << "}}";
  }
  if (!result.link_spans.empty()) {
    out << ",\n" << R"({"name":"process_name","ph":"M","pid":2,"tid":0,"args":{"name":"links"}})";
    for (std::size_t l = 0; l < result.links.size(); ++l) {
      if (result.links[l].kind == LinkPlace::Kind::unused) continue;
      out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":" << l << ",\"args\":{\"name\":\""
          << link_name(result.links[l]) << "\"}}";
    }
    for (const Span& s : result.link_spans) {
      out << ",\n{\"name\":\"" << s.peer << "->" << s.peer2 << "\",\"ph\":\"X\",\"pid\":2,\"tid\":" << s.track << ",\"ts\":";
      put_num(out, s.begin_us);
      out << ",\"dur\":";
      put_num(out, s.end_us - s.begin_us);
      out << "}";
    }
  }
  out << "\n]}\n";
}

}  // namespace

std::string link_direction(const LinkPlace& place) {
  if (place.kind != LinkPlace::Kind::link) return "";
  static const char* axis = "xyzwvu";
  std::string dir = place.plus ? "+" : "-";
  if (place.axis < 6) {
    dir.push_back(axis[place.axis]);
  } else {
    dir += 'd';
    dir += std::to_string(place.dim);
  }
  return dir;
}

std::string link_name(const LinkPlace& place) {
  std::string name = "node " + std::to_string(place.node);
  switch (place.kind) {
    case LinkPlace::Kind::inject: return name + " inject";
    case LinkPlace::Kind::eject: return name + " eject";
    case LinkPlace::Kind::unused: return "";
    case LinkPlace::Kind::link: break;
  }
  name += " " + link_direction(place);
  if (place.vcs > 1) name += " vc" + std::to_string(place.vc);
  return name;
}

void write_chrome_trace(std::ostream& out, const SimResult& result, const Schedule& schedule, const Machine& machine) {
  write_trace(out, result, schedule.op, schedule.algo, schedule.p, machine);
}

void write_chrome_trace(std::ostream& out, const SimResult& result, const Plan& plan, const Machine& machine) {
  write_trace(out, result, plan.op, plan.algo, plan.p, machine);
}

}  // namespace postbox::sim
