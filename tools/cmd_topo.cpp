// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_topo(CLI::App& app) { (void)app.add_subcommand("topo", "(not yet implemented)"); }
}  // namespace postbox::cli
