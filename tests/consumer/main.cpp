// The smallest program that uses tapegrad: a tensor, backward, a gradient, and a custom
// autograd Function (its recording helpers are the library's, so a shared build must export
// them). Prints the gradient of sum(x * x) + sum(cube(x)) at x = [1, 2, 3], 2x + 3x^2 = [5, 16,
// 33].
#include <iostream>
#include <tapegrad/tapegrad.hpp>

struct Cube : tg::autograd::Function<Cube> {
    static tg::Tensor forward(tg::autograd::AutogradContext* ctx, tg::Tensor x) {
        ctx->save_for_backward({x});
        return x * x * x;
    }
    static tg::autograd::tensor_list backward(tg::autograd::AutogradContext* ctx,
                                              tg::autograd::tensor_list dy) {
        const tg::Tensor x = ctx->get_saved_variables()[0];
        return {dy[0] * 3 * x * x};
    }
};

int main() {
    auto x = tg::tensor({1.0, 2.0, 3.0}, tg::TensorOptions().requires_grad(true));  // float32
    auto y = (x * x).sum() + Cube::apply(x).sum();
    y.backward();
    std::cout << "d/dx sum(x*x) + sum(x^3) at [1,2,3] = " << x.grad() << "\n";
    const float* g = x.grad().data_ptr<float>();
    return g[0] == 5.0f && g[1] == 16.0f && g[2] == 33.0f ? 0 : 1;
}
