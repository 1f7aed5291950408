#include "core/onnx/isolated_inference.h"

#include "core/util/fd_io.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace ramiel {

namespace {

std::string firstLine(const std::string& s)
{
    std::string line = s.substr(0, s.find('\n'));
    return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

// The child's answer: three length-prefixed strings (checker message,
// inference message, the inferred model without initializer data).
void appendField(std::string& out, const std::string& field)
{
    const uint64_t n = field.size();
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += field;
}

bool readField(const std::string& in, size_t& pos, std::string& field)
{
    uint64_t n = 0;
    if (in.size() - pos < sizeof n)
        return false;
    std::memcpy(&n, in.data() + pos, sizeof n);
    pos += sizeof n;
    if (in.size() - pos < n)
        return false;
    field.assign(in, pos, n);
    pos += n;
    return true;
}

[[noreturn]] void runChild(onnx::ModelProto& model, const InferenceRequest& request, int fd)
{
    // A crash here ends the child quietly: not through the handlers the parent
    // installed (a test framework's debugger backtrace, an application's crash
    // report), and without a core file. The parent reports it as a warning.
    for (int sig : {SIGSEGV, SIGFPE, SIGBUS, SIGILL, SIGABRT})
        ::signal(sig, SIG_DFL);
    const rlimit noCore{0, 0};
    ::setrlimit(RLIMIT_CORE, &noCore);
    std::string checkerMessage, inferenceMessage;
    try {
        if (request.runChecker)
            onnx::checker::check_model(model);
    } catch (const std::exception& e) {
        checkerMessage = firstLine(e.what());
    }
    try {
        if (request.inferShapes) {
            onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
            onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
        }
    } catch (const std::exception& e) {
        inferenceMessage = firstLine(e.what());
    }
    model.mutable_graph()->clear_initializer();  // unchanged; the parent keeps its own
    std::string payload;
    appendField(payload, checkerMessage);
    appendField(payload, inferenceMessage);
    appendField(payload, model.SerializeAsString());
    _exit(writeAll(fd, payload) ? 0 : 3);
}

// Same structure (the child only added types), so walk both graphs together.
void copyInferredTypes(onnx::GraphProto& dst, const onnx::GraphProto& src)
{
    *dst.mutable_value_info() = src.value_info();
    if (dst.output_size() == src.output_size())
        for (int i = 0; i < dst.output_size(); ++i)
            *dst.mutable_output(i)->mutable_type() = src.output(i).type();
    if (dst.node_size() != src.node_size())
        return;
    for (int n = 0; n < dst.node_size(); ++n) {
        auto* dn = dst.mutable_node(n);
        const auto& sn = src.node(n);
        if (dn->attribute_size() != sn.attribute_size())
            continue;
        for (int a = 0; a < dn->attribute_size(); ++a) {
            auto* da = dn->mutable_attribute(a);
            const auto& sa = sn.attribute(a);
            if (da->has_g() && sa.has_g())
                copyInferredTypes(*da->mutable_g(), sa.g());
            if (da->graphs_size() == sa.graphs_size())
                for (int g = 0; g < da->graphs_size(); ++g)
                    copyInferredTypes(*da->mutable_graphs(g), sa.graphs(g));
        }
    }
}

}  // namespace

void checkAndInferShapes(onnx::ModelProto& model, const InferenceRequest& request, std::vector<std::string>& warnings)
{
    if (!request.runChecker && !request.inferShapes)
        return;
    int fds[2];
    if (::pipe(fds) != 0) {
        warnings.push_back(std::string("shape inference skipped: cannot create a pipe: ") + std::strerror(errno));
        return;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        warnings.push_back(std::string("shape inference skipped: cannot fork: ") + std::strerror(errno));
        return;
    }
    if (pid == 0) {
        ::close(fds[0]);
        runChild(model, request, fds[1]);
    }
    ::close(fds[1]);

    // Read until the child closes the pipe or the deadline passes.
    std::string payload;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(request.timeoutSeconds);
    bool timedOut = false;
    char buf[1 << 16];
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timedOut = true;
            break;
        }
        pollfd pfd{fds[0], POLLIN, 0};
        const int r = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            continue;
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        payload.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    if (timedOut)
        ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }

    if (timedOut) {
        warnings.push_back("ONNX shape inference did not finish within " + std::to_string(request.timeoutSeconds) +
                           " s and was stopped; shapes are unknown");
        return;
    }
    if (WIFSIGNALED(status)) {
        warnings.push_back(std::string("ONNX's checker or shape inference crashed on this model (") +
                           strsignal(WTERMSIG(status)) + "); shapes are unknown");
        return;
    }
    size_t pos = 0;
    std::string checkerMessage, inferenceMessage, inferred;
    onnx::ModelProto result;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !readField(payload, pos, checkerMessage) ||
        !readField(payload, pos, inferenceMessage) || !readField(payload, pos, inferred) ||
        !result.ParseFromString(inferred)) {
        warnings.push_back("ONNX shape inference failed; shapes are unknown");
        return;
    }
    if (!checkerMessage.empty())
        warnings.push_back("ONNX checker: " + checkerMessage);
    if (!inferenceMessage.empty())
        warnings.push_back("shape inference stopped early: " + inferenceMessage);
    if (request.inferShapes)
        copyInferredTypes(*model.mutable_graph(), result.graph());
}

}  // namespace ramiel
