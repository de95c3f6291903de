// The house rules a reviewer would otherwise check by hand (DESIGN.md): every source file of the
// library stays at most 400 lines, and a public header never includes a private one, so an
// installed include/tapegrad/ compiles without src/.
#define BOOST_TEST_MODULE house
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = TG_SOURCE_DIR;

/// The library's sources under dir: C++ and CUDA files and the kernel table.
std::vector<fs::path> sources(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(kRoot / dir)) {
        const std::string ext = e.path().extension().string();
        if (e.is_regular_file() &&
            (ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh" || ext == ".def"))
            out.push_back(e.path());
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_tree_is_where_the_tests_think) {
    BOOST_TEST(fs::exists(kRoot / "include/tapegrad/tapegrad.hpp"));
    BOOST_TEST(sources("src").size() > 50u);
}

BOOST_AUTO_TEST_CASE(no_source_file_is_over_400_lines) {
    for (const fs::path& dir : {fs::path("src"), fs::path("include")})
        for (const fs::path& p : sources(dir)) {
            std::ifstream in(p);
            std::string line;
            int lines = 0;
            while (std::getline(in, line))
                ++lines;
            BOOST_TEST_INFO(fs::relative(p, kRoot).string() << ": " << lines << " lines");
            BOOST_TEST(lines <= 400);
        }
}

BOOST_AUTO_TEST_CASE(public_headers_include_only_public_headers) {
    for (const fs::path& p : sources("include")) {
        std::ifstream in(p);
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("#include \"", 0) != 0)
                continue;
            const std::string target = line.substr(10, line.find('"', 10) - 10);
            BOOST_TEST_INFO(fs::relative(p, kRoot).string() << " includes \"" << target << "\"");
            BOOST_TEST(target.rfind("tapegrad/", 0) == 0);
        }
    }
}
