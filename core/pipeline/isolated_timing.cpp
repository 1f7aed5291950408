#include "core/pipeline/isolated_timing.h"

#include "core/pipeline/run_inputs.h"
#include "core/runtime/runtime.h"
#include "core/schedule/schedule_io.h"
#include "core/schedule/validator.h"
#include "core/util/atomic_file.h"
#include "core/util/error.h"
#include "core/util/fd_io.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ramiel::pipeline {

namespace {

// A worker process with a pipe to its input and one from its output.
class WorkerProcess {
public:
    WorkerProcess(const std::vector<std::string>& command, const std::string& label) : label_(label)
    {
        int toChild[2], fromChild[2];
        if (pipe2(toChild, O_CLOEXEC) != 0 || pipe2(fromChild, O_CLOEXEC) != 0)
            throw Error(ErrorKind::Runtime, {}, "cannot make a pipe for a timing process: " + std::string(strerror(errno)));
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, toChild[0], STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], STDOUT_FILENO);
        std::vector<char*> argv;
        for (const std::string& a : command)
            argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        close(toChild[0]);
        close(fromChild[1]);
        in_ = toChild[1];
        out_ = fromChild[0];
        if (rc != 0) {
            pid_ = -1;
            throw Error(ErrorKind::Runtime, {}, "cannot start a timing process (" + command[0] + "): " + strerror(rc));
        }
    }

    ~WorkerProcess()
    {
        quit();
        close(out_);
        if (pid_ > 0) {
            int status = 0;
            waitpid(pid_, &status, 0);
        }
    }

    WorkerProcess(const WorkerProcess&) = delete;
    WorkerProcess& operator=(const WorkerProcess&) = delete;

    // Asks the worker to end, without waiting for it.
    void quit()
    {
        if (in_ < 0)
            return;
        writeAll(in_, "quit\n");
        close(in_);
        in_ = -1;
    }

    void send(const std::string& line)
    {
        if (!writeAll(in_, line + "\n"))
            throw stopped();
    }

    // The next line the worker writes; its output must start with `word`.
    std::string expect(const std::string& word)
    {
        for (;;) {
            const size_t eol = buffer_.find('\n');
            if (eol != std::string::npos) {
                std::string line = buffer_.substr(0, eol);
                buffer_.erase(0, eol + 1);
                if (line.rfind(word, 0) != 0)
                    throw Error(ErrorKind::Runtime, {}, "the timing process for " + label_ + " said '" + line + "'");
                return line.substr(word.size());
            }
            char chunk[4096];
            const ssize_t n = read(out_, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                throw stopped();
            buffer_.append(chunk, size_t(n));
        }
    }

private:
    Error stopped()
    {
        int status = 0;
        std::string how = "ended";
        if (pid_ > 0 && waitpid(pid_, &status, 0) == pid_) {
            pid_ = -1;
            how = WIFEXITED(status) ? "ended with exit code " + std::to_string(WEXITSTATUS(status))
                                    : "was killed by signal " + std::to_string(WTERMSIG(status));
        }
        return Error(ErrorKind::Runtime, {}, "the timing process for " + label_ + " " + how);
    }

    std::string label_;
    pid_t pid_ = -1;
    int in_ = -1;
    int out_ = -1;
    std::string buffer_;
};

nlohmann::json requestJson(const TimingRequest& r, const TimedConfiguration& c)
{
    nlohmann::json j = {{"model", r.model},
                        {"shapes", r.prepare.shapes},
                        {"inputs", r.prepare.inputs},
                        {"passes", c.passes.empty() ? r.prepare.passes : c.passes},
                        {"batch", r.batch},
                        {"seed", r.seed},
                        {"label", c.label},
                        {"threads", c.threads}};
    if (c.schedule) {
        j["schedule"] = scheduleToJson(*c.schedule);
    }
    return j;
}

// A folder for the request files, removed with everything in it.
struct ScratchFolder {
    std::filesystem::path path;
    ScratchFolder()
    {
        std::string pattern = (std::filesystem::temp_directory_path() / "ramiel-timing-XXXXXX").string();
        if (!mkdtemp(pattern.data()))
            throw Error(ErrorKind::Io, pattern, "cannot make a scratch folder: " + std::string(strerror(errno)));
        path = pattern;
    }
    ~ScratchFolder()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

}  // namespace

void warmUpTurn(Executor& executor)
{
    double warmed = 0;
    do
        warmed += executor.run();
    while (warmed < kTurnWarmUpSeconds);
}

std::vector<std::vector<double>> timeInOwnProcesses(const TimingRequest& request,
                                                    const std::vector<TimedConfiguration>& configurations,
                                                    const std::vector<std::string>& workerCommand, int runs,
                                                    int block, const std::function<void(int, int)>& progress,
                                                    const std::function<bool(double)>& stop,
                                                    const std::function<void(size_t, double)>& onTime)
{
    // A worker that dies must be an error here, not a signal that ends this process.
    struct sigaction ignore {}, previous{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &previous);
    struct RestorePipe {
        struct sigaction action;
        ~RestorePipe() { sigaction(SIGPIPE, &action, nullptr); }
    } restore{previous};

    ScratchFolder scratch;
    std::vector<std::unique_ptr<WorkerProcess>> workers;
    for (size_t k = 0; k < configurations.size(); ++k) {
        const std::string file = (scratch.path / ("request-" + std::to_string(k) + ".json")).string();
        writeFileAtomically(file, requestJson(request, configurations[k]).dump());
        std::vector<std::string> command = workerCommand;
        command.push_back(file);
        workers.push_back(std::make_unique<WorkerProcess>(command, configurations[k].label));
    }
    for (auto& w : workers)
        w->expect("ready");  // loading is not timed
    // Warm-ups one worker at a time: side by side, multi-threaded configurations
    // would fight over the cores and take far longer than their runs.
    for (auto& w : workers) {
        w->send("warm " + std::to_string(kWarmUpRuns));
        w->expect("warm");
    }
    std::vector<std::vector<double>> seconds(configurations.size());
    const int total = runs * int(configurations.size());
    int done = 0;
    for (int turn = 0; turn < runs; turn += block) {
        const auto turnStart = std::chrono::steady_clock::now();
        const int k = std::min(block, runs - turn);
        for (size_t c = 0; c < workers.size(); ++c) {
            workers[c]->send("run " + std::to_string(k));
            std::istringstream times(workers[c]->expect("times"));
            double t = 0;
            while (times >> t) {
                seconds[c].push_back(t);
                if (onTime)
                    onTime(c, t);
            }
            done += k;
            if (progress)
                progress(done, total);
        }
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - turnStart;
        if (stop && turn + block < runs && stop(took.count()))
            break;
    }
    for (auto& w : workers)  // they end side by side; the destructors wait for them
        w->quit();
    return seconds;
}

int serveTimings(const std::string& requestFile)
{
    nlohmann::json j;
    try {
        std::ifstream in(requestFile);
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::Usage, requestFile, std::string("not a timing request: ") + e.what());
    }
    PrepareOptions prepare;
    prepare.shapes = j.at("shapes").get<std::vector<std::string>>();
    prepare.passes = j.at("passes").get<std::string>();
    prepare.inputs = j.value("inputs", std::vector<std::string>{});
    const Model model = loadModel(j.at("model").get<std::string>(), prepare);
    const auto compiled = runtime().compile(model);
    compiled->setInputs(runInputs(model, *compiled, prepare.inputs, j.at("batch").get<int>(), j.at("seed").get<uint64_t>()));
    std::unique_ptr<Executor> executor;
    if (j.contains("schedule")) {
        const Topology topo = buildTopology(model.graph);
        const Schedule s = scheduleFromJson(j.at("schedule"), topo);
        const Validation v = validate(s, topo);
        if (!v.valid)
            throw Error(ErrorKind::Usage, requestFile, "the schedule is not valid: " + v.problems.front());
        executor = compiled->parallelExecutor(s);
    } else {
        executor = compiled->serialExecutor(j.at("threads").get<int>());
    }
    std::cout << "ready" << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.rfind("warm ", 0) == 0) {
            warmUp(*executor, std::atoi(line.c_str() + 5));
            std::cout << "warm" << std::endl;
            continue;
        }
        if (line.rfind("run ", 0) != 0)
            break;
        const int k = std::max(1, std::atoi(line.c_str() + 4));
        warmUpTurn(*executor);
        std::string times = "times";
        for (int i = 0; i < k; ++i) {
            std::ostringstream t;
            t.precision(9);
            t << executor->run();
            times += " " + t.str();
        }
        std::cout << times << std::endl;
    }
    return 0;
}

}  // namespace ramiel::pipeline
