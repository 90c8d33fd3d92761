// The machine profiles `postbox calibrate --save` writes (writers.hpp).
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <sstream>
#include <string>

#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::frontend {

namespace {

struct Provenance {
  std::string host = "unknown";
  std::string date = "unknown";
};

Provenance provenance() {
  char host[256] = "unknown";
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown");
  host[sizeof host - 1] = '\0';
  const std::time_t now = std::time(nullptr);
  char date[32] = "unknown";
  if (std::tm tm{}; ::gmtime_r(&now, &tm) != nullptr) std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  Provenance p;
  p.host.clear();
  for (const char* q = host; *q != '\0'; ++q)
    if (*q != '"' && *q != '\\' && static_cast<unsigned char>(*q) >= 0x20) p.host += *q;
  p.date = date;
  return p;
}

// The [calibration] table's first lines: where and when the figures were measured.
void provenance_fields(std::ostringstream& o, const Provenance& pv) {
  o << "[calibration]\n";
  o << "host = \"" << pv.host << "\"\n";
  o << "date = \"" << pv.date << "\"\n";
}

// A kind "sr" model's two fields (the [model] table of a `local` profile).
void sr_fields(std::ostringstream& o, const LatencyFigures& c) {
  o << "kind = \"sr\"\n";
  o << "send_us = " << c.s_ns / 1000 << "  # measured s: slope of k back-to-back notifies (Cordsen §5)\n";
  o << "recv_us = " << c.r_ns / 1000 << "  # measured r: first notification (s + r) minus s\n";
}

// The [calibration] table's measurement lines, each key prefixed (`inter_` for the level between
// processes).
void calibration_fields(std::ostringstream& o, const LatencyFigures& c, const std::string& prefix) {
  o << prefix << "lambda = " << c.lambda << "\n";
  o << prefix << "lambda_exp1 = " << c.lambda_exp1 << "\n";
  o << prefix << "lambda_exp2 = " << c.lambda_exp2 << "\n";
  o << prefix << "t0_us = " << c.t0_ns / 1000 << "\n";
  o << prefix << "first_notification_us = " << c.first_notification_ns / 1000 << "\n";
  o << prefix << "second_notification_us = " << c.second_notification_ns / 1000 << "\n";
}

}  // namespace

std::string local_profile_toml(const Calibration& c) {
  const Provenance pv = provenance();
  std::ostringstream o;
  o.precision(6);
  o << std::fixed;
  o << "# Written by `postbox calibrate --save` (docs/calibration.md). Re-run it to refresh.\n";
  o << "name = \"local\"\n";
  o << "description = \"this machine (" << pv.host << "), measured by postbox calibrate on " << pv.date << "\"\n";
  o << "[model]\n";
  sr_fields(o, c);
  provenance_fields(o, pv);
  o << "method = \"postbox calibrate: Cordsen notification times, Bruck experiments 1 and 2, k = 1.." << c.k_max
    << ", " << c.trials << " trials, median of " << c.runs << " runs\"\n";
  calibration_fields(o, c, "");
  return o.str();
}

std::string local_cluster_profile_toml(const Calibration& c) {
  if (!c.inter) throw InputError("local-cluster profile: the calibration has no figures between processes (postbox calibrate --mpi)");
  const InterCalibration& x = *c.inter;
  const Provenance pv = provenance();
  std::ostringstream o;
  o.precision(6);
  o << std::fixed;
  o << "# Written by `mpirun -np P postbox calibrate --mpi --save` (docs/cluster.md). Re-run it to refresh.\n";
  o << "name = \"local-cluster\"\n";
  o << "description = \"" << x.processes << " processes x " << x.threads << " threads on " << pv.host
    << ", measured by postbox calibrate --mpi on " << pv.date << "\"\n";
  o << "[model]\n";
  o << "kind = \"cluster\"\n";
  o << "[cluster]\n";
  o << "nodes = " << x.processes << "\n";
  o << "cores_per_node = " << x.threads << "\n";
  o << "[intra]\n";
  sr_fields(o, c);
  o << "[inter]\n";
  sr_fields(o, x);
  provenance_fields(o, pv);
  o << "method = \"postbox calibrate --mpi: Cordsen notification times, Bruck experiments 1 and 2; inside a process "
       "mailboxes between two threads, k = 1.."
    << c.k_max << ", " << c.trials << " trials, median of " << c.runs
    << " runs; between processes 0 and 1 MPI point-to-point, k = 1.." << x.k_max << ", " << x.trials
    << " trials, median of " << x.runs << " runs\"\n";
  calibration_fields(o, c, "");
  calibration_fields(o, x, "inter_");
  return o.str();
}

}  // namespace postbox::frontend
