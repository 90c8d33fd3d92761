// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_c3(CLI::App& app) { (void)app.add_subcommand("c3", "(not yet implemented)"); }
}  // namespace postbox::cli
