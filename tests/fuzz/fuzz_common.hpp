#pragma once
/// What the fuzz targets and the seed generator share: the small model and optimizers the
/// loaders fill, a training step, and a fuzz input presented as a file.
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tapegrad/io.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"

namespace fuzz {

/// The model every module input is loaded into (and every seed is saved from).
inline tg::nn::Sequential make_model() {
    tg::manual_seed(7);
    return tg::nn::Sequential(tg::nn::Linear(4, 3), tg::nn::ReLU(), tg::nn::Linear(3, 2));
}

/// The optimizer types the optimizer files are for, over `params`.
inline std::vector<std::unique_ptr<tg::optim::Optimizer>> make_optimizers(
    const std::vector<tg::Tensor>& params) {
    std::vector<std::unique_ptr<tg::optim::Optimizer>> out;
    out.push_back(std::make_unique<tg::optim::SGD>(
        params, tg::optim::SGDOptions(0.1).momentum(0.9).nesterov(true)));
    out.push_back(
        std::make_unique<tg::optim::Adam>(params, tg::optim::AdamOptions(0.01).amsgrad(true)));
    out.push_back(std::make_unique<tg::optim::AdamW>(params, tg::optim::AdamWOptions(0.01)));
    return out;
}

/// One training step on fixed data.
inline void train_step(tg::nn::Sequential& model, tg::optim::Optimizer& opt) {
    tg::manual_seed(11);
    tg::Tensor x = tg::randn({3, 4});
    tg::Tensor y = tg::tensor(std::vector<int64_t>{0, 1, 1});
    opt.zero_grad();
    tg::cross_entropy(model(x), y).backward();
    opt.step();
}

/// The bytes of every tensor (undefined ones give none), to check that a failed load changed
/// nothing.
inline std::vector<std::vector<uint8_t>> bits_of(const std::vector<tg::Tensor>& ts) {
    std::vector<std::vector<uint8_t>> out;
    for (auto& t : ts) {
        out.emplace_back();
        if (!t.defined())
            continue;
        tg::Tensor c = t.detach().contiguous();
        out.back().resize(size_t(c.numel()) * tg::element_size(c.dtype()));
        tg::dispatch(c.dtype(), [&](auto tag) {
            using T = decltype(tag);
            if (!out.back().empty())
                std::memcpy(out.back().data(), c.data_ptr<T>(), out.back().size());
        });
    }
    return out;
}

/// Everything a load may change in an optimizer: lrs, step counts, state tensors.
inline std::vector<std::vector<uint8_t>> snapshot(tg::optim::Optimizer& o) {
    std::vector<tg::Tensor> ts;
    std::vector<double> scalars;
    for (auto& g : o.param_groups())
        scalars.push_back(g.options().get_lr());
    for (auto& p : o.parameters()) {
        auto it = o.state().find(p.impl());
        scalars.push_back(it == o.state().end() ? -1.0 : double(it->second->step()));
        if (it != o.state().end())
            for (auto& [name, t] : it->second->tensors())
                ts.push_back(*t);
    }
    auto out = bits_of(ts);
    out.emplace_back(scalars.size() * sizeof(double));
    std::memcpy(out.back().data(), scalars.data(), out.back().size());
    return out;
}

[[noreturn]] inline void finding(const std::string& what) {
    std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
    std::abort();
}

/// Note [Fuzzing past the checksum]: a mutated TGSV file almost never keeps its CRC-32 (nor its
/// size field), so the fuzzer would test little but those two checks. The TGSV targets take a
/// flag byte before the file: bit 0 writes the true size into the header, bit 1 the true CRC-32
/// at the end, so that mutations reach the record parser; with the flag 0 the file is tested as
/// it is. Seeds carry 3.
inline std::vector<uint8_t> tgsv_input(const uint8_t* data, size_t size) {
    if (size == 0)
        return {};
    const uint8_t flags = data[0];
    std::vector<uint8_t> b(data + 1, data + size);
    if ((flags & 1) && b.size() >= 20)
        for (int i = 0; i < 8; ++i)
            b[size_t(12 + i)] = uint8_t(uint64_t(b.size()) >> (8 * i));
    if ((flags & 2) && b.size() >= 4) {
        uint32_t crc = uint32_t(crc32(0L, b.data(), uInt(b.size() - 4)));
        for (int i = 0; i < 4; ++i)
            b[b.size() - 4 + size_t(i)] = uint8_t(crc >> (8 * i));
    }
    return b;
}

/// A fuzz input as a file the readers can open by name: an anonymous memory file (no disk),
/// named through /proc/self/fd (a regular file to stat).
class InputFile {
public:
    InputFile() : fd_(::memfd_create("fuzz-input", MFD_CLOEXEC)) {
        if (fd_ < 0)
            finding("memfd_create failed");
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~InputFile() { ::close(fd_); }
    const std::string& set(const uint8_t* data, size_t size) {
        if (::ftruncate(fd_, 0) != 0 || (size > 0 && ::pwrite(fd_, data, size, 0) != ssize_t(size)))
            finding("cannot write the input file");
        return path_;
    }

private:
    int fd_;
    std::string path_;
};

/// A CPU tensor's bytes, any dtype.
inline std::vector<uint8_t> bytes_of(const tg::Tensor& t) {
    const tg::Tensor c = t.contiguous();
    std::vector<uint8_t> out(size_t(c.numel()) * tg::element_size(c.dtype()));
    tg::dispatch_all(c.dtype(), [&](auto tag) {
        if (!out.empty())
            std::memcpy(out.data(), c.data_ptr<decltype(tag)>(), out.size());
    });
    return out;
}

/// A finding unless `back` (a state dict saved and loaded again) has sd's names, dtypes, sizes
/// and bytes.
inline void check_round_trip(const tg::StateDict& sd, const tg::StateDict& back) {
    if (back.size() != sd.size())
        finding("a round trip changed the number of tensors");
    for (auto& [name, t] : sd) {
        const tg::Tensor* b = back.find(name);
        if (!b || b->dtype() != t.dtype() || b->sizes() != t.sizes() || bytes_of(*b) != bytes_of(t))
            finding("a round trip changed tensor \"" + name + "\"");
    }
}

}  // namespace fuzz
