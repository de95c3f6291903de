"""onnx.checker (Debian's python3-onnx) on the models tests/test_onnx_export.cpp writes.

Usage: check_models.py DIR NAME...   checks DIR/NAME.onnx for every NAME with
onnx.checker.check_model(path, full_check=True), which also runs ONNX's shape inference and
fails where an inferred shape contradicts the graph's declared input and output shapes.
Exits 77 (CTest's skip) when the onnx module is not installed.
"""
import os
import sys

try:
    import onnx
except ImportError:
    print("python3-onnx is not installed (scripts/install-deps.sh test): skipped")
    sys.exit(77)

directory, names = sys.argv[1], sys.argv[2:]
if not names:
    sys.exit("usage: check_models.py DIR NAME...")
for name in names:
    path = os.path.join(directory, name + ".onnx")
    onnx.checker.check_model(path, full_check=True)
    model = onnx.load(path)
    ops = sorted({n.op_type for n in model.graph.node})
    print(f"{name}: ir {model.ir_version}, opset {model.opset_import[0].version}, "
          f"{len(model.graph.node)} nodes, ops {' '.join(ops)}: ok")
print(f"onnx {onnx.__version__}: {len(names)} models pass check_model(full_check=True)")
