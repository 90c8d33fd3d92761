// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_tree(CLI::App& app) { (void)app.add_subcommand("tree", "(not yet implemented)"); }
}  // namespace postbox::cli
