// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_plan(CLI::App& app) { (void)app.add_subcommand("plan", "(not yet implemented)"); }
}  // namespace postbox::cli
