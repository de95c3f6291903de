#pragma once
// The CUDA backend's fused kernels beyond the table, each checked for a failed launch in its file.
#include "backend/backend.hpp"

namespace tg::backend::cuda {

/// The fused recurrent cells (rnn_cell.cu).
void launch_cell(CellOp op, const Cell& g, const View* v);
/// The fused optimizer update of one parameter (optim.cu), on device `index`.
void launch_optim(int index, OptimOp op, const OptimStep& s, const View* v);

}  // namespace tg::backend::cuda
