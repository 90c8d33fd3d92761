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

#include <string>

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

// Prints j on stdout, pretty (2-space indent), followed by a newline.
void print_json(const nlohmann::json& j);

// Parses a positive int from an option string; throws InputError("--NAME must be ...").
int parse_positive(const std::string& name, const std::string& text);

}  // namespace postbox::cli
