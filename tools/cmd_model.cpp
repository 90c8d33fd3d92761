// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_model(CLI::App& app) { (void)app.add_subcommand("model", "(not yet implemented)"); }
}  // namespace postbox::cli
