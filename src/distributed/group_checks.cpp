// The checks and counters every process group shares (group_checks.hpp).
#include "distributed/group_checks.hpp"

#include <string>

namespace tg::distributed::detail {

void check_root(const char* what, int root, int size) {
    if (root < 0 || root >= size)
        throw value_error(std::string(what) + ": root " + std::to_string(root) +
                          " is not a rank of a group of " + std::to_string(size));
}

void check_per_rank(const char* what, const char* role, const std::vector<Tensor>& ts,
                    const Tensor& ref, int size,
                    const std::function<void(const Tensor&)>& check_one) {
    if (ts.size() != size_t(size))
        throw value_error(std::string(what) + ": " + role + " holds " + std::to_string(ts.size()) +
                          " tensors, expected one per rank (" + std::to_string(size) + ")");
    for (size_t i = 0; i < ts.size(); ++i) {
        check_one(ts[i]);
        if (ts[i].sizes() != ref.sizes() || ts[i].dtype() != ref.dtype())
            throw shape_error(std::string(what) + ": " + role + "[" + std::to_string(i) + "] is " +
                              shape_str(ts[i].sizes()) + " " + dtype_name(ts[i].dtype()) +
                              ", expected " + shape_str(ref.sizes()) + " " +
                              dtype_name(ref.dtype()));
    }
}

void check_op(const char* what, const Tensor& t, ReduceOp op) {
    if (op == ReduceOp::Avg && t.dtype() == Dtype::Int64)
        throw dtype_error(std::string(what) +
                          ": ReduceOp::Avg needs a floating-point tensor, got " +
                          shape_str(t.sizes()) + " int64");
}

GroupStats GroupCounters::snapshot() const {
    GroupStats s;
    s.all_reduces = all_reduces;
    s.broadcasts = broadcasts;
    s.all_gathers = all_gathers;
    s.reduce_scatters = reduce_scatters;
    s.barriers = barriers;
    s.all_reduce_bytes = all_reduce_bytes;
    return s;
}

}  // namespace tg::distributed::detail
