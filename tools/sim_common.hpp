// Pieces shared by `postbox sim` and `postbox sweep` (defined in cmd_sim.cpp).
#pragma once

#include <map>
#include <string>

#include "cli.hpp"
#include "postbox/frontend/selection.hpp"

namespace postbox::cli {

// Help-only defaults of the emulated run's options (select_emulated_run() applies them).
const std::map<std::string, std::string>& emulated_run_defaults();

}  // namespace postbox::cli
