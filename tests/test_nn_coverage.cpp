/// The coverage of torch::nn (issue 30): every module LibTorch 1.13 defines (TORCH_MODULE) must
/// exist in tg::nn under its name, as a module holder (TG_MODULE), and every function of
/// torch::nn::functional in tg::nn::functional, unless it is on the exclusion list below with
/// its reason. The lists are LibTorch's own, extracted from its installed headers by
/// scripts/libtorch-nn-list.sh into tests/nn_coverage/*.def (committed: LibTorch is no test
/// dependency; the CTest test nn_coverage_lists_current checks them against the headers where
/// libtorch-dev is installed). Presence is decided at compile time, so a module or function that
/// appears in tapegrad is counted without editing this file. The test prints the counts.
#define BOOST_TEST_MODULE test_nn_coverage
#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"

// ---- modules: a name resolves to tg::nn's class if there is one, else to a stand-in declared
// here, in the global namespace, which the lookup from inside tg::nn reaches last.
#define TG_NN_MODULE(Name)                 \
    struct Name {                          \
        using tg_coverage_stand_in = void; \
    };
#include "nn_coverage/modules.def"
#undef TG_NN_MODULE

/// Whether T is a module holder: TG_MODULE(Name) of a Module subclass.
template <class T, class = void>
struct IsModuleHolder : std::false_type {};
template <class T>
struct IsModuleHolder<T, std::void_t<typename T::Impl>>
    : std::bool_constant<std::is_base_of_v<tg::nn::Module, typename T::Impl> &&
                         std::is_base_of_v<tg::nn::ModuleHolder<typename T::Impl>, T>> {};

namespace tg::nn::coverage_probe {
#define TG_NN_MODULE(Name) {#Name, IsModuleHolder<Name>::value},
const std::vector<std::pair<std::string, bool>> kModules = {
#include "nn_coverage/modules.def"
};
#undef TG_NN_MODULE
}  // namespace tg::nn::coverage_probe

// ---- functions: tgcov::ns::name finds tg::nn::functional's functions of that name (and only
// those: qualified lookup follows the using-directives into exactly these two namespaces) and
// a stand-in that takes anything through `...`, which loses to any real function that can be
// called with the same number of arguments convertible to anything.
namespace tgcov {
struct Missing {};
/// An argument convertible to any parameter type (never called: unevaluated contexts only).
struct AnyArg {
    template <class T>
    operator T() const;  // NOLINT: implicit
};
template <size_t>
using Arg = AnyArg;
namespace fallback {
#define TG_NN_FUNCTION(name) Missing name(...);
#include "nn_coverage/functional.def"
#undef TG_NN_FUNCTION
}  // namespace fallback
namespace ns {
using namespace tg::nn::functional;  // NOLINT: the point of the probe
using namespace fallback;            // NOLINT
}  // namespace ns

// Present<n>: some overload of ns::name takes n arguments and is not the stand-in.
#define TG_NN_FUNCTION(name)                                                               \
    template <class Seq, class = void>                                                     \
    struct Takes_##name : std::false_type {};                                              \
    template <size_t... I>                                                                 \
    struct Takes_##name<std::index_sequence<I...>,                                         \
                        std::void_t<decltype(ns::name(std::declval<Arg<I>>()...))>>        \
        : std::bool_constant<                                                              \
              !std::is_same_v<decltype(ns::name(std::declval<Arg<I>>()...)), Missing>> {}; \
    template <size_t... N>                                                                 \
    constexpr bool present_##name(std::index_sequence<N...>) {                             \
        return (Takes_##name<std::make_index_sequence<N>>::value || ...);                  \
    }
#include "nn_coverage/functional.def"
#undef TG_NN_FUNCTION

#define TG_NN_FUNCTION(name) {#name, present_##name(std::make_index_sequence<9>())},
const std::vector<std::pair<std::string, bool>> kFunctions = {
#include "nn_coverage/functional.def"
};
#undef TG_NN_FUNCTION
}  // namespace tgcov

namespace {

/// What tapegrad does not offer on purpose, with the reason. Keep it short.
const std::map<std::string, std::string> kExcluded = {};

/// BEING BUILT (issue 30): what other branches are building now, by branch. The lead removes
/// each branch's names as it merges (the test fails for a name on this list that is present,
/// to say so); when this list is empty, the counts below are tapegrad's own.
const std::map<std::string, std::string> kBeingBuilt = {};

struct Counts {
    size_t present = 0, excluded = 0, being_built = 0;
    std::vector<std::string> present_names, missing, excluded_names, being_built_names;
};

Counts count(const std::vector<std::pair<std::string, bool>>& names, const char* what) {
    Counts c;
    for (const auto& [name, present] : names) {
        BOOST_TEST_CONTEXT(what << " " << name) {
            if (present) {
                ++c.present;
                c.present_names.push_back(name);
                BOOST_TEST(!kExcluded.count(name),
                           "is excluded but present: remove it from kExcluded");
                BOOST_TEST(!kBeingBuilt.count(name),
                           "is present now: remove it from kBeingBuilt (issue 30)");
            } else if (kExcluded.count(name)) {
                ++c.excluded;
                c.excluded_names.push_back(name);
            } else if (kBeingBuilt.count(name)) {
                ++c.being_built;
                c.being_built_names.push_back(name);
            } else {
                c.missing.push_back(name);
            }
        }
    }
    return c;
}

void report(const char* what, size_t total, const Counts& c) {
    std::cout << "torch::nn " << what << ": " << c.present << " of " << total
              << " present in tapegrad";
    if (c.being_built)
        std::cout << ", " << c.being_built << " being built (issue 30)";
    if (c.excluded)
        std::cout << ", " << c.excluded << " excluded";
    std::cout << "\n";
    for (const auto& [names, label] : {std::pair{&c.present_names, "  present: "},
                                       {&c.being_built_names, "  being built: "},
                                       {&c.excluded_names, "  excluded: "},
                                       {&c.missing, "  MISSING: "}}) {
        if (names->empty())
            continue;
        std::cout << label;
        for (const auto& n : *names)
            std::cout << n << " ";
        std::cout << "\n";
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_lists_name_libtorch_modules_and_functions) {
    std::set<std::string> known;
    for (const auto* all : {&tg::nn::coverage_probe::kModules, &tgcov::kFunctions})
        for (const auto& item : *all)
            known.insert(item.first);
    for (const auto* list : {&kExcluded, &kBeingBuilt})
        for (const auto& [name, why] : *list)
            BOOST_TEST(known.count(name),
                       name << " (" << why << ") is not one of LibTorch's names");
}

BOOST_AUTO_TEST_CASE(every_libtorch_module_is_in_tg_nn) {
    const auto& all = tg::nn::coverage_probe::kModules;
    BOOST_TEST(all.size() == 126u);  // LibTorch 1.13's TORCH_MODULEs
    const Counts c = count(all, "module");
    report("modules", all.size(), c);
    BOOST_TEST(c.missing.empty(), c.missing.size() << " modules missing (see the list above)");
    BOOST_TEST(c.present + c.being_built >= 120u);  // the bar
}

BOOST_AUTO_TEST_CASE(every_libtorch_function_is_in_tg_nn_functional) {
    const auto& all = tgcov::kFunctions;
    BOOST_TEST(all.size() == 105u);  // LibTorch 1.13's torch::nn::functional
    const Counts c = count(all, "function");
    report("functions", all.size(), c);
    BOOST_TEST(c.missing.empty(), c.missing.size() << " functions missing (see the list above)");
    BOOST_TEST(c.present + c.being_built >= 100u);  // the bar
}
