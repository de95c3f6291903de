// The OpenCL backend's fused optimizer updates (backend.hpp's OptimOp; the kernels:
// optim_source.cpp): one kernel per parameter, its state on the device; the kernel of the
// parameter's options (optim_adam_<decay><amsgrad>, optim_sgd_<wd><momentum><nesterov>).
#include <string>

#include "backend/opencl/backend.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::opencl {

void OpenClBackend::optim_step(OptimOp op, const OptimStep& s, const View* v) {
    const Dtype d = v[0].dtype;
    need(d, "optimizer step");
    if (d != Dtype::Float32 && d != Dtype::Float64)
        throw dtype_error(std::string("optimizer step: dtype ") + dtype_name(d) +
                          " is not floating");
    std::lock_guard<std::mutex> lock(mu_);
    if (s.n == 0)
        return;
    // an absent operand: p in its place (its kernel does not read it)
    auto m = [&](int k) { return v[k].data ? mem(v[k]) : mem(v[0]); };
    const cl_long n = s.n;
    auto go = [&](auto t) {  // the scalars in T, as the composed update's kernels take them
        using S = decltype(t);
        if (op == OptimOp::Adam) {
            const std::string name =
                "optim_adam_" + std::to_string(s.decay) + std::to_string(int(v[4].data != nullptr));
            run(d, name, n, mem(v[0]), off(v[0]), mem(v[1]), off(v[1]), mem(v[2]), off(v[2]),
                mem(v[3]), off(v[3]), m(4), off(v[4]), S(s.f), S(s.beta1), S(s.beta1c), S(s.beta2),
                S(s.beta2c), S(s.rsqrt_bc2), S(s.eps), S(s.neg_step), n);
            return;
        }
        const bool mom = v[2].data != nullptr;
        const int phase = !mom ? 0 : s.first ? 1 : 2;
        const int nest = !mom || !s.nesterov ? 0 : s.weight_decay == 0 ? 1 : 2;
        const std::string name = "optim_sgd_" + std::to_string(int(s.weight_decay != 0)) +
                                 std::to_string(phase) + std::to_string(nest);
        run(d, name, n, mem(v[0]), off(v[0]), mem(v[1]), off(v[1]), m(2), off(v[2]),
            S(s.weight_decay), S(s.momentum), S(s.dampening_c), S(s.neg_lr), n);
    };
    if (d == Dtype::Float64)
        go(cl_double());
    else
        go(cl_float());
}

}  // namespace tg::backend::opencl
