// The smallest program that uses tapegrad: a tensor, backward, a gradient.
// Prints the gradient of sum(x * x) at x = [1, 2, 3], which is 2x = [2, 4, 6].
#include <iostream>

#include <tapegrad/tapegrad.hpp>

int main() {
    auto x = tg::tensor({1.0, 2.0, 3.0}, tg::TensorOptions().requires_grad(true));  // float32
    auto y = (x * x).sum();
    y.backward();
    std::cout << "d/dx sum(x*x) at [1,2,3] = " << x.grad() << "\n";
    const float* g = x.grad().data_ptr<float>();
    return g[0] == 2.0f && g[1] == 4.0f && g[2] == 6.0f ? 0 : 1;
}
