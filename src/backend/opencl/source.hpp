#pragma once
// The OpenCL C text of the program for one element type (opencl_source.cpp).
#include <string>

#include "tapegrad/dtype.hpp"

namespace tg::backend {

/// Every kernel for element type d, generated from kernels.def plus the structural kernels;
/// fp64 says whether the device has cl_khr_fp64 (float32 sums then accumulate in double).
std::string opencl_program_source(Dtype d, bool fp64);
/// The copy kernels into dtype `to` from every dtype, copy_<tag>_c / _s, and where_b8
/// (convert_source.cpp): Note [Conversions] in OpenCL C. The program defines T, the prelude.
std::string opencl_conversion_source(Dtype to, bool fp64);
/// The OpenCL C type holding an element of d ("float", "uchar", "ushort" for float16, ...) and
/// the tag of d in kernel names ("f32", "u8", "bf16", ...).
const char* opencl_type(Dtype d);
const char* opencl_tag(Dtype d);
/// The window kernels (window_source.cpp), part of the floating programs.
const char* opencl_window_source();
/// The fused recurrent cells (rnn_source.cpp), part of the floating programs.
const char* opencl_rnn_source();
/// The fused row normalisations (norm_source.cpp), part of the floating programs.
const char* opencl_norm_source();
/// The fused optimizer updates (optim_source.cpp), part of the floating programs.
const char* opencl_optim_source();

}  // namespace tg::backend
