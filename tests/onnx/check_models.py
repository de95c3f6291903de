"""onnx.checker (Debian's python3-onnx) on the models tests/test_onnx_export.cpp writes, and a
numpy evaluation of the graphs OpenCV 4.6 cannot run (Clip, Gather, LayerNorm's two forms, the
transformer layers, the traced functional forwards).

Usage: check_models.py DIR NAME...   checks DIR/NAME.onnx for every NAME with
onnx.checker.check_model(path, full_check=True), which also runs ONNX's shape inference and
fails where an inferred shape contradicts the graph's declared input and output shapes. Where
DIR/NAME.input.bin and NAME.output.bin exist (raw little-endian values of the example input and
of tapegrad's eval-mode output), the graph is evaluated here with numpy, op by op as the ONNX
operator documents define them, and must give tapegrad's output to 1e-5.
Exits 77 (CTest's skip) when the onnx module is not installed.
"""
import math
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError:
    print("python3-onnx is not installed (scripts/install-deps.sh test): skipped")
    sys.exit(77)


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def run_node(op, x, a):
    """The ONNX op `op` (opset 13 to 17 semantics) on inputs x with attributes a."""
    unary = {"Relu": lambda v: np.maximum(v, 0), "Tanh": np.tanh, "Sqrt": np.sqrt,
             "Sigmoid": lambda v: 1 / (1 + np.exp(-v)), "Softsign": lambda v: v / (1 + abs(v)),
             "Softplus": lambda v: np.log1p(np.exp(v)), "Identity": lambda v: v,
             "Erf": np.vectorize(math.erf), "Neg": np.negative, "Exp": np.exp, "Log": np.log}
    binary = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
              "Pow": np.power, "MatMul": np.matmul}
    if op in unary:
        return unary[op](x[0])
    if op in binary:
        return binary[op](x[0], x[1])
    if op == "Concat":
        return np.concatenate(x, axis=a["axis"])
    if op == "Where":
        return np.where(x[0], x[1], x[2])
    v = x[0]
    if op == "Slice":  # starts, ends, axes (steps 1)
        index = [slice(None)] * v.ndim
        for s, e, ax in zip(x[1], x[2], x[3]):
            index[ax] = slice(s, e)
        return v[tuple(index)]
    if op == "ReduceSum":  # opset 13: the axes are an input
        return v.sum(axis=tuple(x[1]), keepdims=bool(a.get("keepdims", 1)))
    if op == "Expand":
        return np.broadcast_to(v, np.broadcast_shapes(v.shape, tuple(x[1])))
    if op == "Cast":
        return v.astype({1: np.float64, 7: np.int64, 9: bool}[a["to"]])
    if op == "Transpose":
        return np.transpose(v, a["perm"])
    if op == "Reshape":  # 0 copies the input's dim
        return v.reshape([v.shape[i] if d == 0 else d for i, d in enumerate(x[1])])
    if op == "Gemm":
        b = x[1].T if a.get("transB", 0) else x[1]
        return v @ b + (x[2] if len(x) > 2 else 0)
    if op == "LeakyRelu":
        return np.where(v >= 0, v, a.get("alpha", 0.01) * v)
    if op == "Elu":
        return np.where(v > 0, v, a.get("alpha", 1.0) * np.expm1(v))
    if op == "Celu":
        al = a.get("alpha", 1.0)
        return np.maximum(v, 0) + np.minimum(0, al * np.expm1(v / al))
    if op == "Selu":
        al, ga = a.get("alpha", 1.67326319217681884765625), a.get("gamma", 1.05070102214813232421875)
        return ga * np.where(v > 0, v, al * np.expm1(v))
    if op == "Clip":
        return np.clip(v, x[1], x[2])
    if op == "Softmax":
        return softmax(v, a.get("axis", -1))
    if op == "LogSoftmax":
        return np.log(softmax(v, a.get("axis", -1)))
    if op == "ReduceMean":
        return v.mean(axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))
    if op == "Gather":
        return np.take(v, x[1], axis=a.get("axis", 0))
    if op == "LayerNormalization":
        axes = tuple(range(a.get("axis", -1) % v.ndim, v.ndim))
        d = v - v.mean(axis=axes, keepdims=True)
        y = d / np.sqrt((d * d).mean(axis=axes, keepdims=True) + a.get("epsilon", 1e-5)) * x[1]
        return y + x[2] if len(x) > 2 else y
    raise KeyError(op)


def evaluate(model, path):
    """Compares the numpy evaluation of the graph with tapegrad's output written beside it."""
    base = path[: -len(".onnx")]
    if not os.path.exists(base + ".output.bin"):
        return ""
    g = model.graph
    values = {t.name: numpy_helper.to_array(t).astype(np.float64)
              if t.data_type == onnx.TensorProto.FLOAT else numpy_helper.to_array(t)
              for t in g.initializer}
    def shape(vi):
        return [d.dim_value if d.HasField("dim_value") else -1 for d in vi.type.tensor_type.shape.dim]
    inp = g.input[0]
    dtype = np.int64 if inp.type.tensor_type.elem_type == onnx.TensorProto.INT64 else np.float32
    x = np.fromfile(base + ".input.bin", dtype=dtype).reshape(shape(inp))
    values[inp.name] = x.astype(np.float64) if dtype == np.float32 else x
    for node in g.node:
        values[node.output[0]] = run_node(node.op_type, [values[i] for i in node.input], attrs(node))
    want = np.fromfile(base + ".output.bin", dtype=np.float32).reshape(shape(g.output[0]))
    got = values[g.output[0].name]
    worst = float(np.max(np.abs(got - want)))
    if got.shape != want.shape or not worst <= 1e-5:
        sys.exit(f"{path}: numpy evaluation differs from tapegrad's output by {worst}")
    return f", numpy evaluation within {worst:.1e} of tapegrad"


directory, names = sys.argv[1], sys.argv[2:]
if not names:
    sys.exit("usage: check_models.py DIR NAME...")
for name in names:
    path = os.path.join(directory, name + ".onnx")
    onnx.checker.check_model(path, full_check=True)
    model = onnx.load(path)
    ops = sorted({n.op_type for n in model.graph.node})
    print(f"{name}: ir {model.ir_version}, opset {model.opset_import[0].version}, "
          f"{len(model.graph.node)} nodes, ops {' '.join(ops)}: ok{evaluate(model, path)}")
print(f"onnx {onnx.__version__}: {len(names)} models pass check_model(full_check=True)")
