// Writes a file so that readers see either the old or the new content, never
// half of it, and a failed write leaves the old file as it was.
//
// The content goes to a temporary ".<name>.ramiel-<pid>-XXXXXX" beside the
// target, renamed over it at the end. The temporary is removed on failure, on
// SIGINT, SIGTERM and SIGHUP (core/util/temp_files.h), and, when a run was
// killed outright, by the next write to the same target once that pid is gone.
// A replaced file keeps its permission bits (less set-user-ID and set-group-ID);
// a new one gets 0666 less the umask. A symbolic link stays and the file it names
// is replaced; a device or FIFO (/dev/null, /dev/stdout) is written in place.
#pragma once

#include <string>
#include <string_view>

namespace ramiel {

class AtomicFile {
public:
    // Sweeps stale temporaries of `path`, creates a new one. Throws Error(Io).
    explicit AtomicFile(std::string path);
    ~AtomicFile();  // removes the temporary unless committed
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write(std::string_view data);  // throws Error(Io)
    void commit();                      // mode, fsync, rename over the target; throws Error(Io)
    const std::string& temporaryPath() const { return tmp_; }

private:
    [[noreturn]] void fail(int err, const char* what);
    std::string path_, target_, tmp_;  // target_: path_ with a symbolic link resolved
    int fd_ = -1;
    bool direct_ = false;  // a device or FIFO, written in place
    int slot_ = -1;
    unsigned mode_ = 0644;
    bool committed_ = false;
};

// AtomicFile in one call. Throws Error(Io) naming the path and the reason.
void writeFileAtomically(const std::string& path, std::string_view content);

// Whether `name` (a file name, no folder) is one of Ramiel's temporaries for `target`
// (also a file name); its pid in *pid.
bool isTemporaryOf(const std::string& name, const std::string& target, long* pid = nullptr);

}  // namespace ramiel
