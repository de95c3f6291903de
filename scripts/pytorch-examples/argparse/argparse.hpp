// A stand-in for the few calls of the argparse library (github.com/p-ranav/argparse, not a Debian
// package) that pytorch/examples' cpp/dcgan makes, so that scripts/check-pytorch-examples.sh can
// build that example unchanged: ArgumentParser(name), add_argument("--name").help(...)
// .default_value(v).scan<'i', T>(), parse_args(argc, argv), get<T>("--name"), printing. Options
// take one value ("--epochs 2"); anything else throws std::runtime_error.
#pragma once
#include <any>
#include <cstdint>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>

namespace argparse {

class Argument {
public:
    Argument& help(std::string h) {
        help_ = std::move(h);
        return *this;
    }
    template <class T>
    Argument& default_value(T v) {
        value_ = v;
        return *this;
    }
    template <char Kind, class T>
    Argument& scan() {
        parse_ = [](const std::string& s) -> std::any { return T(std::stoll(s)); };
        return *this;
    }
    std::string help_;
    std::any value_;
    std::any (*parse_)(const std::string&) = nullptr;
};

class ArgumentParser {
public:
    explicit ArgumentParser(std::string name) : name_(std::move(name)) {}
    Argument& add_argument(const std::string& flag) { return args_[flag]; }
    void parse_args(int argc, const char* const argv[]) {
        for (int i = 1; i < argc; ++i) {
            auto it = args_.find(argv[i]);
            if (it == args_.end() || i + 1 >= argc)
                throw std::runtime_error(std::string("unknown or incomplete argument ") + argv[i]);
            Argument& a = it->second;
            a.value_ = a.parse_ ? a.parse_(argv[++i]) : std::any(std::string(argv[++i]));
        }
    }
    template <class T>
    T get(const std::string& flag) const {
        return std::any_cast<T>(args_.at(flag).value_);
    }
    friend std::ostream& operator<<(std::ostream& os, const ArgumentParser& p) {
        os << "Usage: " << p.name_ << "\n";
        for (const auto& [flag, a] : p.args_)
            os << "  " << flag << "  " << a.help_ << "\n";
        return os;
    }

private:
    std::string name_;
    std::map<std::string, Argument> args_;
};

}  // namespace argparse
