#include "core/util/atomic_file.h"

#include "core/util/error.h"
#include "core/util/fd_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <filesystem>
#include <unistd.h>

namespace ramiel {

void writeFileAtomically(const std::string& path, std::string_view content)
{
    namespace fs = std::filesystem;
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmp = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(tmp.data());
    if (fd < 0)
        throw Error(ErrorKind::Io, path, std::string("cannot write: ") + std::strerror(errno));
    if (!writeAll(fd, content)) {
        const int err = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        throw Error(ErrorKind::Io, path, std::string("cannot write: ") + std::strerror(err));
    }
    ::fchmod(fd, 0644);
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw Error(ErrorKind::Io, path, std::string("cannot write: ") + std::strerror(err));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw Error(ErrorKind::Io, path, std::string("cannot write: ") + std::strerror(err));
    }
}

}  // namespace ramiel
