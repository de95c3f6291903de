#pragma once
// Building the graph (graph.cpp): what record() does with a node, and the leaves' accumulators.
#include <initializer_list>
#include <memory>
#include <vector>

#include "tapegrad/autograd.hpp"

namespace tg::autograd::detail {

/// Next tape position (Note [Tape order] in engine.cpp).
uint64_t next_seq();
/// The sequence number the next recorded node will get (ComposedName in record.hpp).
uint64_t peek_seq();
/// The AccumulateGrad node of a leaf that requires grad (created on first use).
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);
/// Fills edges, input metadata, tape position and scope of n from inputs.
void connect(Node& n, std::initializer_list<const Tensor*> inputs);
void connect(Node& n, const std::vector<Tensor>& inputs);
/// Makes `out` the output `nr` of node n.
void set_history(Tensor& out, const std::shared_ptr<Node>& n, uint32_t nr);
/// Hands n what the Saved objects made since the last call keep (saved_report reads it; Saved's
/// constructor notes them, and record() runs right after the closure holding them is built).
void take_saved(Node& n);
/// Anomaly mode: throws if t holds NaN/Inf, naming the op (forward) and where it was recorded.
void check_forward_anomaly(const char* op, const Tensor& t);
/// "tape position #N, recorded in 'scope'": where error messages say a node comes from.
std::string where_recorded(const Node& n);
/// Drops p; if it held the last reference to a node, frees the chain below it without recursion
/// (Note [Graph destruction] in graph.cpp).
void release_node(std::shared_ptr<Node>& p);

}  // namespace tg::autograd::detail
