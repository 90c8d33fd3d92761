// Machine descriptions as text: model strings ("postal:2", "logp:..."), machine and profile
// names, TOML profiles, mesh extents and placements, read into the emulator's typed Machine
// (emulator/machine.hpp). Field reference: docs/emulator.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"

namespace postbox::sim {

// Directories searched for a profile given by name, in order: $POSTBOX_PROFILE_PATH (colon
// separated), the calibration cache's profiles/, the source tree's profiles/ (compiled in),
// <exe>/../share/postbox/profiles, the shared library's <prefix>/share/postbox/profiles (when
// the program links libpostbox_frontend.so), <install prefix>/share/postbox/profiles.
std::vector<std::string> profile_dirs();

// "postal:L[:C]", "sr:S:R[:C]", "logp:L:o:g:G[:C][:O=X][:S=N]" (C: reduce and copy time per
// byte, sets reduce_us_per_byte and copy_us_per_byte; default 0; O: LogGOPS's CPU time per byte
// of a send and an accept, default 0; S: messages of more than N bytes go by rendezvous, an
// integer, default none: O= and S= follow the numbers, each at most once, in either order; a
// logp profile's O_us_per_byte and S_bytes), a profile name, or a path to a .toml file;
// "cluster:NODESxCORES" (the built-in profile cluster-example) or "cluster:NODESxCORES:PROFILE"
// (a cluster profile by name or path) with its nodes and cores per node replaced.
// Every number (model strings and profile fields) is finite, non-negative and at most 1e9.
// Unknown machine, malformed string, bad profile → InputError naming the field (an empty spec:
// FieldError naming the field "machine").
Machine load_machine(std::string_view spec);

// Parses profile text (TOML). `origin` names the file in error messages.
Machine parse_profile(std::string_view toml_text, std::string_view origin);

// "8x8", "16x32", "8x8x8" → dims (1 to 6 extents, at most kMaxMeshNodes nodes in all). Malformed
// → InputError naming `what`.
std::vector<int> parse_dims(std::string_view text, std::string_view what);

// "row-major", "snake", "random", "list:3,1,0,2" → Placement (seed from `seed`). Anything else
// → FieldError naming the field "placement".
Placement parse_placement(std::string_view text, std::uint64_t seed);

}  // namespace postbox::sim
