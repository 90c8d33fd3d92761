// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_run(CLI::App& app) { (void)app.add_subcommand("run", "(not yet implemented)"); }
}  // namespace postbox::cli
