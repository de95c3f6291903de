#pragma once
/// The worker threads of make_data_loader's DataLoaderOptions().workers(n): the batches the
/// iterating thread has asked its sampler for (submit) are made on n threads and handed out in
/// order (take; LibTorch's enforce_ordering, its default). The loader submits as LibTorch's does
/// (max_jobs requests when an epoch starts, one more per batch taken), so a sampler is asked for
/// its batches at the same moments. What making a batch throws is rethrown on the iterating
/// thread when that batch is taken. Destroying a Prefetcher (the next epoch's begin(), or the
/// loader going away) lets the workers finish the batch they are on and joins them.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tapegrad/error.hpp"

namespace tg::data {

template <class Batch, class Request>
class Prefetcher {
public:
    /// make(request) builds a batch; it is called on the workers, concurrently.
    Prefetcher(int64_t workers, std::function<Batch(Request)> make) : make_(std::move(make)) {
        threads_.reserve(size_t(workers));
        for (int64_t w = 0; w < workers; ++w)
            threads_.emplace_back([this] { work(); });
    }
    Prefetcher(const Prefetcher&) = delete;
    Prefetcher& operator=(const Prefetcher&) = delete;
    ~Prefetcher() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        for (std::thread& t : threads_)
            t.join();
    }

    /// Hands the workers the request of the next batch (batches are numbered 0, 1, ... in the
    /// order submitted).
    void submit(Request r) {
        {
            std::lock_guard<std::mutex> lock(mu_);
            requests_.emplace(submitted_++, std::move(r));
        }
        cv_.notify_all();
    }
    /// Batch i, once a worker has made it. Batches before i that were not taken are dropped.
    Batch take(int64_t i) {
        Slot s;
        {
            std::unique_lock<std::mutex> lock(mu_);
            if (i < wanted_ || i >= submitted_)
                throw value_error("DataLoader: batch " + std::to_string(i) + " of " +
                                  std::to_string(submitted_) +
                                  " is not there (an epoch's batches are read once, in order)");
            if (i > wanted_) {
                wanted_ = i;
                ready_.erase(ready_.begin(), ready_.lower_bound(i));
                requests_.erase(requests_.begin(), requests_.lower_bound(i));
            }
            cv_.wait(lock, [&] { return ready_.count(i) > 0; });
            s = std::move(ready_[i]);
            ready_.erase(i);
        }
        if (s.error)
            std::rethrow_exception(s.error);
        return std::move(s.batch);
    }

private:
    struct Slot {
        Batch batch{};
        std::exception_ptr error;
    };
    void work() {
        for (;;) {
            int64_t i = 0;
            std::optional<Request> r;  // Request need not be default-constructible
            {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait(lock, [&] { return stop_ || !requests_.empty(); });
                if (stop_)
                    return;
                auto first = requests_.begin();
                i = first->first;
                r.emplace(std::move(first->second));
                requests_.erase(first);
            }
            Slot s;
            try {
                s.batch = make_(std::move(*r));
            } catch (...) {
                s.error = std::current_exception();
            }
            {
                std::lock_guard<std::mutex> lock(mu_);
                if (i >= wanted_)
                    ready_.emplace(i, std::move(s));
            }
            cv_.notify_all();
        }
    }

    const std::function<Batch(Request)> make_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::map<int64_t, Request> requests_;  // submitted, not yet started
    std::map<int64_t, Slot> ready_;
    int64_t submitted_ = 0, wanted_ = 0;
    bool stop_ = false;
    std::vector<std::thread> threads_;  // last: started after everything above exists
};

}  // namespace tg::data
