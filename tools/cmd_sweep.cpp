// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_sweep(CLI::App& app) { (void)app.add_subcommand("sweep", "(not yet implemented)"); }
}  // namespace postbox::cli
