#pragma once
/// TG_ARG, the options classes' one line per option (optimizers, nn::functional), as LibTorch's
/// TORCH_ARG: `Options().lr(0.1).momentum(0.9)`.

/// Declares an option `name` of type T with a chaining setter and a getter, as TORCH_ARG.
#define TG_ARG(T, name)                               \
public:                                               \
    auto name(const T& new_##name)->decltype(*this) { \
        this->name##_ = new_##name;                   \
        return *this;                                 \
    }                                                 \
    const T& name() const noexcept {                  \
        return this->name##_;                         \
    }                                                 \
    T& name() noexcept {                              \
        return this->name##_;                         \
    }                                                 \
                                                      \
private:                                              \
    T name##_
