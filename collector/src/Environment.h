// What the collector reads from and arranges in the process environment at load time.
#pragma once

#include <cstdint>
#include <string>

#include "torchscope/base/Settings.h"

namespace torchscope::collector {

namespace settings = base::settings;

// The variable's value, or "" when unset (variables of others: RANK, LOCAL_RANK, ...).
[[nodiscard]] std::string envString(const char* name);
// A setting of the table (torchscope/base/Settings.h): its text (the default when unset), a flag ("0", "false",
// "off", "no" are false), a whole number (a value out of its type or range is the default, with a one-line warning
// on stderr: the job goes on).
[[nodiscard]] std::string settingString(const base::Setting& setting);
[[nodiscard]] bool settingOn(const base::Setting& setting);
[[nodiscard]] std::int64_t settingInteger(const base::Setting& setting);

// True when this process is a Python interpreter (the bridge can run in it).
[[nodiscard]] bool isPythonProcess();

// Marks the job's first traced process (TORCHSCOPE_ROOT_PID) and makes TORCHSCOPE_OUTPUT absolute,
// so that every process of the job names its store next to the same requested path. A
// TORCHSCOPE_OUTPUT that is a directory or ends in '/' is a run folder: created, and the path
// becomes `<folder>/run.db`.
void claimJobEnvironment();
// The absolute store path the job asked for: TORCHSCOPE_OUTPUT, or torchscope-<root pid>.db.
[[nodiscard]] std::string requestedOutput();

// Prepends the bridge directory to PYTHONPATH (remembering the original for the bridge to
// restore) so that the interpreter imports the bridge's sitecustomize at start-up.
void prepareBridgePath();

}  // namespace torchscope::collector
