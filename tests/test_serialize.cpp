// tg::save / tg::load: bit-exact round trips of modules and optimizers, and rejection of
// truncated, corrupt, foreign and mismatched files with the target left unchanged.
#define BOOST_TEST_MODULE serialize
#include <boost/test/unit_test.hpp>

#include "serialize_util.hpp"

using namespace tgtest;

namespace {

/// A scratch file in a fresh directory, removed (with whatever a save left) when the test ends.
struct TempPath {
    TempDir dir;
    std::string name, path;
    explicit TempPath(const std::string& stem) : name(stem + ".tgsv"), path(dir.file(name)) {}
};

}  // namespace

BOOST_AUTO_TEST_CASE(module_round_trip_is_bit_exact) {
    TempPath f("module");
    auto a = make_mlp(1), b = make_mlp(2);
    BOOST_TEST((bits_of(a->parameters()) != bits_of(b->parameters())));
    tg::save(a, f.path);
    BOOST_TEST(f.dir.others(f.name).empty());  // the temporary was renamed away
    auto held = b->parameters()[0];            // identity survives the load
    tg::load(b, f.path);
    BOOST_TEST((bits_of(a->parameters()) == bits_of(b->parameters())));
    BOOST_TEST((bits_of({held}) == bits_of({a->parameters()[0]})));
    BOOST_TEST(held.is_leaf());
    BOOST_TEST(held.requires_grad());

    // float64 models round-trip too, and the header is as documented
    a->to(tg::kFloat64);
    b->to(tg::kFloat64);
    tg::save(*a, f.path);
    std::vector<uint8_t> bytes = read_bytes(f.path);
    BOOST_TEST_REQUIRE(bytes.size() > 24u);
    BOOST_TEST(std::string(bytes.begin(), bytes.begin() + 4) == "TGSV");
    BOOST_TEST(bytes[4] == 1);  // version 1: no dtype newer than the first format's
    BOOST_TEST(bytes[8] == 1);  // kind: module
    uint64_t size = 0;
    for (int i = 0; i < 8; ++i)
        size |= uint64_t(bytes[size_t(12 + i)]) << (8 * i);
    BOOST_TEST(size == bytes.size());
    tg::load(*b, f.path);
    BOOST_TEST((bits_of(a->parameters()) == bits_of(b->parameters())));
}

BOOST_AUTO_TEST_CASE(corrupt_files_are_rejected_and_model_unchanged) {
    TempPath f("corrupt");
    auto a = make_mlp(1), b = make_mlp(2);
    tg::save(a, f.path);
    const std::vector<uint8_t> good = read_bytes(f.path);
    auto watched = b->parameters();

    write_bytes(f.path, std::vector<uint8_t>(good.begin(), good.begin() + long(good.size() / 2)));
    check_rejected(b, watched, f.path, {"truncated"}, "truncated file");

    write_bytes(f.path, std::vector<uint8_t>(good.begin(), good.begin() + 10));
    check_rejected(b, watched, f.path, {"past the end"}, "truncated header");

    std::vector<uint8_t> flipped = good;
    flipped[flipped.size() - 40] ^= 0x10;  // inside the last tensor's data
    write_bytes(f.path, flipped);
    check_rejected(b, watched, f.path, {"checksum"}, "flipped data byte");

    flipped = good;
    flipped[30] ^= 0x01;  // inside the header
    write_bytes(f.path, flipped);
    check_rejected(b, watched, f.path, {"checksum"}, "flipped header byte");

    std::vector<uint8_t> magic = good;
    magic[0] = 'X';
    write_bytes(f.path, magic);
    check_rejected(b, watched, f.path, {"magic"}, "wrong magic");

    std::vector<uint8_t> version = good;
    version[4] = 99;
    write_bytes(f.path, version);
    check_rejected(b, watched, f.path, {"version 99"}, "unknown version");

    write_bytes(f.path, {});
    check_rejected(b, watched, f.path, {"magic"}, "empty file");

    check_rejected(b, watched, "no_such_dir/model.tgsv", {"cannot open"}, "missing file");
}

BOOST_AUTO_TEST_CASE(mismatched_models_are_rejected_and_model_unchanged) {
    TempPath f("mismatch");
    auto a = make_mlp(1, 16);
    tg::save(a, f.path);

    auto narrower = make_mlp(2, 12);
    check_rejected(narrower, narrower->parameters(), f.path,
                   {"parameter \"0.weight\"", "shape [16,8] in file, [12,8] in model"}, "shape");

    auto deeper = make_mlp(3);
    deeper->push_back(tg::nn::Linear(3, 3));
    check_rejected(deeper, deeper->parameters(), f.path, {"\"3.weight\"", "missing"},
                   "missing name");

    tg::manual_seed(4);
    tg::nn::Sequential shallower(tg::nn::Linear(8, 16));
    check_rejected(shallower, shallower->parameters(), f.path, {"\"2.weight\"", "not in the model"},
                   "extra name");

    auto dbl = make_mlp(5);
    dbl->to(tg::kFloat64);
    check_rejected(dbl, dbl->parameters(), f.path, {"\"0.weight\"", "dtype", "float64"}, "dtype");

    tg::Tensor p = tg::zeros({2});
    p.requires_grad_(true);
    tg::optim::SGD sgd({p}, tg::optim::SGDOptions(0.1));
    check_rejected(sgd, {p}, f.path, {"module parameters", "not optimizer state"}, "module file");
}

BOOST_AUTO_TEST_CASE(save_errors) {
    auto a = make_mlp(1);
    check_throws<tg::io_error>([&] { tg::save(a, "no_such_dir/model.tgsv"); },
                               {"save(no_such_dir/model.tgsv)", "cannot open"}, "bad directory");
}

template <class Opt, class Options>
void check_optimizer_round_trip(const std::string& name, Options options) {
    TempPath f(name);
    auto a = make_mlp(1), b = make_mlp(1);
    Opt opt_a(a->parameters(), options), opt_b(b->parameters(), options);
    for (int i = 0; i < 3; ++i)
        train_step(a, opt_a);
    opt_a.param_groups()[0].options().set_lr(0.0123);  // e.g. set by a scheduler
    tg::save(a, f.path);
    tg::load(b, f.path);
    tg::save(opt_a, f.path);
    const double lr_b = opt_b.param_groups()[0].options().get_lr();
    tg::load(opt_b, f.path);
    // LibTorch's load leaves the options as the program set them (LibTorch 1.13: an SGD built
    // with lr 0.7 keeps 0.7 after loading a file saved with lr 0.3)
    BOOST_TEST(opt_b.param_groups()[0].options().get_lr() == lr_b);
    opt_b.param_groups()[0].options().set_lr(0.0123);  // as a resumed program sets it
    auto pa = a->parameters(), pb = b->parameters();
    for (size_t i = 0; i < pa.size(); ++i) {
        auto& sa = *opt_a.state().at(pa[i].impl());
        auto& sb = *opt_b.state().at(pb[i].impl());
        BOOST_TEST(sa.step() == sb.step());
        auto ta = sa.tensors(), tb = sb.tensors();
        for (size_t k = 0; k < ta.size(); ++k) {
            BOOST_TEST(ta[k].second->defined() == tb[k].second->defined());
            if (ta[k].second->defined())
                BOOST_TEST((bits_of({*ta[k].second}) == bits_of({*tb[k].second})), ta[k].first);
        }
    }
    // continuing from the loaded state is bit-identical to continuing the original
    train_step(a, opt_a);
    train_step(b, opt_b);
    BOOST_TEST((bits_of(a->parameters()) == bits_of(b->parameters())));
}

BOOST_AUTO_TEST_CASE(optimizer_round_trips_are_bit_exact) {
    check_optimizer_round_trip<tg::optim::SGD>("sgd", tg::optim::SGDOptions(0.1).momentum(0.9));
    check_optimizer_round_trip<tg::optim::Adam>("adam", tg::optim::AdamOptions(0.01).amsgrad(true));
    check_optimizer_round_trip<tg::optim::AdamW>("adamw", tg::optim::AdamWOptions(0.01));
}

BOOST_AUTO_TEST_CASE(mismatched_optimizers_are_rejected_and_state_unchanged) {
    TempPath f("opt_mismatch");
    auto a = make_mlp(1);
    tg::optim::Adam adam(a->parameters(), tg::optim::AdamOptions(0.01));
    train_step(a, adam);
    tg::save(adam, f.path);

    auto b = make_mlp(2);
    tg::optim::SGD sgd(b->parameters(), tg::optim::SGDOptions(0.1).momentum(0.9));
    train_step(b, sgd);
    auto momentum = [&] {
        std::vector<tg::Tensor> out;
        for (auto& p : b->parameters())
            out.push_back(
                static_cast<tg::optim::SGDParamState&>(*sgd.state().at(p.impl())).momentum_buffer);
        return out;
    };
    check_rejected(sgd, momentum(), f.path, {"Adam", "SGD"}, "other optimizer type");

    auto c = make_mlp(3, 12);
    tg::optim::Adam adam_c(c->parameters(), tg::optim::AdamOptions(0.01));
    train_step(c, adam_c);
    auto moments = [&] {
        std::vector<tg::Tensor> out;
        for (auto& p : c->parameters())
            out.push_back(
                static_cast<tg::optim::AdamParamState&>(*adam_c.state().at(p.impl())).exp_avg);
        return out;
    };
    check_rejected(adam_c, moments(), f.path, {"state \"state.0.exp_avg\"", "[16,8] in file"},
                   "other shapes");
    BOOST_TEST(adam_c.param_groups()[0].options().get_lr() == 0.01);

    auto d = make_mlp(4);
    tg::optim::Adam two_groups({tg::optim::OptimizerParamGroup(d->parameters(false)),
                                tg::optim::OptimizerParamGroup({d->parameters()[0]})},
                               tg::optim::AdamOptions(0.01));
    // d->parameters(false) is empty (Sequential owns none itself): group 0 has 0, file has 4
    check_rejected(two_groups, {}, f.path, {"param group 0"}, "other group sizes");

    std::vector<uint8_t> bytes = read_bytes(f.path);
    bytes.resize(bytes.size() - 1);
    write_bytes(f.path, bytes);
    check_rejected(adam_c, moments(), f.path, {"truncated"}, "truncated optimizer file");
}

BOOST_AUTO_TEST_CASE(tensors_round_trip_as_libtorch_saves_them) {
    // torch::save(tensor, path) / torch::load(tensor, path), and of std::vector<Tensor>: kind 3
    TempPath f("tensors");
    tg::manual_seed(5);
    const tg::Tensor a = tg::randn({3, 4}), b = tg::randn({2, 3}, tg::kFloat64).t();  // strided
    const tg::Tensor c = tg::tensor(std::vector<int64_t>{4, -7, 9});
    tg::save(a, f.path);
    BOOST_TEST(RawFile::parse(read_bytes(f.path)).kind == 3u);
    tg::Tensor loaded;  // undefined: becomes the loaded tensor
    tg::load(loaded, f.path);
    BOOST_TEST((bits_of({loaded}) == bits_of({a})));
    BOOST_TEST((loaded.dtype() == tg::kFloat32));
    tg::save(std::vector<tg::Tensor>{b, c, a * 2}, f.path);
    std::vector<tg::Tensor> list{tg::ones({1})};  // replaced
    tg::load(list, f.path);
    BOOST_TEST_REQUIRE(list.size() == 3u);
    BOOST_TEST((bits_of(list) == bits_of({b, c, a * 2})));
    BOOST_TEST(tg::shape_str(list[0].sizes()) == "[3,2]");
    tg::Tensor first;  // one tensor from a list file: the first, as LibTorch reads key "0"
    tg::load(first, f.path);
    BOOST_TEST((bits_of({first}) == bits_of({b})));
    tg::load(first, f.path, tg::Device::cpu());
    BOOST_TEST(first.device().is_cpu());
    // a defined target keeps its identity and requires_grad: every handle sees the new values
    tg::Tensor w = tg::zeros({5}).requires_grad_(true);
    (w * 2).sum().backward();
    const tg::Tensor handle = w;
    tg::save(a, f.path);
    tg::load(w, f.path);
    BOOST_TEST(handle.impl() == w.impl());
    BOOST_TEST((bits_of({handle}) == bits_of({a})));
    BOOST_TEST(w.requires_grad());
    BOOST_TEST(!w.grad().defined());  // the shape changed: the old gradient would not fit
    // an empty list
    tg::save(std::vector<tg::Tensor>{}, f.path);
    std::vector<tg::Tensor> none{tg::ones({1})};
    tg::load(none, f.path);
    BOOST_TEST(none.empty());
    tg::Tensor kept = tg::ones({2});
    check_rejected(kept, {kept}, f.path, {"holds no tensor"}, "an empty list into a tensor");
}

BOOST_AUTO_TEST_CASE(tensor_files_and_module_files_do_not_mix) {
    TempPath f("mixed");
    auto m = make_mlp(1);
    tg::Tensor t = tg::ones({2});
    tg::save(m, f.path);
    check_rejected(t, {t}, f.path, {"holds module parameters, not tensors"}, "module file");
    tg::save(t, f.path);
    check_rejected(m, m->parameters(), f.path, {"holds tensors, not module parameters"},
                   "tensor file");
    // records out of order or misnamed
    RawFile raw = RawFile::parse(read_bytes(f.path));
    raw.records[0].name = "1";
    write_bytes(f.path, raw.bytes());
    check_rejected(t, {t}, f.path, {"record 0 is named \"1\""}, "misnamed record");
    std::vector<tg::Tensor> list;
    check_throws<tg::io_error>([&] { tg::load(list, f.path); }, {"record 0"}, "into a list");
    check_throws<tg::value_error>([&] { tg::save(tg::Tensor(), f.path); }, {"undefined"},
                                  "an undefined tensor");
}
