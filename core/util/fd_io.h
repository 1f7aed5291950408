// Writing a whole buffer to a file descriptor (POSIX write() may write less).
#pragma once

#include <string_view>

namespace ramiel {

// Writes every byte, retrying after EINTR and short writes; false on error (errno set).
bool writeAll(int fd, std::string_view data);

}  // namespace ramiel
