// <check-only> Declarations from the rest of main.cpp, so that this file compiles on its own.
#include "prelude.cpp"
// </check-only>
// NumPy .npy files (little-endian, C order) for --input and --save-outputs.
struct NpyType {
    const char* descr;
    at::ScalarType dtype;
};
const NpyType kNpyTypes[] = {{"<f4", at::kFloat}, {"<f8", at::kDouble}, {"<f2", at::kHalf}, {"<i8", at::kLong},
                             {"<i4", at::kInt},   {"<i2", at::kShort},  {"|i1", at::kChar}, {"|u1", at::kByte},
                             {"|b1", at::kBool}};

at::Tensor readNpy(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error(path + ": cannot open");
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (data.size() < 12 || data.compare(0, 6, "\x93NUMPY") != 0)
        throw std::runtime_error(path + ": not a .npy file");
    const bool v1 = data[6] == 1;
    const size_t headerLen = v1 ? size_t(uint8_t(data[8])) | size_t(uint8_t(data[9])) << 8
                                : size_t(uint8_t(data[8])) | size_t(uint8_t(data[9])) << 8 | size_t(uint8_t(data[10])) << 16 |
                                      size_t(uint8_t(data[11])) << 24;
    const size_t start = v1 ? 10 : 12;
    if (data.size() < start + headerLen)
        throw std::runtime_error(path + ": truncated .npy header");
    const std::string header = data.substr(start, headerLen);
    if (header.find("'fortran_order': False") == std::string::npos)
        throw std::runtime_error(path + ": only C-order arrays are supported");
    const NpyType* type = nullptr;
    for (const NpyType& t : kNpyTypes)
        if (header.find(std::string("'descr': '") + t.descr + "'") != std::string::npos)
            type = &t;
    if (!type)
        throw std::runtime_error(path + ": unsupported dtype in " + header);
    Ints shape;
    const size_t open = header.find('(', header.find("'shape'"));
    const size_t close = header.find(')', open);
    if (open == std::string::npos || close == std::string::npos)
        throw std::runtime_error(path + ": no shape in the header");
    std::stringstream dims(header.substr(open + 1, close - open - 1));
    for (std::string item; std::getline(dims, item, ',');)
        if (item.find_first_of("0123456789") != std::string::npos)
            shape.push_back(std::stoll(item));
    at::Tensor t = at::empty(shape, at::TensorOptions().dtype(type->dtype));
    if (data.size() != start + headerLen + t.nbytes())
        throw std::runtime_error(path + ": the data does not match the header's shape");
    std::memcpy(t.data_ptr(), data.data() + start + headerLen, t.nbytes());
    return t;
}

void writeNpy(const std::string& path, const at::Tensor& tensor)
{
    const at::Tensor t = tensor.contiguous();
    const char* descr = nullptr;
    for (const NpyType& n : kNpyTypes)
        if (n.dtype == t.scalar_type())
            descr = n.descr;
    if (!descr)
        throw std::runtime_error(path + ": no .npy type for this tensor");
    std::string shape;
    for (int64_t i = 0; i < t.dim(); ++i)
        shape += std::to_string(t.size(i)) + (t.dim() == 1 || i + 1 < t.dim() ? "," : "");
    std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
    while ((10 + header.size() + 1) % 64 != 0)
        header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const char len[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
    out.write(len, 2);
    out << header;
    out.write(static_cast<const char*>(t.data_ptr()), std::streamsize(t.nbytes()));
    if (!out)
        throw std::runtime_error(path + ": cannot write");
}
