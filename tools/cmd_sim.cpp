// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_sim(CLI::App& app) { (void)app.add_subcommand("sim", "(not yet implemented)"); }
}  // namespace postbox::cli
