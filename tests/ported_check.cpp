/// LibTorch programs that port by the rename alone and then behave as they did (issue 29): each
/// tests/ported/<name>.cpp is a LibTorch program; the build runs scripts/port-from-libtorch.sh on
/// it and compiles the result against tapegrad as ported_<name> (tests/CMakeLists.txt). For a
/// program with a tests/ported/<name>.expected (what LibTorch 1.13 printed, recorded by
/// scripts/record-ported.sh), CTest's test_ported_<name> is this suite, given the name after
/// "--": it runs the program and compares what it prints with the record. Every number must
/// agree to 1e-5 (relative, or absolute below 1) and every word exactly: the loss of each of the
/// first 20 steps, gradient norms, learning rates, decoded tokens.
#define BOOST_TEST_MODULE ported_check
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> lines_of(std::istream& in) {
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);)
        out.push_back(line);
    return out;
}

/// Runs the ported program in a directory of its own (programs write their checkpoints into
/// the working directory) and returns what it printed.
std::vector<std::string> run(const std::string& name, const std::string& exe) {
    const std::string dir = std::string(TG_PORTED_BIN_DIR) + "/run_" + name;
    const std::string cmd =
        "mkdir -p '" + dir + "' && cd '" + dir + "' && '" + exe + "' > out.txt 2> err.txt";
    const int rc = std::system(cmd.c_str());
    std::ifstream err(dir + "/err.txt");
    std::stringstream e;
    e << err.rdbuf();
    BOOST_TEST_INFO("stderr: " << e.str());
    BOOST_TEST_REQUIRE(rc == 0, name << " exited with " << rc);
    std::ifstream out(dir + "/out.txt");
    return lines_of(out);
}

bool is_number(const std::string& s, double& v) {
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size();
}

void check_same(const std::string& name, const std::string& exe) {
    std::ifstream f(std::string(TG_PORTED_SRC_DIR) + "/" + name + ".expected");
    BOOST_TEST_REQUIRE(f.good(), "no " << name << ".expected");
    const std::vector<std::string> want = lines_of(f), got = run(name, exe);
    BOOST_TEST_REQUIRE(got.size() == want.size(),
                       name << ": " << got.size() << " lines, LibTorch " << want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        std::istringstream a(got[i]), b(want[i]);
        std::vector<std::string> ga, wb;
        for (std::string t; a >> t;)
            ga.push_back(t);
        for (std::string t; b >> t;)
            wb.push_back(t);
        BOOST_TEST_CONTEXT(name << " line " << i << ": got \"" << got[i] << "\", LibTorch \""
                                << want[i] << "\"") {
            BOOST_TEST_REQUIRE(ga.size() == wb.size());
            for (size_t k = 0; k < wb.size(); ++k) {
                double x = 0, y = 0;
                if (is_number(wb[k], y) && is_number(ga[k], x))
                    BOOST_TEST(std::abs(x - y) <= 1e-5 * std::max(1.0, std::abs(y)));
                else
                    BOOST_TEST(ga[k] == wb[k]);
            }
        }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(prints_what_libtorch_printed) {
    const auto& suite = boost::unit_test::framework::master_test_suite();
    BOOST_TEST_REQUIRE(suite.argc == 3, "usage: ported_check -- NAME PROGRAM");
    check_same(suite.argv[1], suite.argv[2]);
}
