#include "core/util/npy.h"

#include "core/util/atomic_file.h"
#include "core/util/error.h"
#include "core/util/resources.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <optional>
#include <sstream>

namespace ramiel {

namespace {

struct Descr {
    const char* code;
    DataType type;
};
const Descr kDescrs[] = {
    {"<f4", DataType::Float}, {"<f8", DataType::Double}, {"<f2", DataType::Float16}, {"<i8", DataType::Int64},
    {"<i4", DataType::Int32}, {"<i2", DataType::Int16},  {"|i1", DataType::Int8},    {"|u1", DataType::UInt8},
    {"|b1", DataType::Bool},  {"<u2", DataType::UInt16}, {"<u4", DataType::UInt32},  {"<u8", DataType::UInt64},
    {"<c8", DataType::Complex64}, {"<c16", DataType::Complex128},
};

std::string quotedValue(const std::string& header, const std::string& key)
{
    const auto k = header.find("'" + key + "'");
    if (k == std::string::npos)
        return {};
    const auto q1 = header.find('\'', header.find(':', k) + 1);
    const auto q2 = header.find('\'', q1 + 1);
    return q1 == std::string::npos || q2 == std::string::npos ? std::string() : header.substr(q1 + 1, q2 - q1 - 1);
}

}  // namespace

bool npyCanStore(DataType t)
{
    for (const Descr& d : kDescrs)
        if (d.type == t)
            return true;
    return false;
}

namespace {

// The header of the .npy file `in` (at its start, `fileSize` bytes long), checked
// against the file's size; leaves `in` at the data.
NpyHeader readNpyHeader(std::istream& in, const std::string& path, uint64_t fileSize)
{
    char lead[12] = {};
    in.read(lead, 10);
    if (in.gcount() < 10 || std::memcmp(lead, "\x93NUMPY", 6) != 0)
        throw Error(ErrorKind::Usage, path, "not a NumPy .npy file");
    const int major = static_cast<unsigned char>(lead[6]);
    size_t headerLen = 0, offset = 10;
    if (major == 1) {
        headerLen = static_cast<unsigned char>(lead[8]) | (size_t(static_cast<unsigned char>(lead[9])) << 8);
    } else if (major == 2 || major == 3) {
        in.read(lead + 10, 2);
        if (in.gcount() < 2)
            throw Error(ErrorKind::Usage, path, ".npy header is truncated");
        for (int i = 0; i < 4; ++i)
            headerLen |= size_t(static_cast<unsigned char>(lead[8 + i])) << (8 * i);
        offset = 12;
    } else {
        throw Error(ErrorKind::Usage, path, "unsupported .npy version " + std::to_string(major));
    }
    if (offset + headerLen > fileSize)
        throw Error(ErrorKind::Usage, path, ".npy header is truncated");
    std::string header(headerLen, '\0');
    in.read(header.data(), std::streamsize(headerLen));
    if (size_t(in.gcount()) != headerLen)
        throw Error(ErrorKind::Usage, path, ".npy header is truncated");
    const std::string descr = quotedValue(header, "descr");
    NpyHeader h;
    for (const Descr& d : kDescrs)
        if (descr == d.code)
            h.dtype = d.type;
    if (h.dtype == DataType::Undefined)
        throw Error(ErrorKind::Usage, path, "unsupported .npy element type '" + descr + "'");
    if (header.find("'fortran_order': True") != std::string::npos)
        throw Error(ErrorKind::Usage, path, "Fortran-ordered arrays are not supported (save with np.ascontiguousarray)");
    const auto open = header.find('(', header.find("'shape'"));
    const auto close = header.find(')', open);
    if (open == std::string::npos || close == std::string::npos)
        throw Error(ErrorKind::Usage, path, ".npy header has no shape");
    std::stringstream dims(header.substr(open + 1, close - open - 1));
    std::string item;
    while (std::getline(dims, item, ',')) {
        const auto first = item.find_first_not_of(' ');
        if (first == std::string::npos)
            continue;
        const auto last = item.find_last_not_of(' ');
        const std::string digits = item.substr(first, last - first + 1);
        int64_t d = 0;
        bool ok = !digits.empty() && digits.size() <= 18;
        for (char c : digits)
            ok = ok && c >= '0' && c <= '9';
        for (size_t i = 0; ok && i < digits.size(); ++i)
            d = d * 10 + (digits[i] - '0');
        if (!ok)
            throw Error(ErrorKind::Usage, path, ".npy header has a bad dimension '" + digits + "'");
        h.dims.push_back(d);
    }
    const std::optional<int64_t> n = Shape::of(h.dims).numel();
    const uint64_t need = n ? byteCount(*n, elementSize(h.dtype)) : UINT64_MAX;
    const uint64_t data = offset + headerLen;
    if (fileSize - data != need)
        throw Error(ErrorKind::Usage, path, "holds " + std::to_string(fileSize - data) + " bytes of data, shape " +
                                                Shape::of(h.dims).toString() + " needs " +
                                                (need == UINT64_MAX ? std::string("more") : std::to_string(need)));
    h.dataBytes = need;
    return h;
}

// The file, opened with its size, or Error(Io) naming it.
std::ifstream openNpy(const std::string& path, uint64_t& size)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(ErrorKind::Io, path, std::string("cannot open: ") + std::strerror(errno));
    std::error_code ec;
    size = std::filesystem::file_size(path, ec);
    if (ec)
        throw Error(ErrorKind::Io, path, "cannot read its size: " + ec.message());
    return in;
}

}  // namespace

NpyHeader readNpyHeader(const std::string& path)
{
    uint64_t size = 0;
    std::ifstream in = openNpy(path, size);
    return readNpyHeader(in, path, size);
}

Tensor readNpy(const std::string& path)
{
    uint64_t size = 0;
    std::ifstream in = openNpy(path, size);
    NpyHeader h = readNpyHeader(in, path, size);
    requireMemory(path, "reading its data", h.dataBytes);
    Tensor t;
    t.dtype = h.dtype;
    t.dims = std::move(h.dims);
    t.data.resize(size_t(h.dataBytes));
    in.read(t.data.data(), std::streamsize(h.dataBytes));
    if (uint64_t(in.gcount()) != h.dataBytes)
        throw Error(ErrorKind::Io, path, "read " + std::to_string(in.gcount()) + " of its " +
                                             std::to_string(h.dataBytes) + " bytes of data");
    return t;
}

void writeNpy(const std::string& path, const Tensor& t)
{
    const char* code = nullptr;
    for (const Descr& d : kDescrs)
        if (d.type == t.dtype)
            code = d.code;
    if (!code)
        throw Error(ErrorKind::Unsupported, path, "cannot store element type " + dataTypeName(t.dtype) + " in .npy");
    std::string shape = "(";
    for (size_t i = 0; i < t.dims.size(); ++i)
        shape += std::to_string(t.dims[i]) + (t.dims.size() == 1 || i + 1 < t.dims.size() ? "," : "");
    shape += ")";
    std::string header = std::string("{'descr': '") + code + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    out += char(header.size() & 0xff);
    out += char(header.size() >> 8);
    out += header;
    out += t.data;
    writeFileAtomically(path, out);
}

std::string sanitizedFileName(const std::string& name)
{
    std::string s;
    for (char c : name)
        s += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
    if (s.empty() || s == "." || s == "..")
        s = "_" + s;
    if (s[0] == '.')
        s[0] = '_';
    return s.substr(0, 200);
}

std::vector<std::string> uniqueFileNames(const std::vector<std::string>& names, const std::string& extension)
{
    std::set<std::string> taken;
    std::vector<std::string> files;
    for (const std::string& name : names) {
        const std::string base = sanitizedFileName(name);
        std::string file = base + extension;
        for (int k = 2; taken.count(file); ++k)
            file = base + "_" + std::to_string(k) + extension;
        taken.insert(file);
        files.push_back(file);
    }
    return files;
}

}  // namespace ramiel
