// Loaded optimizer state is validated as the optimizers validate their options, even when the
// file's checksum is right: a NaN, infinite or negative lr, a step count that overflows or makes
// a bias correction 0, state tensors of the wrong shape or dtype, negative second moments.
// Each is an io_error naming the file, with the optimizer left exactly as it was.
#define BOOST_TEST_MODULE serialize_optim_state
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "serialize_util.hpp"

using namespace tgtest;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMaxStep = tg::optim::OptimizerParamState::kMaxStep;

/// What load() may change (step counts and state tensors) and the group lrs, which it keeps.
struct Snapshot {
    std::vector<double> lrs;
    std::vector<int64_t> steps;
    std::vector<Bytes> tensors;
    bool operator==(const Snapshot& o) const {
        // lrs compared bitwise so that NaN == NaN would count as unchanged
        return bits_of_doubles(lrs) == bits_of_doubles(o.lrs) && steps == o.steps &&
               tensors == o.tensors;
    }
    static std::vector<uint64_t> bits_of_doubles(const std::vector<double>& v) {
        std::vector<uint64_t> out(v.size());
        std::memcpy(out.data(), v.data(), v.size() * sizeof(double));
        return out;
    }
};

Snapshot snapshot(tg::optim::Optimizer& o) {
    Snapshot s;
    for (auto& g : o.param_groups())
        s.lrs.push_back(g.options().get_lr());
    for (auto& p : o.parameters()) {
        auto it = o.state().find(p.impl());
        s.steps.push_back(it == o.state().end() ? -1 : it->second->step());
        if (it != o.state().end())
            for (auto& [name, t] : it->second->tensors())
                s.tensors.push_back(bits_of({*t})[0]);
    }
    return s;
}

/// One file per optimizer type, saved after a step (so every state tensor exists).
struct Saved {
    TempDir dir;
    std::string path = dir.file("opt.tgsv");
    tg::nn::Sequential model = make_mlp(1);
    std::unique_ptr<tg::optim::Optimizer> opt;
    RawFile file;
    explicit Saved(const std::string& type) {
        auto params = model->parameters();
        if (type == "SGD")
            opt =
                std::make_unique<tg::optim::SGD>(params, tg::optim::SGDOptions(0.1).momentum(0.9));
        else if (type == "Adam")
            opt = std::make_unique<tg::optim::Adam>(params,
                                                    tg::optim::AdamOptions(0.01).amsgrad(true));
        else
            opt = std::make_unique<tg::optim::AdamW>(params, tg::optim::AdamWOptions(0.01));
        step();
        tg::save(*opt, path);
        file = RawFile::parse(read_bytes(path));
        step();  // the optimizer now differs from the file
    }
    void step() {
        tg::manual_seed(123);
        opt->zero_grad();
        tg::cross_entropy(model(tg::randn({5, 8})), tg::tensor(std::vector<int64_t>{0, 1, 2, 1, 0}))
            .backward();
        opt->step();
    }
    /// load() of `f` must throw io_error naming the file and every needle, change nothing, and
    /// leave an optimizer whose next step keeps the parameters finite.
    void check_rejected(const RawFile& f, const std::vector<std::string>& needles,
                        const std::string& what) {
        write_bytes(path, f.bytes());
        Snapshot before = snapshot(*opt);
        std::vector<std::string> all = needles;
        all.push_back("load(" + path + ")");
        check_throws<tg::io_error>([&] { tg::load(*opt, path); }, all, what);
        BOOST_TEST((snapshot(*opt) == before), what << ": the optimizer changed");
        step();
        for (auto& v : bits_of(model->parameters()))
            for (size_t i = 0; i + 4 <= v.size(); i += 4) {
                float x;
                std::memcpy(&x, &v[i], 4);
                BOOST_TEST_REQUIRE(std::isfinite(x), what << ": a parameter became " << x);
            }
    }
};

RawFile with_double(RawFile f, const std::string& name, double v) {
    f.at(name).data = bytes_of(v);
    return f;
}

RawFile with_int(RawFile f, const std::string& name, int64_t v) {
    f.at(name).data = bytes_of(v);
    return f;
}

}  // namespace

BOOST_AUTO_TEST_CASE(loaded_learning_rates_are_validated) {
    for (const char* type : {"SGD", "Adam", "AdamW"}) {
        Saved s(type);
        for (double lr : {kNaN, -0.1, kInf, -kInf})
            s.check_rejected(with_double(s.file, "param_groups.0.lr", lr),
                             {"param group 0", type, "invalid lr"},
                             std::string(type) + " lr " + std::to_string(lr));
        // a good file still loads (lr 0 is valid), and the optimizer keeps its own lr, as
        // LibTorch's load does
        const double lr = s.opt->param_groups()[0].options().get_lr();
        write_bytes(s.path, with_double(s.file, "param_groups.0.lr", 0.0).bytes());
        tg::load(*s.opt, s.path);
        BOOST_TEST(s.opt->param_groups()[0].options().get_lr() == lr);
    }
}

BOOST_AUTO_TEST_CASE(loaded_step_counts_are_validated) {
    for (const char* type : {"SGD", "Adam", "AdamW"}) {
        Saved s(type);
        for (int64_t step : {std::numeric_limits<int64_t>::max(), int64_t(-1),
                             std::numeric_limits<int64_t>::min(), kMaxStep + 1})
            s.check_rejected(with_int(s.file, "state.2.step", step),
                             {"\"state.2.step\"", "invalid step count"},
                             std::string(type) + " step " + std::to_string(step));
        // the largest valid count loads, and stepping past it is refused, not overflowed
        write_bytes(s.path, with_int(s.file, "state.2.step", kMaxStep).bytes());
        tg::load(*s.opt, s.path);
        check_throws<tg::value_error>([&] { s.step(); }, {"invalid step count"}, type);
    }
}

BOOST_AUTO_TEST_CASE(loaded_state_tensors_must_match_their_parameters) {
    for (const char* type : {"SGD", "Adam", "AdamW"}) {
        Saved s(type);
        const std::string name =
            std::string("state.0.") + (std::string(type) == "SGD" ? "momentum_buffer" : "exp_avg");
        RawFile f = s.file;
        f.at(name).sizes = {8, 16};  // [16,8] transposed: same size, other shape
        s.check_rejected(f, {name, "shape [8,16] in file, [16,8]"}, std::string(type) + " shape");
        f = s.file;
        auto& r = f.at(name);
        r.dtype = 1;  // float64: twice the bytes
        r.nbytes *= 2;
        r.data.resize(r.nbytes);
        s.check_rejected(f, {name, "dtype float64 in file, float32"}, std::string(type) + " dtype");
        f = s.file;
        f.records.push_back(f.at(name));
        s.check_rejected(f, {name, "appears twice"}, std::string(type) + " duplicate");
    }
}

BOOST_AUTO_TEST_CASE(negative_second_moments_are_refused) {
    for (const char* type : {"Adam", "AdamW"}) {
        Saved s(type);
        for (const char* field : {"exp_avg_sq", "max_exp_avg_sq"}) {
            if (std::string(type) == "AdamW" && std::string(field) == "max_exp_avg_sq")
                continue;  // AdamW here runs without amsgrad
            RawFile f = s.file;
            const std::string name = std::string("state.1.") + field;
            std::memcpy(f.at(name).data.data() + 4, bytes_of(-1.0f).data(), 4);
            s.check_rejected(f, {"state of parameter 1", field, "negative"},
                             std::string(type) + " " + field);
        }
    }
}

BOOST_AUTO_TEST_CASE(options_are_validated_where_they_are_used) {
    // Constructors, step() and loading share OptimizerOptions::validate.
    tg::Tensor p = tg::zeros({2});
    p.requires_grad_(true);
    using tg::optim::AdamOptions, tg::optim::AdamWOptions, tg::optim::SGDOptions;
    auto refused = [&](auto make, const std::string& needle) {
        check_throws<tg::value_error>(make, {needle}, needle);
    };
    refused([&] { tg::optim::SGD o({p}, SGDOptions(kNaN)); }, "invalid lr");
    refused([&] { tg::optim::SGD o({p}, SGDOptions(kInf)); }, "invalid lr");
    refused([&] { tg::optim::SGD o({p}, SGDOptions(0.1).momentum(kNaN)); }, "invalid momentum");
    refused([&] { tg::optim::SGD o({p}, SGDOptions(0.1).dampening(kNaN)); }, "invalid dampening");
    refused([&] { tg::optim::SGD o({p}, SGDOptions(0.1).weight_decay(kInf)); },
            "invalid weight_decay");
    refused([&] { tg::optim::Adam o({p}, AdamOptions(kNaN)); }, "invalid lr");
    refused([&] { tg::optim::Adam o({p}, AdamOptions(0.1).eps(kNaN)); }, "invalid eps");
    refused([&] { tg::optim::Adam o({p}, AdamOptions(0.1).betas({kNaN, 0.9})); }, "invalid beta1");
    refused([&] { tg::optim::AdamW o({p}, AdamWOptions(0.1).weight_decay(kNaN)); },
            "invalid weight_decay");
    // an lr set later (by hand or by a scheduler) is checked at the next step
    tg::optim::Adam adam({p}, AdamOptions(0.1));
    (p * 2.0).sum().backward();
    adam.param_groups()[0].options().set_lr(kNaN);
    refused([&] { adam.step(); }, "invalid lr");
    // a step count out of range is refused when set
    refused([&] { tg::optim::SGDParamState().step(-1); }, "invalid step count");
}
