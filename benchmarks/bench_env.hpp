#pragma once
/// The machine/run description every benchmark summary starts with, and thread control for
/// OpenBLAS. Declares the two OpenBLAS entry points it needs itself (not <cblas.h>), so it can be
/// included next to any other header.
#include <ctime>
#include <string>
#include <thread>

#include "bench_common.hpp"

extern "C" {
char* openblas_get_corename(void);
char* openblas_get_config(void);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int num_threads);
}

namespace bench {

/// UTC date and time, e.g. "2026-11-22 02:40 UTC".
inline std::string utc_now() {
    std::time_t t = std::time(nullptr);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
    return buf;
}

/// Markdown lines describing the machine and the BLAS configuration of this run.
inline std::string machine_markdown() {
    std::string s;
    s += "- date: " + utc_now() + "\n";
    s += "- CPU: " + cpu_model() + " (" + std::to_string(std::thread::hardware_concurrency()) +
         " logical CPUs)\n";
    s += "- OpenBLAS core: " + std::string(openblas_get_corename()) +
         " (OPENBLAS_CORETYPE=" + env_or_unset("OPENBLAS_CORETYPE") +
         "), config: " + openblas_get_config() + "\n";
    s += "- OPENBLAS_NUM_THREADS=" + env_or_unset("OPENBLAS_NUM_THREADS") +
         ", OMP_NUM_THREADS=" + env_or_unset("OMP_NUM_THREADS") +
         ", OMP_WAIT_POLICY=" + env_or_unset("OMP_WAIT_POLICY") +
         ", GLIBC_TUNABLES=" + env_or_unset("GLIBC_TUNABLES") + "\n";
    return s;
}

}  // namespace bench
