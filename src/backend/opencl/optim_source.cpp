// OpenCL C text of the fused optimizer updates (backend.hpp's OptimOp), the twins of
// cpu/optim_kernels.cpp: one work-item per element reads p, g and the state once and writes
// them once. Each statement is the expression of one table kernel (kernels.def) the composed
// update runs, in the same order, on scalars of T: one statement per kernel, so that the OpenCL
// compiler contracts (FP_CONTRACT) exactly what it contracts in those kernels, and the update is
// the composed one's bits on this device. The options are compile-time constants of one kernel
// per combination (optim_adam_<decay><ams>, optim_sgd_<wd><mom><nest>): with them as arguments,
// PoCL ran plain SGD at a third of the table's axpy speed.
#include <string>

#include "backend/opencl/source.hpp"

namespace tg::backend {

namespace {

// DECAY: 0 none, 1 coupled (g + f·p), 2 decoupled (p·f); AMS: amsgrad
const char* kAdam = R"CL(
__kernel void optim_adam_NAME(__global T* p, long po, __global const T* g, long go,
                              __global T* m, long mo, __global T* v, long vo, __global T* vm,
                              long vmo, T f, T b1, T b1c, T b2, T b2c, T rb, T eps, T step,
                              long n) {
    TG_GID T pv = p[po + i], gv = g[go + i];
    if (DECAY == 2) pv = pv * f;       /* mul_scalar */
    if (DECAY == 1) gv = gv + f * pv;  /* axpy(grad, p, wd) */
    const T mv = m[mo + i] * b1 + gv * b1c;  /* axpby */
    T vv = v[vo + i] * b2 + gv * gv * b2c;   /* axpby_square */
    m[mo + i] = mv;
    v[vo + i] = vv;
    if (AMS) {
        const T a = vm[vmo + i];
        vv = (a != a || a > vv) ? a : vv;  /* maximum */
        vm[vmo + i] = vv;
    }
    const T d = tg_div(mv, sqrt(vv) * rb + eps);  /* adam_direction */
    p[po + i] = pv + step * d;                    /* axpy (add_) */
}
)CL";

// WD: weight decay; MOM: 0 none, 1 the first step (buf = d), 2 later; NEST: 0 no, 1 d is the
// gradient (add(d, mul(buf, momentum))), 2 d is a temporary (d.add_(buf, momentum))
const char* kSgd = R"CL(
__kernel void optim_sgd_NAME(__global T* p, long po, __global const T* g, long go,
                             __global T* buf, long bo, T wd, T mu, T dc, T lr, long n) {
    TG_GID T d = g[go + i];
    if (WD) {
        const T t = p[po + i] * wd;  /* mul(p, wd) */
        d = t + (T)1 * d;            /* add_(grad) */
    }
    if (MOM) {
        T bv = d;  /* the first step: buf = d.clone() */
        if (MOM == 2) {
            bv = buf[bo + i] * mu;  /* mul_(momentum) */
            bv = bv + dc * d;       /* add_(d, 1 - dampening) */
        }
        buf[bo + i] = bv;
        if (NEST == 1) {
            const T t = bv * mu;
            d = d + t;
        } else if (NEST == 2) {
            d = d + mu * bv;
        } else {
            d = bv;
        }
    }
    p[po + i] = p[po + i] + lr * d;  /* add_(d, -lr) */
}
)CL";

/// text with NAME replaced by name, between #defines of the flags and their #undefs.
std::string variant(const char* text, const std::string& name,
                    std::initializer_list<std::pair<const char*, int>> flags) {
    std::string s, t = text;
    for (const auto& [flag, v] : flags)
        s += std::string("#define ") + flag + " " + std::to_string(v) + "\n";
    for (size_t at; (at = t.find("NAME")) != std::string::npos;)
        t.replace(at, 4, name);
    s += t;
    for (const auto& [flag, v] : flags)
        s += std::string("#undef ") + flag + "\n";
    return s;
}

std::string optim_source() {
    std::string s;
    for (int decay = 0; decay < 3; ++decay)
        for (int ams = 0; ams < 2; ++ams)
            s += variant(kAdam, std::to_string(decay) + std::to_string(ams),
                         {{"DECAY", decay}, {"AMS", ams}});
    for (int wd = 0; wd < 2; ++wd)
        for (int mom = 0; mom < 3; ++mom)
            for (int nest = 0; nest < (mom ? 3 : 1); ++nest)
                s += variant(kSgd, std::to_string(wd) + std::to_string(mom) + std::to_string(nest),
                             {{"WD", wd}, {"MOM", mom}, {"NEST", nest}});
    return s;
}

}  // namespace

const char* opencl_optim_source() {
    static const std::string s = optim_source();
    return s.c_str();
}

}  // namespace tg::backend
