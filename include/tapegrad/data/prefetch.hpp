#pragma once
/// The worker threads of make_data_loader's DataLoaderOptions().workers(n): batches of one epoch
/// made on n threads, at most `ahead` past the one the iterator asks for, and handed out in
/// order (LibTorch's enforce_ordering, its default). What making a batch throws is rethrown on
/// the iterating thread when that batch is asked for. Destroying a Prefetcher (the next epoch's
/// begin(), or the loader going away) lets the workers finish the batch they are on and joins
/// them.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tapegrad/error.hpp"

namespace tg::data {

template <class Batch>
class Prefetcher {
public:
    /// make(i) builds batch i of count; it is called on the workers, concurrently.
    Prefetcher(int64_t count, int64_t workers, int64_t ahead, std::function<Batch(int64_t)> make)
        : count_(count), ahead_(ahead), make_(std::move(make)) {
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

    /// Batch i, once a worker has made it. Batches before i that were skipped are dropped.
    Batch take(int64_t i) {
        Slot s;
        {
            std::unique_lock<std::mutex> lock(mu_);
            if (i < 0 || i >= count_ || (i < wanted_ && ready_.count(i) == 0))
                throw value_error("DataLoader: batch " + std::to_string(i) + " of " +
                                  std::to_string(count_) +
                                  " is not there (an epoch's batches are read once, in order)");
            if (i > wanted_) {
                wanted_ = i;
                ready_.erase(ready_.begin(), ready_.lower_bound(i));
                cv_.notify_all();  // the window moved: workers may start further batches
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
            {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait(lock,
                         [&] { return stop_ || next_ >= count_ || next_ < wanted_ + ahead_; });
                if (stop_ || next_ >= count_)
                    return;
                i = next_++;
            }
            Slot s;
            try {
                s.batch = make_(i);
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

    const int64_t count_, ahead_;
    const std::function<Batch(int64_t)> make_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::map<int64_t, Slot> ready_;
    int64_t next_ = 0, wanted_ = 0;
    bool stop_ = false;
    std::vector<std::thread> threads_;  // last: started after everything above exists
};

}  // namespace tg::data
