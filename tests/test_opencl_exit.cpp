// Exiting with OpenCL work still queued (Note [Device shutdown] in src/backend/registry.cpp).
// This executable runs itself as the child process: `test_opencl_exit --opencl-exit-child MODE`
// makes OpenCL tensors and returns from main at once, with PoCL's kernel cache pointed at a fresh
// empty directory, so PoCL is still compiling when the process exits (before the fix the child
// died of SIGSEGV or SIGABRT every time, in each mode). The parent checks that it exited with
// status 0. Skips cleanly without an OpenCL device.
#define BOOST_TEST_MODULE test_opencl_exit
#define BOOST_TEST_NO_MAIN
#include <spawn.h>
#include <sys/wait.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tapegrad/tapegrad.hpp"

extern char** environ;

namespace {

const char* const kChildFlag = "--opencl-exit-child";
const tg::Device kDev = tg::Device::opencl(0);

// Made before main, so destroyed after the device's shutdown, which runs at exit: a tensor freed
// during static teardown.
tg::Tensor g_outlives_shutdown;

/// The child: queues work and returns.
int child(const std::string& mode) {
    if (mode == "fill") {  // the smallest program that crashed
        auto a = tg::ones({2, 2}, kDev);
        return 0;
    }
    if (mode == "teardown") {
        // registered before the backend exists, so it runs after the device's shutdown: using
        // the device then must throw, not crash
        std::atexit([] {
            try {
                (void)tg::ones({2}, kDev);
            } catch (const tg::backend_unavailable&) {
                return;
            }
            std::_Exit(3);
        });
        const tg::Tensor a = tg::ones({64, 64}, kDev), b = tg::full({64, 64}, 0.5, kDev);
        g_outlives_shutdown = tg::matmul(a, b);  // a CLBlast GEMM, still queued
        const tg::Tensor c = tg::tanh(g_outlives_shutdown) + a;
        return 0;
    }
    if (mode == "thread") {  // the main thread never touches the device
        std::thread([] { auto a = tg::ones({2, 2}, kDev); }).join();
        return 0;
    }
    return 2;
}

/// Runs this executable as the child in `mode` with POCL_CACHE_DIR=cache; its wait status.
int run_child(const std::string& mode, const std::string& cache) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
        if (std::string(*e).rfind("POCL_CACHE_DIR=", 0) != 0)
            env.emplace_back(*e);
    env.push_back("POCL_CACHE_DIR=" + cache);
    std::vector<char*> envp;
    for (std::string& e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string self = "/proc/self/exe", flag = kChildFlag, m = mode;
    char* argv[] = {self.data(), flag.data(), m.data(), nullptr};
    pid_t pid = 0;
    BOOST_TEST_REQUIRE(posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()) == 0);
    int status = 0;
    BOOST_TEST_REQUIRE(waitpid(pid, &status, 0) == pid);
    return status;
}

struct NeedsOpenCl {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
        boost::test_tools::assertion_result r(tg::is_available(kDev));
        r.message() << kDev.str() << " is not available (backend not built, or no device)";
        return r;
    }
};

}  // namespace

BOOST_AUTO_TEST_CASE(exit_with_work_queued_and_a_cold_kernel_cache,
                     *boost::unit_test::precondition(NeedsOpenCl())) {
    namespace fs = std::filesystem;
    // about 5 s per child on the 2-core VM: PoCL compiles tapegrad's kernels (and, in
    // "teardown", CLBlast's GEMM) from scratch each time
    for (const char* mode : {"fill", "thread", "teardown"}) {
        std::string dir = (fs::temp_directory_path() / "tg-pocl-XXXXXX").string();
        BOOST_TEST_REQUIRE(mkdtemp(dir.data()) != nullptr);
        const int status = run_child(mode, dir);
        fs::remove_all(dir);
        const bool exited = WIFEXITED(status);
        const int code = exited ? WEXITSTATUS(status) : -1;
        BOOST_TEST_CONTEXT("child " << mode) {
            BOOST_TEST(exited, "killed by signal " << (exited ? 0 : WTERMSIG(status)));
            BOOST_TEST(code == 0);
        }
    }
}

int main(int argc, char* argv[]) {
    if (argc == 3 && std::string(argv[1]) == kChildFlag)
        return child(argv[2]);
    return boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
}
