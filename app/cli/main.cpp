// ramiel: the command-line tool. Subcommands live in *_command.cpp.
#include "commands.h"

#include "core/layout/dot_layout.h"
#include "core/onnx/onnx_import.h"
#include "core/runtime/runtime.h"
#include "core/util/error.h"
#include "core/util/huge_pages.h"
#include "core/util/text.h"
#include "core/util/version.h"

#include <cstdlib>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

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

// The command's model file, for messages that arise where no file is known.
std::string modelArgument(const CLI::App& command)
{
    const CLI::Option* model = command.get_option_no_throw("model");
    return model && model->count() > 0 ? model->as<std::string>() : std::string();
}

}  // namespace

int main(int argc, char** argv)
{
    ramiel::restartWithHugePages(argv);  // as Studio does (core/util/huge_pages.h)
    CLI::App app{"Ramiel: find and exploit the task parallelism in ONNX dataflow graphs on CPU multicores.",
                 "ramiel"};
    app.set_version_flag("--version", versionText);
    app.require_subcommand(1);
    app.footer("Run 'ramiel COMMAND --help' for a command's options. Exit codes: 0 ok, 1 internal error, "
               "2 usage, 3 I/O, 4 not an ONNX model, 5 invalid graph, 6 external data, 7 unsupported, 8 run-time error "
               "or not enough memory.");

    const std::vector<ramiel::cli::Command> commands = {
        ramiel::cli::addInfoCommand(app),
        ramiel::cli::addClusterCommand(app),
        ramiel::cli::addCompareCommand(app),
        ramiel::cli::addRunCommand(app),
        ramiel::cli::addBenchCommand(app),
        ramiel::cli::addProfileCommand(app),
        ramiel::cli::addCalibrateCommand(app),
        ramiel::cli::addOptimizeCommand(app),
        ramiel::cli::addExportCommand(app, std::vector<std::string>(argv + 1, argv + argc)),
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

    const ramiel::cli::Command* parsed = nullptr;
    for (const auto& command : commands)
        if (command.app->parsed())
            parsed = &command;
    if (!parsed)
        return ramiel::exitCode(ramiel::ErrorKind::Usage);
    try {
        return parsed->run();
    } catch (const ramiel::Error& e) {
        std::cerr << "ramiel: error: " << e.what() << "\n";
        return ramiel::exitCode(e.kind());
    } catch (const std::bad_alloc&) {
        // Anywhere, not only where a size was checked first: one line, exit code 8.
        const ramiel::Error e(ramiel::ErrorKind::Resource, modelArgument(*parsed->app), "not enough memory (std::bad_alloc)");
        std::cerr << "ramiel: error: " << e.what() << "\n";
        return ramiel::exitCode(e.kind());
    } catch (const std::length_error& le) {  // a size past what a container can hold
        const ramiel::Error e(ramiel::ErrorKind::Resource, modelArgument(*parsed->app),
                              std::string("not enough memory (") + le.what() + ")");
        std::cerr << "ramiel: error: " << e.what() << "\n";
        return ramiel::exitCode(e.kind());
    } catch (const std::exception& e) {
        const std::string what = e.what();
        std::cerr << "ramiel: internal error: " << ramiel::printable(what.substr(0, what.find('\n'))) << "\n";
        return ramiel::exitCode(ramiel::ErrorKind::Internal);
    }
}
