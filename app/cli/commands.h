// The `ramiel` subcommands. Each registers its options on the CLI11 app and
// runs when chosen; errors are thrown as ramiel::Error and reported by main.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ramiel::cli {

// A registered subcommand and the function that runs it (returns the exit code).
struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

Command addInfoCommand(CLI::App& app);
Command addClusterCommand(CLI::App& app);
Command addCompareCommand(CLI::App& app);
Command addRunCommand(CLI::App& app);
Command addBenchCommand(CLI::App& app);
Command addProfileCommand(CLI::App& app);
Command addCalibrateCommand(CLI::App& app);
Command addOptimizeCommand(CLI::App& app);
// `arguments`: the command line after the program's name, for the generated code's header.
Command addExportCommand(CLI::App& app, const std::vector<std::string>& arguments);
Command addTuneCommand(CLI::App& app);
// Not listed in the help: the process `ramiel bench` times one configuration in.
Command addTimeWorkerCommand(CLI::App& app);

}  // namespace ramiel::cli
