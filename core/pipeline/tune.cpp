#include "core/pipeline/tune.h"

#include "core/pipeline/isolated_timing.h"
#include "core/pipeline/run_inputs.h"
#include "core/report/host_report.h"
#include "core/runtime/profiling.h"
#include "core/runtime/runtime.h"
#include "core/schedule/schedule_io.h"
#include "core/schedule/thread_choice.h"
#include "core/util/error.h"
#include "core/util/text.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace ramiel::pipeline {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr double kProfileShare = 0.4;  // of the budget, for profiling
constexpr int kBlock = 3;              // timed runs per turn
constexpr size_t kMaxMeasured = 8;     // configurations measured at most

// The thread counts to profile: every one up to 4, then powers of two and P.
std::vector<int> threadCounts(int cores)
{
    std::vector<int> counts;
    for (int t = 1; t <= cores; t = t < 4 ? t + 1 : t * 2)
        counts.push_back(t);
    if (counts.back() != cores)
        counts.push_back(cores);
    return counts;
}

std::vector<int> divisors(int batch)
{
    std::vector<int> d;
    for (int k = 1; k <= batch; ++k)
        if (batch % k == 0)
            d.push_back(k);
    return d;
}

// One pass list: the model prepared with it, and thread-aware costs by sub-batch size.
struct Variant {
    std::string passes;
    std::shared_ptr<const PreparedModel> prepared;
    std::map<int, Costs> costs;  // by samples per copy
    double loadSeconds = 0;      // preparing and compiling it: what each timing process does first
};

void checkCancel(const std::atomic<bool>* cancelled)
{
    if (cancelled && cancelled->load())
        throw TuneCancelled();
}

double secondsUntil(Clock::time_point t) { return std::chrono::duration<double>(t - Clock::now()).count(); }
Clock::time_point secondsAfter(Clock::time_point t, double seconds)
{
    return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Profiles every node at each thread count and sub-batch size, done by `until`:
// each step's runs are sized from the time left, so a slow compile or a slow
// step takes runs from the steps after it (down to one timed run each).
void profileVariant(Variant& v, const TuneOptions& o, int cores, Clock::time_point until, const TuneProgress& progress,
                    int& step, int steps, const std::atomic<bool>* cancelled)
{
    const auto compileStart = Clock::now();
    const auto compiled = runtime().compile(v.prepared->model);
    v.loadSeconds += since(compileStart);
    const size_t nodes = v.prepared->model.graph.nodeCount();
    const std::vector<int> counts = threadCounts(cores);
    PlanSettings staticSettings;
    staticSettings.workers = cores;
    const Costs fallback = costTable(*v.prepared, staticSettings);

    // One run at the full batch on one thread sizes the rest.
    compiled->setInputs(runInputs(v.prepared->model, *compiled, v.prepared->inputFiles, o.batch, 1));
    auto probe = compiled->serialExecutor(1);
    probe->run();
    const double oneRun = probe->run();
    probe.reset();
    // Seconds of one run of every (size, threads) step not yet profiled, at one thread's speed.
    std::vector<int> sizes;
    for (int d : divisors(o.batch))
        if (!v.costs.count(o.batch / d))
            sizes.push_back(o.batch / d);
    double work = 0;
    for (int samples : sizes)
        work += oneRun * (double(samples) / o.batch) * double(counts.size());

    for (int samples : sizes) {
        compiled->setInputs(runInputs(v.prepared->model, *compiled, v.prepared->inputFiles, samples, 1));
        CostTable table = *fallback.table;
        for (int t : counts) {
            checkCancel(cancelled);
            // Each step left gets this many timed runs and one warm-up.
            const int runs = std::clamp(int(secondsUntil(until) / std::max(work, 1e-6)) - 1, 1, 10);
            work -= oneRun * (double(samples) / o.batch);
            const MeasuredCosts m = profileNodes(*compiled, nodes, samples, runs, t, 1);
            if (t == 1)
                table = CostTable::fromMeasuredSeconds(m.nodeSeconds, samples, *fallback.table, "measured",
                                                       untimedPerNode(m));
            else
                table.setThreadedSeconds(t, m.nodeSeconds, samples, untimedPerNode(m));
            if (progress)
                progress("profiling", ++step, steps);
        }
        Costs c;
        c.table = std::make_shared<const CostTable>(std::move(table));
        c.measured = true;
        v.costs[samples] = c;
    }
}

TuneCandidate candidateOf(const Variant& v, const std::string& model, const PlanSettings& settings, Schedule s,
                          const CostTable& costs)
{
    TuneCandidate c;
    c.config.model = model;
    c.config.passes = v.passes;
    c.config.settings = settings;
    c.simulated = simulateMakespan(s, costs);
    c.config.schedule = std::move(s);
    return c;
}

// Each worker's items on the thread counts up to its worker's that cost least
// together, switches included (chooseThreads).
Schedule withBestNodeThreads(Schedule s, const CostTable& costs)
{
    if (s.threads.empty())
        s.threads.assign(s.instanceCount(), 0);
    for (size_t c = 0; c < s.clusters.size(); ++c) {
        const int most = s.workerThreadsOf(c);
        std::vector<InstanceId> own;
        std::vector<ThreadChoiceItem> items;
        for (InstanceId i : s.clusters[c])
            if (s.threads[size_t(i)] == 0 && s.owner[size_t(i)] == int32_t(c)) {
                own.push_back(i);
                items.push_back({s.node(i), s.samples(i), most});
            }
        const std::vector<int> chosen = chooseThreads(items, costs, most);
        for (size_t k = 0; k < own.size(); ++k)
            s.threads[size_t(own[k])] = chosen[k];
    }
    return s;
}

// Cores split in proportion to the clusters' loads, each at least one.
std::vector<int32_t> proportionalThreads(const Schedule& s, const CostTable& costs, int cores)
{
    Schedule one = s;
    one.workerThreads.clear();
    const std::vector<double> loads = clusterLoads(one, costs);
    const size_t k = loads.size();
    std::vector<int32_t> threads(k, 1);
    const double total = std::max(1e-12, std::accumulate(loads.begin(), loads.end(), 0.0));
    for (int left = cores - int(k); left > 0; --left) {
        // The next core goes to the cluster furthest below its share.
        size_t pick = 0;
        double worst = -1e300;
        for (size_t c = 0; c < k; ++c) {
            const double deficit = loads[c] / total * cores - threads[c];
            if (deficit > worst) {
                worst = deficit;
                pick = c;
            }
        }
        ++threads[pick];
    }
    return threads;
}

// Every candidate of one pass list, simulated.
std::vector<TuneCandidate> enumerate(const Variant& v, const std::string& model, int cores, int batch,
                                     bool nodeThreads)
{
    std::vector<TuneCandidate> out;
    const Costs& full = v.costs.at(batch);
    PlanSettings base;
    base.workers = cores;
    base.batch = batch;
    base.costs = "measured";
    for (int t : threadCounts(cores)) {
        TuneCandidate c = candidateOf(v, model, base, oneWorkerSchedule(*v.prepared, batch, t), *full.table);
        c.config.serialThreads = t;
        c.config.schedule.reset();
        out.push_back(std::move(c));
    }
    if (cores > 1 && nodeThreads)
        out.push_back(candidateOf(v, model, base,
                                  withBestNodeThreads(oneWorkerSchedule(*v.prepared, batch, cores), *full.table),
                                  *full.table));
    for (const SchedulerInfo& scheduler : schedulers())
        for (int d : divisors(batch))
            for (int workers = 2; workers <= cores; ++workers)
                for (bool hybrid : {false, true}) {
                    if (hybrid && (d > 1 || workers != cores))
                        continue;
                    PlanSettings s = base;
                    s.algorithm = scheduler.name;
                    s.degree = d;
                    s.workers = workers;
                    s.hybrid = hybrid;
                    const Costs& costs = v.costs.at(batch / d);
                    const auto planned = plan(v.prepared, s, costs, false);
                    const Schedule& planned1 = planned->plan.schedule;
                    if (planned1.clusters.size() < 2 || !planned->plan.validation.valid)
                        continue;
                    std::vector<Schedule> ways = {planned1};
                    if (int(planned1.clusters.size()) < cores) {
                        Schedule split = planned1;
                        split.workerThreads = proportionalThreads(planned1, *costs.table, cores);
                        ways.push_back(split);
                    }
                    for (size_t k = 0, n = ways.size(); k < n && nodeThreads; ++k)
                        if (ways[k].maxThreads() > 1)
                            ways.push_back(withBestNodeThreads(ways[k], *costs.table));
                    for (Schedule& w : ways)
                        out.push_back(candidateOf(v, model, s, std::move(w), *costs.table));
                }
    return out;
}


bool oneWorker(const RunConfig& c) { return c.serial() || (c.schedule && c.schedule->clusters.size() == 1); }

// Which candidates to measure: serial on 1 and P threads (the references),
// the best one-worker candidate, then the rest by simulation.
std::vector<size_t> pickToMeasure(const std::vector<TuneCandidate>& c, const std::string& mainPasses, int cores,
                                  size_t limit)
{
    std::vector<size_t> order(c.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return c[a].simulated < c[b].simulated; });
    std::vector<size_t> pick;
    auto add = [&](size_t i) {
        if (std::find(pick.begin(), pick.end(), i) == pick.end())
            pick.push_back(i);
    };
    for (size_t i = 0; i < c.size(); ++i)
        if (c[i].config.passes == mainPasses && (c[i].config.serialThreads == 1 || c[i].config.serialThreads == cores))
            add(i);
    // With room for only one more, it goes to the best by simulation.
    for (size_t i : order)
        if (limit > 3 && oneWorker(c[i].config)) {
            add(i);
            break;
        }
    for (size_t i : order)
        if (pick.size() < limit)
            add(i);
    return pick;
}

}  // namespace

void dropDuplicates(std::vector<TuneCandidate>& candidates)
{
    std::set<std::string> seen;
    std::vector<TuneCandidate> kept;
    for (TuneCandidate& c : candidates) {
        int serialThreads = c.config.serialThreads;
        std::string what;
        if (c.config.schedule) {
            // What runs: the clusters, the order, and each item's effective threads.
            const Schedule& s = *c.config.schedule;
            nlohmann::json j = scheduleToJson(s);
            for (const char* field : {"algorithm", "threads", "worker_threads", "workers"})
                j.erase(field);
            std::vector<int> threads;
            for (size_t k = 0; k < s.clusters.size(); ++k)
                for (InstanceId i : s.clusters[k])
                    threads.push_back(s.threadsOf(k, i));
            // One worker on the whole batch with every node on the same count runs as
            // serial on that many threads (per-node choices that kept every node on P:
            // mobilenet_v2 measured such a copy 1.03x faster inside tune, 0.92x after).
            const bool asSerial = s.clusters.size() == 1 && s.degree == 1 && !threads.empty() &&
                                  std::all_of(threads.begin(), threads.end(), [&](int t) { return t == threads[0]; });
            if (asSerial) {
                serialThreads = threads[0];
            } else {
                j["effective_threads"] = threads;
                what = j.dump();
            }
        }
        if (seen.insert(c.config.passes + "|" + std::to_string(serialThreads) + "|" + what).second)
            kept.push_back(std::move(c));
    }
    candidates = std::move(kept);
}

double TuneCandidate::median() const { return measured.empty() ? std::nan("") : ramiel::median(measured); }

void chooseMeasured(TuneResult& r, const std::string& mainPasses)
{
    std::stable_sort(r.candidates.begin(), r.candidates.end(), [](const TuneCandidate& a, const TuneCandidate& b) {
        if (a.measuredAlone() != b.measuredAlone())
            return a.measuredAlone();
        return a.measuredAlone() ? a.median() < b.median() : a.simulated < b.simulated;
    });
    r.chosen = 0;
    bool haveSerial = false;
    for (size_t i = 0; i < r.candidates.size(); ++i) {
        const TuneCandidate& c = r.candidates[i];
        if (!c.measuredAlone() || !c.config.serial())
            continue;
        if (c.config.serialThreads == 1 && c.config.passes == mainPasses)
            r.serialOneThread = i;
        if (!haveSerial)
            r.bestSerial = i;
        haveSerial = true;
    }
    if (!haveSerial)
        throw Error(ErrorKind::Internal, r.model, "tune measured no serial configuration");
    const TuneCandidate& fastest = r.candidates[0];
    const TuneCandidate& best = r.candidates[r.bestSerial];
    const std::string cores = std::to_string(r.cores);
    if (!fastest.config.serial() && fastest.median() > best.median() * (1 - kTieMargin)) {
        r.chosen = r.bestSerial;
        r.verdict = "no clear gain at P = " + cores + ": " + fastest.config.label() + " measured within " +
                    std::to_string(int(kTieMargin * 100)) + " % of " + best.config.label() +
                    ", which is kept as the simpler configuration";
    } else if (oneWorker(fastest.config)) {
        r.verdict = "no inter-op gain on this model at P = " + cores + ": " + fastest.config.label() + " is fastest";
    } else {
        r.verdict = fastest.config.label() + " is fastest: " +
                    formatFixed(r.candidates[r.serialOneThread].median() / fastest.median(), 2) +
                    "x over serial on 1 thread, " + formatFixed(best.median() / fastest.median(), 2) +
                    "x over the best serial configuration (" + best.config.label() + ")";
    }
}

TuneResult tune(const std::string& model, const TuneOptions& o, const TuneProgress& progress,
                const std::atomic<bool>* cancelled)
{
    const auto start = Clock::now();
    PlanSettings cores;
    cores.workers = o.cores;
    TuneResult r;
    r.hostBefore = probeHost();
    r.model = model;
    r.cores = cores.cores();
    r.batch = o.batch;
    if (o.passes.empty())
        throw Error(ErrorKind::Usage, model, "tune needs at least one pass list");
    if (o.budgetSeconds <= 0)
        throw Error(ErrorKind::Usage, model, "the budget must be positive");

    // 1. Profile.
    std::vector<Variant> variants;
    for (const std::string& passes : o.passes) {
        PrepareOptions options;
        options.shapes = o.shapes;
        options.inputs = o.inputs;
        options.passes = passes;
        options.machineFile = o.machineFile;
        const auto prepareStart = Clock::now();
        variants.push_back({passes, prepare(model, options), {}, 0});
        variants.back().loadSeconds = since(prepareStart);
    }
    int step = 0;
    const int steps = int(variants.size() * divisors(o.batch).size() * threadCounts(r.cores).size());
    // Profiling ends at its share of the budget, counted from the start (loading included);
    // each pass list gets an equal part of what is left when its turn comes.
    const auto profileEnd = secondsAfter(start, o.budgetSeconds * kProfileShare);
    for (size_t k = 0; k < variants.size(); ++k) {
        const double share = std::max(0.0, secondsUntil(profileEnd)) / double(variants.size() - k);
        profileVariant(variants[k], o, r.cores, secondsAfter(Clock::now(), share), progress, step, steps, cancelled);
    }
    r.profileSeconds = since(start);

    // 2, 3. Enumerate and simulate.
    for (const Variant& v : variants) {
        std::vector<TuneCandidate> c = enumerate(v, model, r.cores, o.batch, o.nodeThreads);
        for (TuneCandidate& x : c)
            x.config.shapes = o.shapes;
        r.candidates.insert(r.candidates.end(), std::make_move_iterator(c.begin()), std::make_move_iterator(c.end()));
    }
    dropDuplicates(r.candidates);
    if (o.predictCores > r.cores) {
        r.predictCores = o.predictCores;
        for (const Variant& v : variants) {
            std::vector<TuneCandidate> c = enumerate(v, model, o.predictCores, o.batch, o.nodeThreads);
            r.predictions.insert(r.predictions.end(), std::make_move_iterator(c.begin()),
                                 std::make_move_iterator(c.end()));
        }
        dropDuplicates(r.predictions);
        std::stable_sort(r.predictions.begin(), r.predictions.end(),
                         [](const TuneCandidate& a, const TuneCandidate& b) { return a.simulated < b.simulated; });
    }

    // 4. Measure, each in its own process, as many runs as the budget allows.
    const auto measureStart = Clock::now();
    const double left = std::max(0.0, o.budgetSeconds - since(start));
    size_t limit = kMaxMeasured;
    std::vector<size_t> pick;
    int runs = 0;
    for (;; --limit) {
        checkCancel(cancelled);
        pick = pickToMeasure(r.candidates, o.passes.front(), r.cores, limit);
        double turn = 0, untimed = 0;  // a run of each; each one's untimed start of a turn
        for (size_t i : pick) {
            turn += r.candidates[i].simulated;
            untimed += std::max(r.candidates[i].simulated, kTurnWarmUpSeconds);
        }
        // Loading: each process loads libtorch (as this one did) and prepares and
        // compiles the model (as the profiling did), side by side on the cores;
        // then the warm-up runs, one process at a time; then turns of kBlock
        // timed runs, each after kTurnWarmUpSeconds of untimed ones.
        const double perProcess = runtimeLoadSeconds() + variants.front().loadSeconds;
        const double loading = double(pick.size()) * perProcess / std::max(1, r.cores) + kWarmUpRuns * turn;
        runs = int((0.85 * left - loading) / ((turn * kBlock + untimed) / kBlock));  // a turn may finish past the deadline
        if (runs >= 9 || limit <= 3)
            break;
    }
    r.runsEach = std::clamp(runs, 3, 15);
    std::vector<TimedConfiguration> timed;
    std::vector<Schedule> schedules;  // what the timed configurations point at
    schedules.reserve(pick.size());
    for (size_t i : pick) {
        const RunConfig& c = r.candidates[i].config;
        TimedConfiguration t;
        t.label = c.label();
        t.passes = c.passes;
        if (c.serial()) {
            t.threads = c.serialThreads;
        } else {
            schedules.push_back(*c.schedule);
            t.schedule = &schedules.back();
        }
        timed.push_back(t);
    }
    TimingRequest request;
    request.model = model;
    request.prepare.shapes = o.shapes;
    request.prepare.inputs = o.inputs;
    request.prepare.passes = o.passes.front();
    request.batch = o.batch;
    const double deadline = o.budgetSeconds;
    const auto seconds = timeInOwnProcesses(
        request, timed, o.workerCommand, r.runsEach, kBlock,
        [&](int done, int total) {
            checkCancel(cancelled);
            if (progress)
                progress("measuring", done, total);
        },
        [&, longest = 0.0](double turn) mutable {
            // Stop when another turn, as long as the longest so far, would overrun the budget.
            longest = std::max(longest, turn);
            return since(start) + longest > deadline;
        });
    for (size_t k = 0; k < pick.size(); ++k)
        r.candidates[pick[k]].measured = seconds[k];
    r.measureSeconds = since(measureStart);
    r.hostAfter = probeHost();

    // 5. Choose.
    chooseMeasured(r, o.passes.front());
    r.totalSeconds = since(start);
    if (r.totalSeconds > o.budgetSeconds)
        r.note = "took " + formatFixed(r.totalSeconds, 2) + " s of a " + formatFixed(o.budgetSeconds, 2) +
                 " s budget (profiling " + formatFixed(r.profileSeconds, 2) + " s, then " + std::to_string(pick.size()) +
                 " configurations loaded and timed " + std::to_string(r.runsEach) + " times each in " +
                 formatFixed(r.measureSeconds, 2) + " s)";
    return r;
}

namespace {

nlohmann::json predictionRows(const TuneResult& r)
{
    nlohmann::json rows = nlohmann::json::array();
    for (const TuneCandidate& c : r.predictions)
        rows.push_back({{"configuration", c.config.title()},
                        {"threads", c.config.threadsText()},
                        {"predicted_ms", c.simulated * 1e3}});
    return rows;
}

}  // namespace

nlohmann::json tuneResultToJson(const TuneResult& r)
{
    nlohmann::json rows = nlohmann::json::array();
    const double one = r.candidates[r.serialOneThread].median(), best = r.candidates[r.bestSerial].median();
    for (const TuneCandidate& c : r.candidates) {
        nlohmann::json row = {{"configuration", c.config.label()},
                              {"passes", c.config.passes},
                              {"threads", c.config.threadsText()},
                              {"simulated_ms", c.simulated * 1e3}};
        if (c.measuredAlone()) {
            std::vector<double> sorted = c.measured;
            std::sort(sorted.begin(), sorted.end());
            row["measured_ms"] = c.median() * 1e3;
            row["p25_ms"] = sorted[sorted.size() / 4] * 1e3;
            row["p75_ms"] = sorted[sorted.size() * 3 / 4] * 1e3;
            row["speedup_vs_serial_1t"] = one / c.median();
            row["speedup_vs_best_serial"] = best / c.median();
        }
        rows.push_back(row);
    }
    return {{"schema", "ramiel.tune/1"},
            {"model", r.model},
            {"cores", r.cores},
            {"batch", r.batch},
            {"runs_each", r.runsEach},
            {"isolation", "each configuration in its own process"},
            {"host", hostAroundToJson(r.hostBefore, r.hostAfter)},
            {"profile_seconds", r.profileSeconds},
            {"measure_seconds", r.measureSeconds},
            {"total_seconds", r.totalSeconds},
            {"verdict", r.verdict},
            {"note", r.note},
            {"candidates", rows},
            {"predicted_cores", r.predictCores},
            {"predictions", predictionRows(r)},
            {"chosen", runConfigToJson(r.candidates[r.chosen].config)}};
}

}  // namespace ramiel::pipeline
