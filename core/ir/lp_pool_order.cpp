#include "core/ir/lp_pool_order.h"

namespace ramiel {

double lpPoolOrder(const Node& n)
{
    const Attribute* a = n.attr("p");
    return !a ? 2.0 : a->kind == Attribute::Kind::Float ? double(a->f) : double(a->i);
}

}  // namespace ramiel
