"""Library routes an exercise refuses, recognised by what runs, not by the name it was reached through.

An exercise that asks for a loss "without F.cross_entropy" must refuse ``F.cross_entropy``,
``nn.CrossEntropyLoss``, ``torch.ops.aten.cross_entropy_loss`` and ``F.nll_loss`` on log-probabilities
alike: every one of them reaches the same operator of PyTorch's dispatcher, ``aten::nll_loss_forward``.
Replacing a function by its Python name (``utils.checks``' first line of defence) misses the other
names; ``recording()`` does not. While the learner's function runs it watches three things:

- the **operators** PyTorch's dispatcher runs (a ``TorchDispatchMode`` sees every operator below
  autograd, whatever Python name, ``torch.ops.aten`` call or C++ composite led there);
- **autograd** in every mode: the backward pass of the autograd engine (``backward``,
  ``torch.autograd.grad``, ``autograd.functional``, ``torch.func.jacrev``), forward-mode autograd
  (``torch.autograd.forward_ad``) and ``torch.func``'s grad and jvp transforms (``jacfwd``,
  ``hessian``), each seen as a call of the C function it enters, by a profile hook;
- how many numbers went through an **exponential** (``exp``, softmax, log-softmax): a numerical
  derivative evaluates the function again at shifted inputs, so it exponentiates as many numbers again
  for every input dimension (``exponentials_above`` turns that into a refusal).

``OPERATORS`` maps each refused route to the operators that give it away; ``refusal()`` says, from a
record, which refused route ran.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

AUTOGRAD = "autograd"  # the family of every way of differentiating automatically

_NLL = frozenset({"aten.nll_loss_forward", "aten.nll_loss2d_forward"})
_FUSED_ATTENTION = frozenset({
    "aten._safe_softmax",  # the softmax of F.scaled_dot_product_attention's math path on the CPU
    "aten._scaled_dot_product_attention_math", "aten._scaled_dot_product_flash_attention_for_cpu",
    "aten._scaled_dot_product_flash_attention", "aten._scaled_dot_product_efficient_attention",
    "aten._scaled_dot_product_cudnn_attention"})
_LAYER_NORM = frozenset({"aten.native_layer_norm"})
_SOFTMAX = frozenset({"aten._softmax", "aten._log_softmax", "aten._safe_softmax"})
_UNFOLD = frozenset({"aten.im2col", "aten.convolution", "aten._convolution", "aten.unfold"})

# A refused route (``module.attribute``, as ``route_label`` writes it) -> the operators that give it away.
OPERATORS: dict[str, frozenset[str]] = {
    **dict.fromkeys(["torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss",
                     "torch.nn.modules.loss.CrossEntropyLoss", "torch.nn.modules.loss.NLLLoss",
                     "torch.nn.CrossEntropyLoss", "torch.nn.NLLLoss", "torch._C._nn.cross_entropy_loss",
                     "torch._C._nn.nll_loss", "torch._C._nn.nll_loss_nd"], _NLL),
    "torch.nn.functional.scaled_dot_product_attention": _FUSED_ATTENTION,
    "torch.nn.functional.multi_head_attention_forward": _FUSED_ATTENTION,
    **dict.fromkeys(["torch.nn.functional.layer_norm", "torch.layer_norm", "torch.native_layer_norm",
                     "torch.nn.LayerNorm"], _LAYER_NORM),
    **dict.fromkeys(["torch.softmax", "torch.Tensor.softmax", "torch.nn.functional.softmax",
                     "torch.special.softmax", "torch._softmax", "torch.log_softmax",
                     "torch.Tensor.log_softmax", "torch.nn.functional.log_softmax",
                     "torch.special.log_softmax", "torch.nn.Softmax", "torch.nn.LogSoftmax"], _SOFTMAX),
    **dict.fromkeys(["torch.nn.functional.unfold", "torch.nn.Unfold", "torch.Tensor.unfold",
                     "torch.nn.functional.conv2d", "torch.nn.Conv2d"], _UNFOLD),
    **dict.fromkeys(["torch.autograd.functional.jacobian", "torch.autograd.functional.hessian",
                     "torch.autograd.grad", "torch.autograd.backward", "torch.Tensor.backward",
                     "torch.func.jacrev", "torch.func.jacfwd", "torch.func.grad", "torch.func.vjp",
                     "torch.func.jvp"], frozenset({AUTOGRAD})),
}

_EXPONENTIALS = frozenset({"aten.exp", "aten.exp_", "aten._softmax", "aten._log_softmax",
                           "aten._safe_softmax", "aten.expm1", "aten.sigmoid", "aten.tanh"})


def route_label(owner: Any, attribute: str) -> str:
    """``torch.nn.functional.cross_entropy`` for ``(F, "cross_entropy")``; ``torch.Tensor.backward``."""
    if isinstance(owner, type):
        module = getattr(owner, "__module__", "") or ""
        prefix = "torch" if module.startswith("torch") and owner is torch.Tensor else module
        return f"{prefix}.{owner.__qualname__}.{attribute}"
    return f"{getattr(owner, '__name__', type(owner).__name__)}.{attribute}"


def _autograd_entry_points() -> list[Any]:
    """The C functions that forward-mode autograd and torch.func's differentiating transforms enter."""
    points = [getattr(torch, "_make_dual", None), getattr(torch._C, "_enter_dual_level", None)]
    functorch = getattr(torch._C, "_functorch", None)
    for name in ("_grad_increment_nesting", "_jvp_increment_nesting"):
        points.append(getattr(functorch, name, None))
    return [p for p in points if p is not None]


@dataclass
class Record:
    """What ran while a function was recorded."""

    operators: Counter = field(default_factory=Counter)   # "aten.nll_loss_forward" -> calls
    exponentiated: int = 0            # numbers that went through exp, softmax and the like
    autograd: list[str] = field(default_factory=list)     # how autograd was entered, if it was
    called: list[str] = field(default_factory=list)       # the watched functions that ran
    complete: bool = False            # the recorder saw its own closing marker (it was not switched off)


class _Operators(TorchDispatchMode):
    def __init__(self, record: Record) -> None:
        super().__init__()
        self.record = record

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # False: the mode's method is left as written. PyTorch otherwise wraps it to keep
        # torch.compile out, and the wrapper imports torch._dynamo on the first call (2-3 s on
        # a laptop CPU, paid by every check that records); no answer is compiled while recorded.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func).rsplit(".", 1)[0]
        self.record.operators[name] += 1
        first = args[0] if args else None
        if name in _EXPONENTIALS and isinstance(first, torch.Tensor):
            self.record.exponentiated += first.numel()
        return func(*args, **(kwargs or {}))


_MARKER = "aten.bitwise_left_shift"  # what the recorder runs last, to know it was still on


@contextmanager
def recording(watched: Mapping[Any, str] | None = None) -> Iterator[Record]:
    """Record the operators, the use of autograd and the numbers exponentiated inside the block, and
    the calls of the ``watched`` code objects (code object -> the route's label), however reached."""
    record = Record()
    entries = {id(p): p for p in _autograd_entry_points()}
    engine = torch.autograd.Variable._execution_engine
    watched = dict(watched or {})
    previous = sys.getprofile()

    def on_call(frame: Any, event: str, arg: Any) -> None:
        if previous is not None:  # another hook (utils.checks' refusal of files) goes on
            previous(frame, event, arg)
        if event == "call":
            label = watched.get(frame.f_code)
            if label is not None and label not in record.called:
                record.called.append(label)
            return
        if event != "c_call":
            return
        if id(arg) in entries and entries[id(arg)] is arg:
            record.autograd.append(getattr(arg, "__name__", repr(arg)))
        elif getattr(arg, "__self__", None) is engine and getattr(arg, "__name__", "") == "run_backward":
            record.autograd.append("run_backward")

    mode = _Operators(record)
    sys.setprofile(on_call)
    try:
        with mode:
            yield record
            torch.ones(1, dtype=torch.int32).bitwise_left_shift(1)  # the marker
    finally:
        sys.setprofile(previous)
    record.complete = record.operators.get(_MARKER, 0) > 0
    if record.complete:
        record.operators[_MARKER] -= 1


def refusal(record: Record, routes: Sequence[str]) -> tuple[str, str] | None:
    """(route, what gave it away: an operator, or the C function autograd entered) for the first
    refused route ``record`` shows, or None; the route is ``AUTOGRAD`` for any automatic
    differentiation."""
    for route in routes:
        family = OPERATORS.get(route, frozenset())
        if AUTOGRAD in family and record.autograd:
            return AUTOGRAD, record.autograd[0]
        ran = sorted(op for op in family if record.operators.get(op))
        if ran:
            return route, ran[0].replace(".", "::", 1)
    return None
