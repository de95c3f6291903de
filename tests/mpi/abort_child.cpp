// Note [Abort on an uncaught exception] in src/distributed/world.cpp, tested: rank 1 throws
// while rank 0 waits in a collective; the job must end (CTest's timeout says if it hangs) with
// rank 1's message.
#include <tapegrad/distributed.hpp>
#include <tapegrad/tensor.hpp>

int main(int argc, char** argv) {
    tg::distributed::init(&argc, &argv);
    if (tg::distributed::rank() == 1)
        throw tg::value_error("rank 1 gave up: boom");
    tg::distributed::all_reduce(tg::ones({4}));  // rank 0 waits here for rank 1, forever
    tg::distributed::barrier();
    return 0;
}
