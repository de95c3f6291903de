// tg::save / tg::load of tensors and lists of tensors: kind 3 of a TGSV file (io/tgsv.hpp),
// records "0", "1", ... as LibTorch's archives name them.
#include <atomic>
#include <string>
#include <vector>

#include "io/tgsv.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/io.hpp"

namespace tg {
namespace {

using namespace io_detail;

void save_tensors(const std::vector<Tensor>& tensors, const std::string& path, const char* type) {
    std::vector<OutRecord> records;
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (!tensors[i].defined())
            throw value_error("save(" + path + "): tensor " + std::to_string(i) + " is undefined");
        records.push_back(record_of(std::to_string(i), tensors[i]));
    }
    write_file(path, kKindTensors, type, records);
}

/// The file's tensors, validated as a whole before anything is returned.
std::vector<Tensor> read_tensors(const std::string& path, const std::optional<Device>& device) {
    const std::string where = "load(" + path + ")";
    InFile f = read_file(path, where);
    if (f.kind != kKindTensors)
        throw io_error(where + ": the file holds " +
                       std::string(f.kind == kKindModule      ? "module parameters"
                                   : f.kind == kKindOptimizer ? "optimizer state"
                                                              : "unknown data") +
                       ", not tensors");
    std::vector<Tensor> out;
    for (size_t i = 0; i < f.records.size(); ++i) {
        if (f.records[i].name != std::to_string(i))
            throw io_error(where + ": record " + std::to_string(i) + " is named \"" +
                           f.records[i].name + "\", expected \"" + std::to_string(i) + "\"");
        out.push_back(tensor_of(f.records[i]));
    }
    if (device)
        for (Tensor& t : out)
            t = t.to(*device);
    return out;
}

}  // namespace

void save(const Tensor& t, const std::string& path) {
    save_tensors({t}, path, "Tensor");
}

void save(const std::vector<Tensor>& tensors, const std::string& path) {
    save_tensors(tensors, path, "TensorList");
}

void load(Tensor& t, const std::string& path, std::optional<Device> device) {
    std::vector<Tensor> read = read_tensors(path, device);
    if (read.empty())
        throw io_error("load(" + path + "): the file holds no tensor");
    Tensor& r = read.front();
    if (!t.defined()) {
        t = r;
        return;
    }
    // keep t's identity, as LibTorch's set_data / set_: every handle sees the new data
    if (t.requires_grad() && !is_floating(r.dtype()))
        throw io_error("load(" + path + "): the file holds " + dtype_name(r.dtype()) +
                       " values, and the target requires grad");
    TensorImpl* dst = t.impl();
    const TensorImpl* src = r.impl();
    const bool same_kind = dst->sizes == src->sizes && dst->dtype == src->dtype &&
                           dst->storage->device == src->storage->device;
    if (!same_kind)
        dst->grad.reset();
    dst->storage = src->storage;
    dst->sizes = src->sizes;
    dst->strides = src->strides;
    dst->offset = src->offset;
    dst->dtype = src->dtype;
    if (dst->requires_grad)  // a parameter's storage is not an activation (Note [Activation
                             // memory])
        dst->storage->grad_leaf.store(true, std::memory_order_relaxed);
}

void load(std::vector<Tensor>& tensors, const std::string& path, std::optional<Device> device) {
    tensors = read_tensors(path, device);
}

}  // namespace tg
