#include "core/util/atomic_file.h"

#include "core/util/error.h"
#include "core/util/fd_io.h"
#include "core/util/temp_files.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace ramiel {

namespace {

// Keeps ".<name>.ramiel-<pid>-XXXXXX" within NAME_MAX (255).
std::string temporaryPrefix(const std::string& target) { return "." + target.substr(0, 200) + ".ramiel-"; }

mode_t currentUmask()
{
    std::ifstream in("/proc/self/status");  // Linux 4.7+: reading it does not change it
    std::string line;
    while (std::getline(in, line))
        if (line.compare(0, 6, "Umask:") == 0)
            return mode_t(std::strtoul(line.c_str() + 6, nullptr, 8));
    const mode_t m = ::umask(022);  // older kernels: set and put back
    ::umask(m);
    return m;
}

// Removes temporaries of `target` in `dir` whose process is gone.
void sweepStaleTemporaries(const std::string& dir, const std::string& target)
{
    DIR* d = ::opendir(dir.c_str());
    if (!d)
        return;
    while (const dirent* e = ::readdir(d)) {
        long pid = 0;
        if (!isTemporaryOf(e->d_name, target, &pid) || pid == long(::getpid()))
            continue;
        if (::kill(pid_t(pid), 0) == 0 || errno != ESRCH)
            continue;  // still running (or not ours to ask): its write may be in progress
        const std::string path = dir + "/" + e->d_name;
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
            ::unlink(path.c_str());
    }
    ::closedir(d);
}

}  // namespace

bool isTemporaryOf(const std::string& name, const std::string& target, long* pid)
{
    const std::string prefix = temporaryPrefix(target);
    if (name.compare(0, prefix.size(), prefix) != 0)
        return false;
    // <pid>-XXXXXX
    size_t i = prefix.size(), digits = 0;
    long value = 0;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && digits < 10) {
        value = value * 10 + (name[i++] - '0');
        ++digits;
    }
    if (digits == 0 || value <= 0 || i >= name.size() || name[i] != '-' || name.size() - i - 1 != 6)
        return false;
    if (pid)
        *pid = value;
    return true;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path))
{
    namespace fs = std::filesystem;
    // Through a symbolic link: the file it names is replaced, the link stays.
    std::error_code ec;
    fs::path target(path_);
    if (fs::is_symlink(fs::symlink_status(target, ec))) {
        const fs::path resolved = fs::weakly_canonical(target, ec);
        if (!ec)
            target = resolved;
    }
    struct stat st {};
    const bool exists = ::stat(target.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        throw Error(ErrorKind::Io, path_, "is a folder, not a file");
    if (exists && !S_ISREG(st.st_mode)) {
        // A device, FIFO or socket (/dev/null, /dev/stdout): written in place, never replaced.
        fd_ = ::open(target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd_ < 0)
            throw Error(ErrorKind::Io, path_, std::string("cannot write: ") + std::strerror(errno));
        direct_ = true;
        return;
    }

    const std::string dir = target.has_parent_path() ? target.parent_path().string() : std::string(".");
    const std::string name = target.filename().string();
    sweepStaleTemporaries(dir, name);
    mode_ = exists ? unsigned(st.st_mode & 01777) : unsigned(0666 & ~currentUmask());
    tmp_ = dir + "/" + temporaryPrefix(name) + std::to_string(::getpid()) + "-XXXXXX";
    target_ = target.string();
    fd_ = ::mkstemp(tmp_.data());
    if (fd_ < 0) {
        const int err = errno;
        throw Error(ErrorKind::Io, path_, "cannot create a file in " + dir + ": " + std::strerror(err));
    }
    // A signal between mkstemp and the registration leaves it to the next run's sweep.
    slot_ = registerTemporaryFile(tmp_);
    if (exists && (st.st_uid != ::geteuid() || st.st_gid != ::getegid()))
        (void)!::fchown(fd_, st.st_uid, st.st_gid);  // keep the owner where we may (root); else ours
}

AtomicFile::~AtomicFile()
{
    if (fd_ >= 0)
        ::close(fd_);
    if (!committed_ && !direct_)
        ::unlink(tmp_.c_str());
    forgetTemporaryFile(slot_);
}

void AtomicFile::fail(int err, const char* what)
{
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
    throw Error(ErrorKind::Io, path_, std::string(what) + ": " + std::strerror(err));
}

void AtomicFile::write(std::string_view data)
{
    if (fd_ < 0)
        throw Error(ErrorKind::Internal, path_, "write after the file was closed");
    if (!writeAll(fd_, data))
        fail(errno, "cannot write");
}

void AtomicFile::commit()
{
    if (fd_ < 0)
        throw Error(ErrorKind::Internal, path_, "commit after the file was closed");
    if (direct_) {
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0)
            fail(errno, "cannot write");
        committed_ = true;
        return;
    }
    if (::fchmod(fd_, mode_t(mode_)) != 0)
        fail(errno, "cannot set the file's mode");
    if (::fsync(fd_) != 0)
        fail(errno, "cannot write");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0)
        fail(errno, "cannot write");
    if (std::rename(tmp_.c_str(), target_.c_str()) != 0)
        fail(errno, "cannot write");
    committed_ = true;
}

void writeFileAtomically(const std::string& path, std::string_view content)
{
    AtomicFile file(path);
    file.write(content);
    file.commit();
}

}  // namespace ramiel
