"""PyTorch's side of tests/test_io_pt.cpp (the .pt round trip with real PyTorch).

  pt_roundtrip.py make DIR   writes state dicts PyTorch made (an MLP, the Fashion-MNIST CNN of
                             examples/fashion_mnist_cnn.cpp with trained batch-norm statistics,
                             a small char_gpt of examples/char_gpt.cpp,
                             a PyTorch-trained MLP to fine-tune, tensors sharing storage), inputs
                             and PyTorch's outputs, all with torch.save
                             (and the CNN's state dict as a safetensors file too, written by
                             the format's specification with the writer below)
  pt_roundtrip.py check DIR  reads what tapegrad saved with torch.load (weights_only=True, the
                             loader that executes nothing) and its safetensors file with the
                             reader below, and checks values and outputs
Exits non-zero with a message on any mismatch.
"""
import json
import struct
import sys
import zipfile

import torch
from torch import nn


def mlp():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def cnn():  # examples/fashion_mnist_cnn.cpp
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.25), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


class Gpt(nn.Module):  # examples/char_gpt.cpp, small: pre-norm causal blocks, GELU
    def __init__(self, vocab=11, d=16, heads=4, context=8, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, activation="gelu",
                                       batch_first=True, norm_first=True) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        t = ids.shape[1]
        h = self.tok(ids) + self.pos(torch.arange(t))
        causal = torch.triu(torch.full((t, t), float("-inf")), 1)  # 1.13 has no is_causal
        for b in self.blocks:
            h = b(h, src_mask=causal)
        return self.head(self.ln_f(h))


def gpt_full():  # examples/char_gpt.cpp's size, with a vocabulary of 96
    return Gpt(vocab=96, d=256, heads=4, context=128, layers=6)


# safetensors by the format (Note [safetensors format] in include/tapegrad/io_safetensors.hpp):
# u64 header length, the JSON header, then each tensor's little-endian bytes
ST_DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
             torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32", torch.int16: "I16",
             torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL"}


def save_safetensors(sd, path):
    header, blobs, at = {}, [], 0
    for k, t in sd.items():
        raw = t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[k] = {"dtype": ST_DTYPES[t.dtype], "shape": list(t.shape),
                     "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def load_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    by_name = {v: k for k, v in ST_DTYPES.items()}
    out = {}
    for k, v in header.items():
        b, e = v["data_offsets"]
        buf = bytearray(raw[8 + n + b:8 + n + e])
        t = torch.frombuffer(buf, dtype=torch.uint8) if buf else torch.empty(0, dtype=torch.uint8)
        out[k] = t.view(by_name[v["dtype"]]).reshape(v["shape"])
    return out


def fine_tune_data():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(32, 8, generator=g)
    return x, (x[:, :4] * 2 - x[:, 4:]).sum(1).remainder(4).long()


def make(d):
    torch.manual_seed(0)
    m = mlp().eval()
    x = torch.randn(5, 8)
    torch.save(m.state_dict(), f"{d}/mlp.pt")
    torch.save({"x": x, "y": m(x).detach()}, f"{d}/mlp_io.pt")

    c = cnn()
    with torch.no_grad():  # batch-norm statistics that are not the initial ones
        for _ in range(3):
            c(torch.randn(8, 1, 28, 28) * 2 + 0.5)
    c.eval()
    x = torch.randn(4, 1, 28, 28)
    torch.save(c.state_dict(), f"{d}/cnn.pt")
    save_safetensors(c.state_dict(), f"{d}/cnn.safetensors")
    torch.save({"x": x, "y": c(x).detach()}, f"{d}/cnn_io.pt")
    torch.save({"model": c.state_dict(), "epoch": 3, "lr": 0.01, "note": "nested",
                "history": [1.5, 0.75]}, f"{d}/cnn_ckpt.pt")

    for name, make_gpt, vocab, t in (("gpt", Gpt, 11, 8), ("gpt_full", gpt_full, 96, 128)):
        g = make_gpt().eval()
        ids = torch.randint(0, vocab, (2, t))
        torch.save(g.state_dict(), f"{d}/{name}.pt")
        with torch.no_grad():
            torch.save({"x": ids, "y": g(ids)}, f"{d}/{name}_io.pt")

    # a checkpoint PyTorch trained a little, and the data to go on with
    t = mlp()
    opt = torch.optim.SGD(t.parameters(), lr=0.05)
    x, y = fine_tune_data()
    for _ in range(5):
        opt.zero_grad()
        nn.functional.cross_entropy(t(x), y).backward()
        opt.step()
    torch.save(t.state_dict(), f"{d}/trained.pt")
    torch.save({"x": x, "y": y,
                "loss": nn.functional.cross_entropy(t(x), y).detach()}, f"{d}/trained_io.pt")

    # tensors sharing one storage: a tensor, its transpose, a row slice (an offset), a half
    w = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    torch.save({"w": w, "wt": w.t(), "row": w[1], "col": w[:, 2],
                "h": torch.tensor([1.5, -2.0], dtype=torch.float16),
                "b": torch.tensor([True, False]), "i": torch.tensor([-3, 7], dtype=torch.int32),
                "bf": torch.tensor([0.5], dtype=torch.bfloat16)}, f"{d}/shared.pt")


def fail(msg):
    print("pt_roundtrip.py:", msg)
    sys.exit(1)


def aligned(path):
    with zipfile.ZipFile(path) as z:
        for i in z.infolist():
            if i.compress_type != zipfile.ZIP_STORED:
                fail(f"{path}: {i.filename} is compressed")
        with open(path, "rb") as f:
            raw = f.read()
        for i in z.infolist():
            o = i.header_offset
            start = o + 30 + int.from_bytes(raw[o + 26:o + 28], "little") + \
                int.from_bytes(raw[o + 28:o + 30], "little")
            if i.filename.split("/")[1] == "data" and start % 64:
                fail(f"{path}: {i.filename}'s data starts at {start}, not a multiple of 64")


def load(path):
    aligned(path)
    return torch.load(path, weights_only=True)


def same_state_dict(got, orig, what, ordered=True):
    keys, want = (list(got), list(orig)) if ordered else (sorted(got), sorted(orig))
    if keys != want:
        fail(f"{what}: keys {keys}, PyTorch's {want}")
    for k in orig:
        if got[k].dtype != orig[k].dtype or not torch.equal(got[k], orig[k]):
            fail(f"{what}: {k} is {got[k]}, PyTorch saved {orig[k]}")


def output_error(model, sd, x, y):
    """max |model(x) - y| over max(1, max |y|), as test_io_pt.cpp's scaled_diff."""
    model.eval().load_state_dict(sd)
    with torch.no_grad():
        return (model(x) - y).abs().max().item() / max(1.0, y.abs().max().item())


def check(d):
    for name, make_model in (("mlp", mlp), ("cnn", cnn), ("gpt", Gpt), ("gpt_full", gpt_full)):
        sd = load(f"{d}/tg_{name}.pt")
        same_state_dict(sd, torch.load(f"{d}/{name}.pt"), f"tg_{name}.pt")
        x = torch.load(f"{d}/{name}_io.pt")["x"]
        err = output_error(make_model(), sd, x, load(f"{d}/tg_{name}_out.pt")["y"])
        if err > 1e-6:
            fail(f"{name}: tapegrad's output differs from PyTorch's by {err} of its scale")

    # the CNN's safetensors file tapegrad wrote, read by the format: PyTorch's values and outputs
    st = load_safetensors(f"{d}/tg_cnn.safetensors")
    same_state_dict(st, torch.load(f"{d}/cnn.pt"), "tg_cnn.safetensors", ordered=False)
    io = torch.load(f"{d}/cnn_io.pt")
    err = output_error(cnn(), st, io["x"], io["y"])
    if err > 1e-6:
        fail(f"tg_cnn.safetensors: the CNN's output differs from PyTorch's by {err} of its scale")

    # the checkpoint tapegrad fine-tuned: PyTorch reads it and finds the loss lower
    io = torch.load(f"{d}/trained_io.pt")
    t = mlp()
    t.load_state_dict(load(f"{d}/tg_tuned.pt"))
    loss = nn.functional.cross_entropy(t(io["x"]), io["y"]).item()
    if not loss < io["loss"].item():
        fail(f"fine-tuned in tapegrad, the loss is {loss}, PyTorch's was {io['loss'].item()}")

    # storages tapegrad shared stay shared; every dtype comes back
    s = load(f"{d}/tg_shared.pt")
    same_state_dict(s, torch.load(f"{d}/shared.pt"), "tg_shared.pt", ordered=False)
    base = s["w"].storage().data_ptr()
    for k in ("wt", "row", "col"):
        if s[k].storage().data_ptr() != base:
            fail(f"tg_shared.pt: {k} does not share w's storage")
    if s["row"].storage_offset() != 4 or s["wt"].stride() != (1, 4):
        fail("tg_shared.pt: offsets or strides changed")
    print("pt_roundtrip.py: ok")


if __name__ == "__main__":
    {"make": make, "check": check}[sys.argv[1]](sys.argv[2])
