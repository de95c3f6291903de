// A program that calls MPI_Finalize itself after tg::distributed::init(), as MPI programs do at
// the end of main: tapegrad's teardown at exit must not call MPI after it (it aborted with
// "MPI_Comm_free() was called after MPI_FINALIZE" before). The test passes when every rank
// exits with 0.
#include <mpi.h>

#include <cstdio>
#include <tapegrad/distributed.hpp>
#include <tapegrad/tensor.hpp>

int main(int argc, char** argv) {
    tg::distributed::init(&argc, &argv);
    auto extra = tg::distributed::new_group("mpi");  // a second communicator to free at exit
    tg::Tensor t = tg::ones({4});
    tg::distributed::all_reduce(t);
    extra->all_reduce(t)->wait();
    const double expect = double(tg::distributed::world_size()) * tg::distributed::world_size();
    if (t.to_vector<float>()[0] != expect) {
        std::fprintf(stderr, "all_reduce gave %f, expected %f\n", t.to_vector<float>()[0], expect);
        return 1;
    }
    MPI_Finalize();
    return 0;
}
