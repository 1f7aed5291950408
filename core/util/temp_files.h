// Temporary files that must not outlive the process. A fixed table that a
// signal handler can read: on SIGINT, SIGTERM or SIGHUP the handler unlinks
// every registered path, then the signal takes its default action (the process
// ends as it would have). Handlers are installed at registration, and only for
// signals at their default action (an ignored SIGHUP stays ignored, a program's
// own handler stays; Qt Test's, for one).
#pragma once

#include <string>

namespace ramiel {

// Registers `path`; returns its slot for forgetTemporaryFile, or -1 when the
// table is full or the path too long (the file is then left to the next run's sweep).
int registerTemporaryFile(const std::string& path);
// The file is gone or has been renamed into place: stop tracking it.
void forgetTemporaryFile(int slot);

}  // namespace ramiel
