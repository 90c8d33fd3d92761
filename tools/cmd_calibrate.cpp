// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_calibrate(CLI::App& app) { (void)app.add_subcommand("calibrate", "(not yet implemented)"); }
}  // namespace postbox::cli
