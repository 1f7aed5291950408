// The scheduling options, declared once. The CLI's plan options, Ramiel
// Studio's Tuning rows and the options table in docs/cli.md are all made from
// planOptions() (in the manner of MLIR's pass options).
#pragma once

#include <string>
#include <variant>
#include <vector>

namespace ramiel::pipeline {

// What a plan is made with. Defaults are the table's defaults.
struct PlanSettings {
    std::string algorithm = "linear";  // a name from schedulers()
    int workers = 0;                   // P; 0: this machine's cores
    int batch = 1;                     // B, in samples of the model's own input
    int degree = 1;                    // d, 1 <= d <= B
    bool clone = true;
    bool switching = true;
    bool hybrid = false;
    std::string costs = "static";      // "static", or a measured-cost JSON file
    double latencyMicroseconds = -1;   // < 0: the machine's calibrated hand-off

    // P with 0 resolved to this machine's cores.
    int cores() const;
    bool operator==(const PlanSettings& o) const;
    bool operator!=(const PlanSettings& o) const { return !(*this == o); }
};

// One option: how the CLI spells it, how Studio labels it, and the field it sets.
struct PlanOption {
    using Field = std::variant<std::string PlanSettings::*, int PlanSettings::*, bool PlanSettings::*,
                               double PlanSettings::*>;
    std::string name;     // the key in configuration files and JSON
    std::string flags;    // CLI11 spelling, e.g. "-p,--cores"
    std::string label;    // Studio's Tuning panel ("" when Studio does not show it)
    std::string help;     // one line
    Field field;
    bool negated = false;  // a flag that clears a bool that is on by default (--no-clone)
    int minimum = 0;       // int options: the allowed range
    int maximum = 0;
    std::string defaultText;  // as the docs show it
    std::vector<std::string> choices;  // string options with a fixed set of values
};

// Every scheduling option, in the order the CLI's help and the Tuning panel list them.
const std::vector<PlanOption>& planOptions();
const PlanOption& findPlanOption(const std::string& name);

// The names of the schedulers, "a, b or c" (for help texts).
std::string schedulerNames();

// The options as a Markdown table (docs/cli.md shows it; a test checks that it does).
std::string describePlanOptions();

}  // namespace ramiel::pipeline
