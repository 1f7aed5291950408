#include "core/pipeline/run_config.h"

#include "core/schedule/schedule_io.h"
#include "core/schedule/validator.h"
#include "core/util/atomic_file.h"
#include "core/util/error.h"
#include "core/util/json_file.h"
#include "core/util/text.h"

#include <algorithm>

namespace ramiel::pipeline {

namespace {

constexpr const char* kSchema = "ramiel.config/1";

nlohmann::json settingsToJson(const PlanSettings& s)
{
    nlohmann::json j = nlohmann::json::object();
    for (const PlanOption& o : planOptions())
        std::visit([&](auto field) { j[o.name] = s.*field; }, o.field);
    return j;
}

PlanSettings settingsFromJson(const nlohmann::json& j)
{
    PlanSettings s;
    for (const PlanOption& o : planOptions())
        if (j.contains(o.name))
            std::visit([&](auto field) { j.at(o.name).get_to(s.*field); }, o.field);
    return s;
}

}  // namespace

std::string RunConfig::threadsText() const
{
    if (serial())
        return "1 worker x " + countOf(serialThreads, "thread");
    return schedule ? describeThreads(*schedule) : std::string("?");
}

std::string RunConfig::title() const
{
    std::string text;
    if (serial()) {
        text = "serial";
    } else if (schedule && schedule->clusters.size() == 1) {
        text = schedule->threads.empty() ? "one worker" : "serial, per-node threads";
    } else {
        text = settings.algorithm;
        if (settings.hybrid)
            text = "hybrid " + text;
        if (settings.degree > 1)
            text += " d=" + std::to_string(settings.degree);
    }
    if (passes == "none")
        text += ", no passes";
    else if (passes != "default")
        text += ", passes: " + passes;
    return text;
}

nlohmann::json runConfigToJson(const RunConfig& c)
{
    nlohmann::json j = {{"schema", kSchema},     {"model", c.model},       {"passes", c.passes},
                        {"shapes", c.shapes},    {"label", c.label()},     {"settings", settingsToJson(c.settings)}};
    if (c.serial())
        j["serial_threads"] = c.serialThreads;
    if (c.schedule)
        j["schedule"] = scheduleToJson(*c.schedule);
    return j;
}

RunConfig runConfigFromJson(const nlohmann::json& document, const std::string& path)
{
    const nlohmann::json& j = document.contains("chosen") ? document.at("chosen") : document;
    RunConfig c;
    try {
        if (j.value("schema", std::string()) != kSchema)
            throw Error(ErrorKind::Usage, path,
                        std::string("not a run configuration (no \"schema\": \"") + kSchema +
                            "\"; 'ramiel tune -o FILE' writes one)");
        c.model = j.value("model", std::string());
        c.passes = j.at("passes").get<std::string>();
        c.shapes = j.value("shapes", std::vector<std::string>{});
        c.settings = settingsFromJson(j.at("settings"));
        c.serialThreads = j.value("serial_threads", 0);
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::Usage, path, std::string("not a run configuration: ") + e.what());
    }
    if (c.serialThreads < 0 || c.serialThreads > 1024)
        throw Error(ErrorKind::Usage, path, "\"serial_threads\" must be between 1 and 1024");
    if (c.settings.batch < 1 || c.settings.batch > 65536)
        throw Error(ErrorKind::Usage, path, "the batch must be between 1 and 65536");
    if (!c.serial() && !j.contains("schedule"))
        throw Error(ErrorKind::Usage, path, "a run configuration needs \"serial_threads\" or a \"schedule\"");
    if (!c.serial()) {
        try {
            c.schedule = scheduleFromJson(j.at("schedule"));  // its fit to the model: scheduleFor
        } catch (const Error& e) {
            throw Error(ErrorKind::Usage, path, e.message());
        }
        if (c.schedule->batch != c.settings.batch)
            throw Error(ErrorKind::Usage, path, "the schedule's batch differs from the settings' batch");
    }
    return c;
}

RunConfig readRunConfig(const std::string& path)
{
    const nlohmann::json j = readJsonFile(path, "the run configuration");
    return runConfigFromJson(j, path);
}

void writeRunConfig(const std::string& path, const RunConfig& config)
{
    writeFileAtomically(path, runConfigToJson(config).dump(1) + "\n");
}

PrepareOptions prepareOptionsOf(const RunConfig& config, const PrepareOptions& base)
{
    PrepareOptions o = base;
    o.passes = config.passes;
    if (o.shapes.empty())
        o.shapes = config.shapes;
    return o;
}

Schedule oneWorkerSchedule(const PreparedModel& prepared, int batch, int threads)
{
    SchedulingProblem problem;
    problem.graph = &prepared.model.graph;
    problem.topo = &prepared.topo;
    problem.workers = 1;
    problem.batch = batch;
    problem.degree = 1;
    Schedule s = emptySchedule(problem, "serial");
    s.clusters.assign(1, {});
    s.owner.assign(s.instanceCount(), 0);
    for (NodeId n : prepared.topo.order)
        s.clusters[0].push_back(s.instance(n, 0));
    s.workerThreads = {int32_t(threads)};
    return s;
}

PlanSettings planSettingsOf(const RunConfig& config)
{
    PlanSettings s = config.settings;
    const bool oneWorker = config.serial() || (config.schedule && config.schedule->clusters.size() == 1);
    if (oneWorker) {
        s.algorithm = "serial";
        s.workers = config.serial() ? config.serialThreads : std::max(1, config.schedule->maxThreads());
        s.degree = 1;
        s.hybrid = false;
    }
    return s;
}

Schedule scheduleFor(const RunConfig& config, const PreparedModel& prepared, const std::string& path)
{
    if (config.serial())
        return oneWorkerSchedule(prepared, config.settings.batch, config.serialThreads);
    Schedule s = *config.schedule;
    try {
        checkScheduleFits(s, prepared.topo);
    } catch (const Error& e) {
        throw Error(ErrorKind::Usage, path,
                    e.message() + " (was it tuned with other passes or input sizes? it names " + config.passes + ")");
    }
    const Validation v = validate(s, prepared.topo);
    if (!v.valid)
        throw Error(ErrorKind::Usage, path, "the schedule is not valid: " + v.problems.front());
    return s;
}

}  // namespace ramiel::pipeline
