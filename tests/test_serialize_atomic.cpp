// tg::save is atomic (Note [Atomic save] in src/io/posix_file.cpp): savers racing on one path
// never publish a mixed file, a saver killed at a random instant leaves the old or the new file,
// and no save leaves a temporary behind, not even one a killed saver abandoned.
#define BOOST_TEST_MODULE serialize_atomic
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "serialize_util.hpp"

using namespace tgtest;

namespace {

/// Which of the models `m` equals bit for bit: 0, 1, or -1 for neither.
int which_of(tg::nn::Sequential& m, const std::vector<std::vector<Bytes>>& models) {
    auto bits = bits_of(m->parameters());
    for (size_t i = 0; i < models.size(); ++i)
        if (bits == models[i])
            return int(i);
    return -1;
}

}  // namespace

BOOST_AUTO_TEST_CASE(two_savers_and_a_loader_on_one_path) {
    TempDir dir;
    const std::string path = dir.file("model.tgsv");
    // big enough (about 400 KB) that the writes of two saves overlap
    auto a = make_mlp(1, 8192), b = make_mlp(2, 8192), c = make_mlp(3, 8192);
    const std::vector<std::vector<Bytes>> models = {bits_of(a->parameters()),
                                                    bits_of(b->parameters())};
    tg::save(a, path);
    constexpr int kSaves = 40;
    std::mutex mu;
    std::vector<std::string> failures;
    auto failed = [&](const std::string& what) {
        std::lock_guard<std::mutex> lock(mu);
        failures.push_back(what);
    };
    std::atomic<int> savers_left{2};
    auto saver = [&](tg::nn::Sequential& m) {
        for (int i = 0; i < kSaves; ++i)
            try {
                tg::save(m, path);
            } catch (const std::exception& e) {
                failed(std::string("save: ") + e.what());
            }
        --savers_left;
    };
    int loads = 0, mixed = 0;
    std::thread ta(saver, std::ref(a)), tb(saver, std::ref(b));
    do {  // at least one load after both savers finished
        try {
            tg::load(c, path);
            ++loads;
            if (which_of(c, models) < 0)
                ++mixed;
        } catch (const std::exception& e) {
            failed(std::string("load: ") + e.what());
        }
    } while (savers_left > 0 || loads == 0);
    ta.join();
    tb.join();
    for (auto& f : failures)
        BOOST_ERROR(f);
    BOOST_TEST(failures.empty());
    BOOST_TEST(mixed == 0, mixed << " of " << loads << " loads were neither model");
    BOOST_TEST(dir.others("model.tgsv").empty(),
               "temporaries left: " << dir.others("model.tgsv").size());
}

BOOST_AUTO_TEST_CASE(two_saver_processes_and_a_loader) {
    // As above across processes: each saver is a child, the loader is this process.
    TempDir dir;
    const std::string path = dir.file("model.tgsv");
    auto a = make_mlp(1, 8192), b = make_mlp(2, 8192), c = make_mlp(3, 8192);
    const std::vector<std::vector<Bytes>> models = {bits_of(a->parameters()),
                                                    bits_of(b->parameters())};
    tg::save(a, path);
    std::vector<pid_t> children;
    for (auto* m : {&a, &b}) {
        pid_t pid = ::fork();
        BOOST_TEST_REQUIRE(pid >= 0);
        if (pid == 0) {
            int rc = 0;
            for (int i = 0; i < 40; ++i)
                try {
                    tg::save(*m, path);
                } catch (...) {
                    rc = 1;
                }
            ::_exit(rc);
        }
        children.push_back(pid);
    }
    int loads = 0, mixed = 0, failed = 0, running = 2;
    while (running > 0) {
        try {
            tg::load(c, path);
            ++loads;
            mixed += which_of(c, models) < 0;
        } catch (const std::exception& e) {
            ++failed;
            BOOST_TEST_MESSAGE("load failed: " << e.what());
        }
        running = 0;
        for (pid_t& pid : children) {
            int status = 0;
            if (pid > 0 && ::waitpid(pid, &status, WNOHANG) == pid) {
                BOOST_TEST((WIFEXITED(status) && WEXITSTATUS(status) == 0), "a save failed");
                pid = 0;
            }
            running += pid > 0;
        }
    }
    tg::load(c, path);
    BOOST_TEST(which_of(c, models) >= 0);
    BOOST_TEST(failed == 0, failed << " of " << loads + failed << " loads failed");
    BOOST_TEST(mixed == 0);
    BOOST_TEST(dir.others("model.tgsv").empty());
}

BOOST_AUTO_TEST_CASE(killed_savers_leave_the_old_or_the_new_file) {
    TempDir dir;
    const std::string path = dir.file("model.tgsv");
    // about 1.5 MB, so that a kill often lands inside a save
    auto a = make_mlp(1, 32768), b = make_mlp(2, 32768), c = make_mlp(3, 32768);
    const std::vector<std::vector<Bytes>> models = {bits_of(a->parameters()),
                                                    bits_of(b->parameters())};
    tg::save(a, path);
    std::mt19937 rng(20261124);
    std::uniform_int_distribution<int> delay_us(0, 40000);
    constexpr int kKills = 20;
    int stale_seen = 0;
    for (int k = 0; k < kKills; ++k) {
        pid_t pid = ::fork();
        BOOST_TEST_REQUIRE(pid >= 0);
        if (pid == 0) {  // save one model, then the other, until killed
            for (int i = 0;; ++i)
                try {
                    tg::save(i % 2 ? a : b, path);
                } catch (...) {
                    ::_exit(1);
                }
        }
        std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
        ::kill(pid, SIGKILL);
        int status = 0;
        BOOST_TEST_REQUIRE(::waitpid(pid, &status, 0) == pid);
        BOOST_TEST((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL),
                   "the saver stopped before it was killed (a save failed)");
        tg::load(c, path);
        BOOST_TEST(which_of(c, models) >= 0, "after kill " << k << " the file is neither model");
        stale_seen += !dir.others("model.tgsv").empty();
        tg::save(k % 2 ? b : a, path);  // sweeps what the killed saver left
        BOOST_TEST(dir.others("model.tgsv").empty(), "after kill " << k << " and a save");
        tg::load(c, path);
        BOOST_TEST(which_of(c, models) == k % 2);
    }
    BOOST_TEST_MESSAGE(stale_seen << " of " << kKills << " kills left a temporary");
}

BOOST_AUTO_TEST_CASE(a_live_savers_temporary_is_not_swept) {
    // A temporary someone holds locked (a save in progress elsewhere) survives another save;
    // the same name unlocked (its saver died) is removed by it.
    TempDir dir;
    const std::string path = dir.file("model.tgsv");
    const std::string held = path + ".tmp.AbC123", dead = path + ".tmp.XyZ789";
    write_bytes(held, {1, 2, 3});
    write_bytes(dead, {4, 5, 6});
    const std::string unrelated = path + ".tmp.toolongname";
    write_bytes(unrelated, {7});
    int fd = ::open(held.c_str(), O_RDONLY);
    BOOST_TEST_REQUIRE(fd >= 0);
    BOOST_TEST_REQUIRE(::flock(fd, LOCK_EX) == 0);
    auto a = make_mlp(1);
    tg::save(a, path);
    auto left = dir.others("model.tgsv");
    std::sort(left.begin(), left.end());
    BOOST_TEST(
        (left == std::vector<std::string>{"model.tgsv.tmp.AbC123", "model.tgsv.tmp.toolongname"}));
    ::close(fd);
    tg::save(a, path);
    BOOST_TEST(
        (dir.others("model.tgsv") == std::vector<std::string>{"model.tgsv.tmp.toolongname"}));
}

BOOST_AUTO_TEST_CASE(failed_saves_leave_no_temporary) {
    TempDir dir;
    const std::string path = dir.file("model.tgsv");
    auto a = make_mlp(1, 4096);
    // the rename fails: the target is a non-empty directory
    std::filesystem::create_directories(dir.path / "model.tgsv" / "inside");
    check_throws<tg::io_error>([&] { tg::save(a, path); }, {"save(" + path + ")", "cannot rename"});
    BOOST_TEST(dir.others("model.tgsv").empty());
    std::filesystem::remove_all(dir.path / "model.tgsv");
    // a path naming a directory: no file name, so nothing in it looks like a temporary of it
    write_bytes(dir.file(".tmp.AbC123"), {1});
    check_throws<tg::io_error>([&] { tg::save(a, dir.path.string() + "/"); }, {"cannot rename"});
    BOOST_TEST((dir.others("") == std::vector<std::string>{".tmp.AbC123"}));
    std::filesystem::remove(dir.file(".tmp.AbC123"));

    // a write fails (EFBIG under a file size limit, as ENOSPC would on a full disk), in a child
    // so that the limit does not outlive the check
    pid_t pid = ::fork();
    BOOST_TEST_REQUIRE(pid >= 0);
    if (pid == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        struct rlimit limit {
            4096, 4096
        };
        ::setrlimit(RLIMIT_FSIZE, &limit);
        int rc = 0;
        try {
            tg::save(a, path);
            rc = 2;
        } catch (const tg::io_error& e) {
            rc = std::string(e.what()).find("error while writing") != std::string::npos ? 0 : 3;
        }
        ::_exit(rc != 0 ? rc : dir.others("").empty() ? 0 : 4);
    }
    int status = 0;
    BOOST_TEST_REQUIRE(::waitpid(pid, &status, 0) == pid);
    BOOST_TEST(WIFEXITED(status));
    BOOST_TEST(WEXITSTATUS(status) == 0, "2: saved, 3: another error, 4: a temporary was left");
}

BOOST_AUTO_TEST_CASE(saved_files_get_the_permissions_of_any_new_file) {
    // Not mkstemp's 0600: 0666 less the umask, as for any file the user creates.
    TempDir dir;
    const std::string path = dir.file("model.tgsv");
    const mode_t mask = ::umask(022);
    auto a = make_mlp(1);
    tg::save(a, path);
    ::umask(mask);
    struct stat st {};
    BOOST_TEST_REQUIRE(::stat(path.c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 0777) == 0644u);
}
