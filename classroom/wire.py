"""Values as data between the grader and the sandbox that runs a student's code: JSON, never pickle.

The grader (``classroom.isolated``) sends a check's inputs to the sandbox and gets the student's answers
back through ``encode`` and ``decode``. Only plain data crosses: ``None``, booleans, numbers (NaN and
infinities included), strings, lists, tuples, dicts with string keys, tensors (dtype, shape and raw
bytes, rebuilt with ``torch.frombuffer``), NumPy arrays and scalars, devices and dtypes, and a few
PyTorch modules that checks pass as inputs (``LayerNorm``, ``Identity``, ``Linear``, ``Embedding``,
``Dropout``), sent as their settings and weights. Decoding builds nothing else: what the student's code
returns that is not data arrives as an ``Unsendable``, which equals nothing, so the check says what it
expected and what came back. A value deeper than ``MAX_DEPTH`` or bigger than ``MAX_BYTES`` is refused.
"""

from __future__ import annotations

import base64
import math
import pickle
from typing import Any

import numpy as np
import torch
from torch import nn

MAX_DEPTH = 12
MAX_BYTES = 512 * 2**20
DTYPES = {name: getattr(torch, name) for name in (
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
    "complex64", "complex128")}
_MODULES = ("LayerNorm", "Identity", "Linear", "Embedding", "Dropout")


class WireError(ValueError):
    """A value that cannot cross between the grader and the sandbox."""


class Unsendable:
    """What arrives in place of a value that is not data (a model, a generator, a function)."""

    def __init__(self, kind: str, text: str) -> None:
        self.kind, self.text = kind, text

    def __repr__(self) -> str:
        return f"<{self.kind}: {self.text}>"

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


def _tensor(t: torch.Tensor) -> dict:
    t = t.detach().cpu().contiguous()
    name = str(t.dtype).removeprefix("torch.")
    if name not in DTYPES:
        raise WireError(f"a tensor of dtype {t.dtype} cannot be sent")
    raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
    return {"dtype": name, "shape": list(t.shape), "data": base64.b64encode(raw).decode("ascii")}


def _module(m: nn.Module, depth: int) -> dict:
    kind = type(m).__name__
    if type(m).__module__.split(".")[0] != "torch" or kind not in _MODULES:
        raise WireError(f"a {kind} module cannot be sent")
    settings = {
        "LayerNorm": lambda: {"normalized_shape": list(m.normalized_shape), "eps": m.eps,
                              "elementwise_affine": m.elementwise_affine,
                              "bias": getattr(m, "bias", None) is not None},
        "Identity": dict, "Dropout": lambda: {"p": m.p},
        "Linear": lambda: {"in_features": m.in_features, "out_features": m.out_features,
                           "bias": m.bias is not None},
        "Embedding": lambda: {"num_embeddings": m.num_embeddings, "embedding_dim": m.embedding_dim},
    }[kind]()
    return {"kind": kind, "settings": settings, "training": m.training,
            "state": {k: encode(v, depth + 1) for k, v in m.state_dict().items()}}


def encode(value: Any, depth: int = 0, strict: bool = True, pickled: bool = False) -> Any:
    """``value`` as JSON-ready data. With ``strict=False`` what is not data becomes an ``Unsendable``'s
    description instead of raising (the sandbox sends a student's answer so); with ``pickled=True`` it
    is pickled (the grader sends a check's inputs so: only the sandbox unpickles, never the grader)."""
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH} levels cannot be sent")
    try:
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and type(value) is int:
            return value
        if type(value) is float:
            return value if math.isfinite(value) else {"float": repr(value)}
        if isinstance(value, torch.Tensor):
            return {"tensor": _tensor(value)}
        if isinstance(value, np.ndarray):
            return {"ndarray": _tensor(torch.from_numpy(np.ascontiguousarray(value)))}
        if isinstance(value, np.generic):
            return {"npscalar": {"dtype": value.dtype.name, "value": encode(value.item(), depth + 1)}}
        if isinstance(value, tuple) and type(value) is tuple:
            return {"tuple": [encode(v, depth + 1, strict, pickled) for v in value]}
        if isinstance(value, list) and type(value) is list:
            return [encode(v, depth + 1, strict, pickled) for v in value]
        if type(value) is dict and all(isinstance(k, str) for k in value):
            return {"dict": {k: encode(v, depth + 1, strict, pickled) for k, v in value.items()}}
        if isinstance(value, torch.device):
            return {"device": str(value)}
        if isinstance(value, torch.dtype):
            return {"dtype": str(value).removeprefix("torch.")}
        if isinstance(value, nn.Module):
            return {"module": _module(value, depth)}
        raise WireError(f"a {type(value).__name__} cannot be sent")
    except WireError:
        if pickled:
            return {"pickled": base64.b64encode(pickle.dumps(value)).decode("ascii")}
        if strict:
            raise
        return {"unsendable": {"kind": type(value).__qualname__[:80], "text": repr(value)[:200]}}


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_BYTES

    def take(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise WireError(f"more than {MAX_BYTES} bytes of tensors cannot be received")


def _untensor(d: dict, budget: _Budget) -> torch.Tensor:
    if not isinstance(d, dict) or set(d) != {"dtype", "shape", "data"}:
        raise WireError("a tensor arrived malformed")
    dtype = DTYPES.get(d["dtype"])
    shape = d["shape"]
    if dtype is None or not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
        raise WireError(f"a tensor arrived with dtype {d['dtype']!r} and shape {shape!r}")
    raw = base64.b64decode(d["data"].encode("ascii"), validate=True)
    budget.take(len(raw))
    count = math.prod(shape)
    if len(raw) != count * torch.empty((), dtype=dtype).element_size():
        raise WireError(f"a tensor of shape {shape} and dtype {d['dtype']} arrived with {len(raw)} bytes")
    if not raw:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape).clone()


def decode(data: Any, depth: int = 0, budget: _Budget | None = None,
           allow_pickle: bool = False) -> Any:
    """The value ``encode`` wrote (only the kinds listed in the module's docstring are built). Only the
    sandbox passes ``allow_pickle=True``, for the inputs the grader pickled."""
    budget = budget or _Budget()
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH} levels cannot be received")
    if data is None or isinstance(data, (bool, str, int, float)):
        return data
    if isinstance(data, list):
        return [decode(v, depth + 1, budget, allow_pickle) for v in data]
    if not isinstance(data, dict) or len(data) != 1:
        raise WireError("a value arrived malformed")
    (kind, body), = data.items()
    if kind == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if kind == "tensor":
        return _untensor(body, budget)
    if kind == "ndarray":
        return _untensor(body, budget).numpy()
    if kind == "npscalar":
        return np.dtype(str(body["dtype"])).type(decode(body["value"], depth + 1, budget))
    if kind == "tuple":
        return tuple(decode(v, depth + 1, budget, allow_pickle) for v in body)
    if kind == "dict":
        return {str(k): decode(v, depth + 1, budget, allow_pickle) for k, v in body.items()}
    if kind == "pickled" and allow_pickle:
        return pickle.loads(base64.b64decode(body))  # noqa: S301 - the sandbox, from the grader
    if kind == "device":
        return torch.device(str(body))
    if kind == "dtype" and body in DTYPES:
        return DTYPES[body]
    if kind == "module":
        return _unmodule(body, depth, budget)
    if kind == "unsendable":
        return Unsendable(str(body.get("kind", "object")), str(body.get("text", "")))
    raise WireError(f"a value of kind {kind!r} cannot be received")


def _unmodule(body: dict, depth: int, budget: _Budget) -> nn.Module:
    kind, settings = body["kind"], dict(body["settings"])
    if kind not in _MODULES:
        raise WireError(f"a {kind} module cannot be received")
    if kind == "LayerNorm":
        module = nn.LayerNorm(tuple(settings["normalized_shape"]), eps=float(settings["eps"]),
                              elementwise_affine=bool(settings["elementwise_affine"]),
                              bias=bool(settings["bias"]))
    elif kind == "Linear":
        module = nn.Linear(int(settings["in_features"]), int(settings["out_features"]),
                           bias=bool(settings["bias"]))
    elif kind == "Embedding":
        module = nn.Embedding(int(settings["num_embeddings"]), int(settings["embedding_dim"]))
    elif kind == "Dropout":
        module = nn.Dropout(float(settings["p"]))
    else:
        module = nn.Identity()
    state = {k: decode(v, depth + 1, budget) for k, v in body["state"].items()}
    module.load_state_dict(state)
    return module.train(bool(body["training"]))
