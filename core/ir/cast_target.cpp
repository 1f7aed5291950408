#include "core/ir/cast_target.h"

#include <cctype>

namespace ramiel {

DataType castTarget(const Node& n)
{
    const Attribute* to = n.attr("to");
    if (!to)
        return DataType::Undefined;
    if (to->kind != Attribute::Kind::String)
        return dataTypeFromOnnx(int32_t(n.attrInt("to", 0)));
    std::string name;
    for (char c : to->s)
        name += char(std::tolower(static_cast<unsigned char>(c)));
    for (int32_t code = 1; dataTypeFromOnnx(code) != DataType::Undefined; ++code)
        if (dataTypeName(dataTypeFromOnnx(code)) == name)
            return dataTypeFromOnnx(code);
    return DataType::Undefined;
}

}  // namespace ramiel
