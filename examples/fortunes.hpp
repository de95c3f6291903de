#pragma once
// The character-level examples' data (char_gpt.cpp, char_lstm.cpp): the fortune cookie files of
// Debian's `fortunes` package as one text, its bytes as a vocabulary, and random windows of it.
#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/tapegrad.hpp"

/// The text of every fortune file in dir (not the .dat indexes or .u8 links), in name order.
inline std::string read_corpus(const std::string& dir, const std::string& program) {
    DIR* d = opendir(dir.c_str());
    if (!d)
        throw tg::io_error(program + ": cannot open " + dir +
                           " (install Debian's fortunes package, or pass --data DIR)");
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
        const std::string n = e->d_name;
        auto ends = [&](const char* s) {
            const std::string t = s;
            return n.size() >= t.size() && n.compare(n.size() - t.size(), t.size(), t) == 0;
        };
        if (n[0] != '.' && !ends(".dat") && !ends(".u8"))
            names.push_back(n);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    std::string text;
    for (const std::string& n : names) {
        std::ifstream f(dir + "/" + n, std::ios::binary);
        std::ostringstream s;
        s << f.rdbuf();
        text += s.str();
    }
    if (text.size() < 10000)
        throw tg::io_error(program + ": " + dir + " holds only " + std::to_string(text.size()) +
                           " bytes of text");
    return text;
}

struct Corpus {
    std::vector<int64_t> ids;  // the text as vocabulary indices
    std::vector<char> chars;   // index -> byte
    std::map<char, int64_t> index;
    size_t split = 0;  // [0, split) trains, [split, end) validates
};

inline Corpus tokenize(const std::string& text) {
    Corpus c;
    std::vector<bool> seen(256, false);
    for (unsigned char ch : text)
        seen[ch] = true;
    for (int ch = 0; ch < 256; ++ch)
        if (seen[size_t(ch)]) {
            c.index[char(ch)] = int64_t(c.chars.size());
            c.chars.push_back(char(ch));
        }
    for (char ch : text)
        c.ids.push_back(c.index[ch]);
    c.split = c.ids.size() * 9 / 10;
    return c;
}

/// A batch of `batch` windows of context+1 tokens from [lo, hi): inputs and next-token targets.
inline std::pair<tg::Tensor, tg::Tensor> get_batch(const Corpus& c, size_t lo, size_t hi,
                                                   int64_t batch, int64_t T, std::mt19937_64& rng,
                                                   tg::Device d) {
    std::uniform_int_distribution<size_t> start(lo, hi - size_t(T) - 1);
    std::vector<int64_t> x, y;
    for (int64_t b = 0; b < batch; ++b) {
        const size_t s = start(rng);
        x.insert(x.end(), c.ids.begin() + long(s), c.ids.begin() + long(s) + T);
        y.insert(y.end(), c.ids.begin() + long(s) + 1, c.ids.begin() + long(s) + T + 1);
    }
    return {tg::tensor(x).reshape({batch, T}).to(d), tg::tensor(y).reshape({batch * T}).to(d)};
}
