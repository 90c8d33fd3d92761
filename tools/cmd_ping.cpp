// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_ping(CLI::App& app) { (void)app.add_subcommand("ping", "(not yet implemented)"); }
}  // namespace postbox::cli
