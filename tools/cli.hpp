// Shared pieces of the postbox command-line tool. The tool is a thin layer: every figure it
// prints is computed by library code that the tests also reach.
//
// Conventions for every subcommand:
//  * register_X(CLI::App& app) adds the subcommand and its options; its callback does the work.
//  * Bad input: throw postbox::InputError (or let CLI11 reject the option); main() prints
//    "postbox: error: <one line>" on stderr and exits 2.
//  * A command that needs another exit code (e.g. --verify mismatch = 1) calls set_exit_code().
//  * JSON goes to stdout through print_json(), so field names live in one place per command.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "postbox/frontend/selection.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox::cli {

void register_topo(CLI::App& app);
void register_ping(CLI::App& app);
void register_model(CLI::App& app);
void register_tree(CLI::App& app);
void register_run(CLI::App& app);
void register_plan(CLI::App& app);
void register_c3(CLI::App& app);
void register_sim(CLI::App& app);
void register_sweep(CLI::App& app);
void register_calibrate(CLI::App& app);
void register_bench(CLI::App& app);
void register_serve(CLI::App& app);

void set_exit_code(int code);
int exit_code();

// A line for stderr (no newline) printed after the command's output, and only when the command
// does not end in an error, so that exit 2 comes with its one line (the run's wrap-around note).
void note(std::string line);

// The tool: every command and option registered (the fuzz target reads the option tables).
std::unique_ptr<CLI::App> make_app();

// Builds the tool's commands, parses argv and runs the chosen one; returns the exit status
// (0, 1 or 2). Bad input, bad_alloc and system_error become "postbox: error: <one line>" on
// `err`; output that cannot be written to stdout is an error too.
int run_main(int argc, char** argv, std::FILE* err);

// Dry run (the CLI fuzz target): each command parses and checks its options, then returns
// before its work (building plans, simulating, measuring, starting threads).
void set_dry_run(bool on);
bool dry_run();

// Prints j on stdout, pretty (2-space indent), followed by a newline.
void print_json(const nlohmann::json& j);

// --ranks threads|fibers|auto (team.hpp's RanksMode); anything else → InputError naming --ranks.
RanksMode parse_ranks_option(const std::string& text);

// Parses an int in 1..hi from an option's text (parse.hpp's grammar); InputError naming --NAME.
int parse_positive(const std::string& name, const std::string& text, int hi = 1'000'000'000);

// run and plan: --bytes 0 unless given (frontend/selection.hpp).
inline const SelectionContext& kRunDefaults = kRunSelectionDefaults;

// Options that bind to text, for frontend/'s option tables (frontend/selection.hpp: the plan
// selection, the emulated run): given() returns name → text of each option that was given, an
// empty value included, ready for select_plan() / select_emulated_run(). `defaults` are only
// shown in --help (the library applies them); `skip` leaves options out.
class TextOptions {
 public:
  TextOptions(CLI::App* cmd, const std::vector<SelectionOption>& options,
              const std::map<std::string, std::string>& defaults = {}, const std::set<std::string>& skip = {});
  [[nodiscard]] std::map<std::string, std::string> given() const;

 private:
  std::map<std::string, std::string> text_;
  std::map<std::string, CLI::Option*> options_;
};

}  // namespace postbox::cli
