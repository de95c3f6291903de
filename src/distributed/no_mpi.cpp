// tg::distributed in a build without MPI (TG_MPI=OFF): every entry point says so.
#include <string>

#include "tapegrad/distributed.hpp"

namespace tg::distributed {

Work::~Work() = default;
ProcessGroup::~ProcessGroup() = default;

namespace {
[[noreturn]] void unbuilt(const char* what) {
    throw backend_unavailable(std::string(what) +
                              ": tapegrad was built without MPI (TG_MPI=OFF; install "
                              "libopenmpi-dev and reconfigure)");
}
}  // namespace

void init(int*, char***) {
    unbuilt("init");
}
bool is_initialized() {
    return false;
}
void finalize() {}
int rank() {
    unbuilt("rank");
}
int world_size() {
    unbuilt("world_size");
}
int local_rank() {
    unbuilt("local_rank");
}
std::shared_ptr<ProcessGroup> default_group() {
    unbuilt("default_group");
}
std::shared_ptr<ProcessGroup> new_group(const std::string&) {
    unbuilt("new_group");
}
std::shared_ptr<ProcessGroup> new_subgroup(const std::vector<int>&) {
    unbuilt("new_subgroup");
}
void barrier() {
    unbuilt("barrier");
}
void all_reduce(const Tensor&, ReduceOp) {
    unbuilt("all_reduce");
}
void broadcast(const Tensor&, int) {
    unbuilt("broadcast");
}
void all_gather(const std::vector<Tensor>&, const Tensor&) {
    unbuilt("all_gather");
}
void reduce_scatter(const Tensor&, const std::vector<Tensor>&, ReduceOp) {
    unbuilt("reduce_scatter");
}
std::shared_ptr<Work> all_reduce_async(const Tensor&, ReduceOp) {
    unbuilt("all_reduce_async");
}
std::shared_ptr<Work> broadcast_async(const Tensor&, int) {
    unbuilt("broadcast_async");
}

}  // namespace tg::distributed
