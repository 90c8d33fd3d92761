// placeholder: filled in by its component
#include "cli.hpp"
namespace postbox::cli {
void register_bench(CLI::App& app) { (void)app.add_subcommand("bench", "(not yet implemented)"); }
}  // namespace postbox::cli
