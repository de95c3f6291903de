#pragma once
// The examples' --device argument (fashion_mnist_train.hpp, char_gpt.cpp).
#include <stdexcept>
#include <string>

#include "tapegrad/device.hpp"

/// "cpu", "cuda", "cuda:1", "opencl:0" -> tg::Device; throws std::invalid_argument otherwise.
inline tg::Device parse_device(const std::string& s) {
    std::string type = s.substr(0, s.find(':'));
    int index = 0;
    if (s.find(':') != std::string::npos)
        index = std::stoi(s.substr(s.find(':') + 1));
    if (type == "cpu" && index == 0)
        return tg::Device::cpu();
    if (type == "cuda")
        return tg::Device::cuda(index);
    if (type == "opencl")
        return tg::Device::opencl(index);
    throw std::invalid_argument("unknown device '" + s + "' (cpu, opencl[:i], cuda[:i])");
}
