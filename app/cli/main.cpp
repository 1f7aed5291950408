// ramiel: the command-line tool. Subcommands live in *_command.cpp.
#include "commands.h"

#include "core/layout/dot_layout.h"
#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"
#include "core/util/version.h"

#include <iostream>
#include <string>
#include <vector>

namespace {

// `ramiel --version`: Ramiel's version (the CMake project's), then the versions of
// the libraries actually in use. libtorch's comes from the runtime module, which
// this loads (about a second); the CLI does not use Qt.
std::string versionText()
{
    std::string torch;
    try {
        torch = ramiel::runtime().description();
    } catch (const ramiel::Error& e) {
        torch = std::string("libtorch not loaded (") + e.what() + ")";
    }
    return std::string("ramiel ") + ramiel::kVersion + "\nONNX " + ramiel::onnxVersion() + ", Graphviz " +
           ramiel::graphvizVersion() + ", " + torch;
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"Ramiel: find and exploit the task parallelism in ONNX dataflow graphs on CPU multicores.",
                 "ramiel"};
    app.set_version_flag("--version", versionText);
    app.require_subcommand(1);
    app.footer("Run 'ramiel COMMAND --help' for a command's options. Exit codes: 0 ok, 1 internal error, "
               "2 usage, 3 I/O, 4 not an ONNX model, 5 invalid graph, 6 external data, 7 unsupported, 8 run-time error.");

    const std::vector<ramiel::cli::Command> commands = {
        ramiel::cli::addInfoCommand(app),
        ramiel::cli::addClusterCommand(app),
        ramiel::cli::addCompareCommand(app),
        ramiel::cli::addRunCommand(app),
        ramiel::cli::addBenchCommand(app),
        ramiel::cli::addProfileCommand(app),
        ramiel::cli::addCalibrateCommand(app),
        ramiel::cli::addOptimizeCommand(app),
        ramiel::cli::addExportCommand(app),
        ramiel::cli::addTuneCommand(app),
        ramiel::cli::addTimeWorkerCommand(app),
    };

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "ramiel: error: " << e.what() << "\n";
        return ramiel::exitCode(ramiel::ErrorKind::Usage);
    }

    try {
        for (const auto& command : commands)
            if (command.app->parsed())
                return command.run();
        return ramiel::exitCode(ramiel::ErrorKind::Usage);
    } catch (const ramiel::Error& e) {
        std::cerr << "ramiel: error: " << e.what() << "\n";
        return ramiel::exitCode(e.kind());
    } catch (const std::exception& e) {
        std::cerr << "ramiel: internal error: " << e.what() << "\n";
        return ramiel::exitCode(ramiel::ErrorKind::Internal);
    }
}
