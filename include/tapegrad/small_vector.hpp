#pragma once
/// SmallVector: a vector that keeps up to N elements inline, so shapes, strides and gradient
/// lists of ordinary rank cost no heap allocation (autograd overhead is mostly allocation).
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <ostream>
#include <type_traits>
#include <vector>
#pragma GCC visibility push(default)

namespace tg {

template <class T, size_t N>
class SmallVector {
public:
    using value_type = T;
    using iterator = T*;
    using const_iterator = const T*;
    using size_type = size_t;

    SmallVector() = default;
    explicit SmallVector(size_t n) { resize(n); }
    SmallVector(size_t n, const T& v) { assign(n, v); }
    SmallVector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
    template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
    SmallVector(It first, It last) {
        assign(first, last);
    }
    SmallVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit
    SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
    SmallVector(SmallVector&& o) noexcept { take(std::move(o)); }
    SmallVector& operator=(const SmallVector& o) {
        if (this != &o)
            assign(o.begin(), o.end());
        return *this;
    }
    SmallVector& operator=(SmallVector&& o) noexcept {
        if (this != &o) {
            destroy();
            take(std::move(o));
        }
        return *this;
    }
    ~SmallVector() { destroy(); }

    operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT
    std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

    T* data() { return ptr_; }
    const T* data() const { return ptr_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T& operator[](size_t i) { return ptr_[i]; }
    const T& operator[](size_t i) const { return ptr_[i]; }
    T& at(size_t i) { return ptr_[i]; }
    const T& at(size_t i) const { return ptr_[i]; }
    T* begin() { return ptr_; }
    T* end() { return ptr_ + size_; }
    const T* begin() const { return ptr_; }
    const T* end() const { return ptr_ + size_; }
    T& front() { return ptr_[0]; }
    const T& front() const { return ptr_[0]; }
    T& back() { return ptr_[size_ - 1]; }
    const T& back() const { return ptr_[size_ - 1]; }

    void reserve(size_t n) {
        if (n <= cap_)
            return;
        T* p = static_cast<T*>(::operator new(n * sizeof(T)));
        for (size_t i = 0; i < size_; ++i) {
            new (p + i) T(std::move(ptr_[i]));
            ptr_[i].~T();
        }
        if (ptr_ != inline_ptr())
            ::operator delete(ptr_);
        ptr_ = p;
        cap_ = n;
    }
    void push_back(const T& v) { emplace_back(v); }
    void push_back(T&& v) { emplace_back(std::move(v)); }
    template <class... A>
    T& emplace_back(A&&... a) {
        if (size_ == cap_)
            reserve(cap_ * 2);
        new (ptr_ + size_) T(std::forward<A>(a)...);
        return ptr_[size_++];
    }
    void pop_back() { ptr_[--size_].~T(); }
    void clear() {
        for (size_t i = 0; i < size_; ++i)
            ptr_[i].~T();
        size_ = 0;
    }
    void resize(size_t n, const T& v = T()) {
        reserve(n);
        while (size_ > n)
            pop_back();
        while (size_ < n)
            emplace_back(v);
    }
    void assign(size_t n, const T& v) {
        clear();
        resize(n, v);
    }
    template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
    void assign(It first, It last) {
        clear();
        reserve(size_t(std::distance(first, last)));
        for (; first != last; ++first)
            emplace_back(*first);
    }
    T* insert(const T* pos, const T& v) {
        const size_t i = size_t(pos - ptr_);
        emplace_back(v);
        std::rotate(ptr_ + i, ptr_ + size_ - 1, ptr_ + size_);
        return ptr_ + i;
    }
    template <class It, class = std::enable_if_t<!std::is_integral_v<It>>>
    T* insert(const T* pos, It first, It last) {
        const size_t i = size_t(pos - ptr_), old = size_;
        for (; first != last; ++first)
            emplace_back(*first);
        std::rotate(ptr_ + i, ptr_ + old, ptr_ + size_);
        return ptr_ + i;
    }
    T* erase(const T* pos) { return erase(pos, pos + 1); }
    T* erase(const T* first, const T* last) {
        const size_t i = size_t(first - ptr_), n = size_t(last - first);
        std::move(ptr_ + i + n, ptr_ + size_, ptr_ + i);
        for (size_t k = 0; k < n; ++k)
            pop_back();
        return ptr_ + i;
    }

    friend bool operator==(const SmallVector& a, const SmallVector& b) {
        return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
    }
    friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }
    friend bool operator==(const SmallVector& a, const std::vector<T>& b) {
        return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
    }
    friend bool operator==(const std::vector<T>& b, const SmallVector& a) { return a == b; }
    friend bool operator!=(const SmallVector& a, const std::vector<T>& b) { return !(a == b); }
    friend bool operator!=(const std::vector<T>& b, const SmallVector& a) { return !(a == b); }
    friend bool operator<(const SmallVector& a, const SmallVector& b) {
        return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
    }

private:
    T* inline_ptr() { return reinterpret_cast<T*>(buf_); }
    void destroy() {
        clear();
        if (ptr_ != inline_ptr())
            ::operator delete(ptr_);
        ptr_ = inline_ptr();
        cap_ = N;
    }
    void take(SmallVector&& o) {
        if (o.ptr_ != o.inline_ptr()) {  // steal the heap buffer
            ptr_ = o.ptr_;
            cap_ = o.cap_;
            size_ = o.size_;
            o.ptr_ = o.inline_ptr();
            o.cap_ = N;
            o.size_ = 0;
            return;
        }
        ptr_ = inline_ptr();
        cap_ = N;
        size_ = 0;
        for (size_t i = 0; i < o.size_; ++i)
            emplace_back(std::move(o.ptr_[i]));
        o.clear();
    }
    alignas(T) unsigned char buf_[N * sizeof(T)];
    T* ptr_ = inline_ptr();
    size_t size_ = 0;
    size_t cap_ = N;
};

}  // namespace tg

#pragma GCC visibility pop
