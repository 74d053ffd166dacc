"""Lab 11's exercises (the ablation ladder): their checks, references, named mistakes and misconceptions."""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable
from dataclasses import replace

import torch
from torch import nn

from utils import checks
from utils.attention import causal_mask
from utils.checks import CheckFailed, verify_function, verify_prediction
from utils.data import Batch, pad_sequences, padding_mask
from utils.exercises import Question, exercise
from utils.exercises.common import built_with_seed
from utils.language import HINT, say
from utils.runtime import seed_everything

# ---------------------------------------------------------------------------------------------------
# 11.1 Predict the ladder
# ---------------------------------------------------------------------------------------------------
# What the ladder measures at the lab's default size, on every seed and thread count the authors tried:
# the claims the notebook checks after training (its check_result cell). Each is (what is measured, the
# rung, the rung below it that is subtracted or None, "at most" or "at least", the bound, and the
# misconception that a prediction on the other side of the bound reveals).
_LADDER_CLAIMS = (
    ("rung 0 (chapter 3)", 0, None, "at most", 0.05,
     "the belief that chapter 3's translator gets some test sentences right (it reads the source as a "
     "bag of words and the target through one previous word; chapter 3 measured it)"),
    ("rung 1 minus rung 0 (positions)", 1, 0, "at least", 0.15,
     "the belief that positions add little (without them the cross-attention can prefer a word of the "
     "right kind, never a word at the right place)"),
    ("rung 5 (unmasked self-attention)", 5, None, "at most", 0.3,
     "the belief that adding a piece can only help (without its mask the decoder's self-attention "
     "learns to read part of its predictions off the next input word, which at test time does not "
     "exist)"),
    ("rung 6 (causal mask)", 6, None, "at least", 0.85,
     "the belief that one layer in each stack stays far from chapter 8's Transformer (with the mask, "
     "self-attention gives every position the prefix written so far and every source word its "
     "context)"),
    ("rung 6 minus rung 5 (the causal mask)", 6, 5, "at least", 0.5,
     "the belief that the causal mask is a detail (it closes the path by which the decoder reads the "
     "next input word)"),
)


def _fractions_in_order(predicted: object, names: list[str], hint: str) -> list[float]:
    """The predictions as floats in the order of ``names``; a ``CheckFailed`` when not in that form."""
    def refuse(problem: str) -> None:
        raise CheckFailed(say("{name}: {problem}", name="Exercise 11.1", problem=problem)
                          + say(HINT, hint=hint))

    if not isinstance(predicted, dict):
        refuse(say("write your predictions as a dict from each name in RUNGS to a fraction; got a "
                   "{kind}", kind=type(predicted).__name__))
    missing = [name for name in names if name not in predicted]
    unknown = [key for key in predicted if key not in names]
    if missing or unknown:
        details = ([say("missing: {keys}", keys=missing)] if missing else []) + \
            ([say("not a rung of RUNGS: {keys}", keys=unknown)] if unknown else [])
        refuse(say("a missing or misspelt rung (one prediction per name in RUNGS): {details}",
                   details="; ".join(details)))
    values = [predicted[name] for name in names]
    not_numbers = [name for name, v in zip(names, values, strict=True)
                   if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v)]
    if not_numbers:
        refuse(say("each prediction must be a number between 0 and 1; these are not: {names}",
                   names=not_numbers))
    if 1 < max(values) <= 100 and all(v == 0 or v >= 1 for v in values):
        refuse(say("percentages instead of fractions (write 0.4 for 40%)"))
    outside = [name for name, v in zip(names, values, strict=True) if not 0 <= v <= 1]
    if outside:
        refuse(say("exact match is a fraction between 0 and 1; these predictions are outside: {names}",
                   names=outside))
    return [float(v) for v in values]


@exercise("11.1", "Predict the ladder", "Easy", 10, kind="prediction",
          questions=[Question(
              "Your reasoning: one sentence per rung, written with the predictions, before training.",
              ("a reason for every rung, not only a number", "rung 0 as a bag of words and rung 1's "
               "positions as the way to find a word by its place", "rung 5's unmasked decoder "
               "self-attention as a chance to read the next input word, or another reason that the "
               "measurement then confirms or refutes"), 2)],
          hint="return a dict whose keys are exactly the names in RUNGS (copy them from list(RUNGS)) "
               "and whose values are fractions between 0 and 1; there is no wrong guess, only a "
               "missing one")
def _predict_ladder(answer, hidden=False, *, rungs: Iterable[str]):
    """Records the predictions, then shows the lab's measured claims next to them (no training here:
    the notebook trains the rungs below and draws this run's values next to the predictions)."""
    names = list(rungs)
    if len(names) != 8:
        raise ValueError(f"Exercise 11.1 compares with the lab's eight rungs; got rungs={names}")
    hint = _predict_ladder.exercise.hint
    said = _fractions_in_order(checks.call_answer(answer, (), "Exercise 11.1", hint), names, hint)
    lines = ["Exercise 11.1: your predictions are recorded (full marks for writing them). What the "
             "ladder measures at this lab's default size, on every seed and thread count tried (the "
             "training below measures this run and draws it next to your predictions):"]
    for i, (label, rung, below, side, bound, belief) in enumerate(_LADDER_CLAIMS):
        value = said[rung] - (said[below] if below is not None else 0.0)
        holds = value <= bound + 1e-9 if side == "at most" else value >= bound - 1e-9
        verdict = ("as you predicted" if holds else
                   f"not what you predicted ({value:.2f}): this is {belief}")
        lines.append(f"  {i + 1}. {label}: {side} {bound:g}, {verdict}")
    print("\n".join(lines))


# ---------------------------------------------------------------------------------------------------
# 11.2 Which inputs does a prediction read?
# ---------------------------------------------------------------------------------------------------
def _log_prob_due(model: nn.Module, batch: Batch, tgt_in: torch.Tensor, i: int,
                  probabilities: bool = False, at: int | None = None) -> torch.Tensor:
    """(B,): the log-probability (or probability) the model gives the word due at position ``i``
    (``batch.tgt_out[:, i]``) when its decoder reads ``tgt_in``; read at position ``at`` if given."""
    where = i if at is None else at
    scores = model(replace(batch, tgt_in=tgt_in))[:, where].log_softmax(-1)     # (B, V)
    picked = scores.gather(-1, batch.tgt_out[:, i, None])[:, 0]                   # (B,)
    return picked.exp() if probabilities else picked


def _influence_made_like(signed: bool = False, probabilities: bool = False, all_rows: bool = False,
                         cumulative: bool = False, at_j: bool = False) -> Callable[..., torch.Tensor]:
    """A model answer for ``influence``, or one with a mistake."""
    def influence(model: nn.Module, batch: Batch, i: int, word: int) -> torch.Tensor:
        due = torch.ones_like(batch.tgt_out[:, i], dtype=torch.bool) if all_rows else (
            batch.tgt_out[:, i] != model.pad_id)                                  # (B,)
        tgt_in, out = batch.tgt_in.clone(), []
        with torch.no_grad():
            for j in range(batch.tgt_in.shape[1]):
                at = j if at_j else None
                base = _log_prob_due(model, batch, batch.tgt_in, i, probabilities, at)
                if not cumulative:
                    tgt_in = batch.tgt_in.clone()
                tgt_in[:, j] = word                                               # (B, T)
                change = _log_prob_due(model, batch, tgt_in, i, probabilities, at) - base
                out.append((change if signed else change.abs())[due].mean())
        return torch.stack(out)                                                   # (T,)
    return influence


def _random_batch(seed: int, lengths: list[int], n_src: int, n_tgt: int) -> Batch:
    """A batch of random sentence pairs (pad 0, <bos> 1, <eos> 2, words from 3), of these lengths."""
    generator = torch.Generator().manual_seed(seed)
    tgt = [torch.randint(3, n_tgt, (n,), generator=generator).tolist() for n in lengths]
    src = pad_sequences([torch.randint(3, n_src, (n + 1,), generator=generator).tolist()
                         for n in lengths])
    tgt_out = pad_sequences([[*t, 2] for t in tgt])
    return Batch(src=src, tgt_in=pad_sequences([[1, *t] for t in tgt]), tgt_out=tgt_out,
                 src_mask=padding_mask(src), tgt_mask=padding_mask(tgt_out),
                 src_lengths=padding_mask(src).sum(dim=1))


_INFLUENCE_RUNGS = (  # what each verification model switches on (the lab's rungs 0, 5 and 6)
    {}, {"positions": True, "num_heads": 2, "feed_forward": True, "residual_norm": True,
         "self_attention": True},
    {"positions": True, "num_heads": 2, "feed_forward": True, "residual_norm": True,
     "self_attention": True, "causal": True})


def _influence_inputs(hidden: bool, translator: type[nn.Module]) -> list[tuple]:
    seed = 212 if hidden else 12
    models = [built_with_seed(seed + k, lambda flags=flags: translator(11, 13, 16, **flags).eval())
              for k, flags in enumerate(_INFLUENCE_RUNGS)]
    if hidden:  # every sentence long enough; position 0; the last position, due in one sentence only
        return [(models[1], _random_batch(seed, [5, 5, 6], 11, 13), 0, 4),
                (models[2], _random_batch(seed + 1, [2, 6, 3, 6], 11, 13), 6, 5),
                (models[0], _random_batch(seed + 2, [4, 1], 11, 13), 2, 3)]
    batch = _random_batch(seed, [5, 2, 4, 3], 11, 13)     # position 3 is padding in two sentences
    return [(models[0], batch, 1, 7), (models[1], batch, 3, 7), (models[2], batch, 3, 7)]


@exercise("11.2", "Which inputs does a prediction read?", "Medium", 20,
          hint="for each j, start again from a copy of the true decoder inputs, put word at "
               "position j, and compare the log-probability of the word due at position i "
               "(tgt_out[:, i]) with and without the change; average its size, abs(), over the "
               "sentences that have a word due at position i",
          questions=[Question(
              "Run it on rungs 5 and 6 with the test sentences: what does each show about the inputs "
              "after position i, and what does that tell you about rung 5's failure?",
              ("rung 6's prediction at position i does not move at all when an input after i "
               "changes (exactly zero): the causal mask hides them",
               "rung 5's moves when input i + 1 changes, and for none of the inputs further ahead: "
               "it reads part of its prediction off the next input word, the word it is asked to "
               "predict",
               "greedy decoding never has that word, so what rung 5 learned to read is missing at "
               "test time: the lab's finding with random later inputs, now position by position"),
              2)])
def _input_influence(answer, hidden=False, *, translator: type[nn.Module]):
    verify_function(
        answer, reference=_influence_made_like(), inputs=_influence_inputs(hidden, translator),
        name="Exercise 11.2", hint=_input_influence.exercise.hint,
        mistakes={
            "the signed change averaged (a rise in one sentence cancels a fall in another)": (
                _influence_made_like(signed=True),
                "the size of the change is what counts: take abs() before the mean"),
            "probabilities compared, not log-probabilities": (
                _influence_made_like(probabilities=True),
                "compare the log_softmax of the logits, the quantity the loss uses"),
            "sentences with no word due at position i counted in the average": (
                _influence_made_like(all_rows=True),
                "keep the sentences where tgt_out[:, i] != model.pad_id"),
            "the replacements pile up (the changed inputs were not reset before the next j)": (
                _influence_made_like(cumulative=True),
                "start every j from a fresh copy of batch.tgt_in: one input changed at a time"),
            "the prediction read at position j, where the input changed, instead of at position i": (
                _influence_made_like(at_j=True),
                "the question is about one prediction, at position i, and every input j"),
        })


# ---------------------------------------------------------------------------------------------------
# 11.3 Which head reads the next word?
# ---------------------------------------------------------------------------------------------------
def _next_word_made_like(shift: int = 1, all_rows: bool = False, heads_averaged: bool = False,
                         cross: bool = False) -> Callable[..., torch.Tensor]:
    """A model answer: each head's mean decoder self-attention weight from query i on key i + shift,
    over the pairs (i, i + shift) of real tokens (or a slip of it)."""
    def next_word_weight(model: nn.Module, batch: Batch) -> torch.Tensor:
        tokens = batch.tgt_in                                                 # (B, T)
        real = tokens != model.pad_id
        h = model._embed(tokens, model.tgt_embed)                             # (B, T, C), as decode
        t = tokens.shape[1]
        with torch.no_grad():
            if cross:
                memory = model.encode(batch.src, batch.src_mask)
                weights = model.attention(h, memory, memory, key_mask=batch.src_mask,
                                          need_weights=True)[1]              # (B, H, T, S)
            else:
                future = causal_mask(t, tokens.device) if model.causal else None
                weights = model.decoder_attn(h, h, h, key_mask=real, attn_mask=future,
                                             need_weights=True)[1]           # (B, H, T, T)
        i = torch.arange(max(0, -shift), t - max(0, shift))                   # queries with a partner
        j = i + shift
        if cross:
            j = j.clamp(max=weights.shape[-1] - 1)
        pairs = torch.ones_like(real[:, i]) if all_rows else real[:, i] & real[:, j]   # (B, n)
        picked = weights[:, :, i, j] * pairs[:, None, :]                      # (B, H, n)
        mean = picked.sum(dim=(0, 2)) / pairs.sum()                           # (H,)
        return mean.mean() if heads_averaged else mean
    return next_word_weight


def _next_word_inputs(hidden: bool, translator: type[nn.Module]) -> list[tuple]:
    seed = 213 if hidden else 13
    flags = dict(_INFLUENCE_RUNGS[1], num_heads=4)                            # rung 5, 4 heads
    unmasked = built_with_seed(seed, lambda: translator(11, 13, 16, **flags).eval())
    masked = built_with_seed(seed + 1, lambda: translator(11, 13, 16, **flags, causal=True).eval())
    if hidden:
        return [(unmasked, _random_batch(seed, [6, 6, 6], 11, 13)),
                (masked, _random_batch(seed + 1, [1, 4], 11, 13))]
    batch = _random_batch(seed, [5, 2, 4, 3], 11, 13)
    return [(unmasked, batch), (masked, batch)]


@exercise("11.3", "Which head reads the next word?", "Medium", 20,
          hint="rebuild the decoder's first step by hand, as decode does: embed tgt_in (and add "
               "the positions if the model has them), then call model.decoder_attn with "
               "need_weights=True, the key mask of the real tokens and the causal mask if "
               "model.causal; the weight of query i on key i + 1 sits at [:, :, i, i + 1], "
               "averaged over the pairs where both tokens are real",
          questions=[Question(
              "Run it on rungs 5 and 6 with the test sentences: how much do the heads of rung 5 "
              "read the next word, and how does that fit what Exercise 11.2 measured?",
              ("rung 6 gives exactly 0 in every head: the causal mask hides key i + 1",
               "every head of rung 5 gives the next word a clear share of its weight, more than it "
               "gives the previous word",
               "Exercise 11.2 showed that rung 5's predictions move with input i + 1; the weights "
               "show where the model looks for it. A weight says where a head looks, the "
               "replacement test what the prediction uses: a head can look without its output "
               "mattering"), 2)])
def _next_word_heads(answer, hidden=False, *, translator: type[nn.Module]):
    verify_function(
        answer, reference=_next_word_made_like(), inputs=_next_word_inputs(hidden, translator),
        name="Exercise 11.3", hint=_next_word_heads.exercise.hint,
        mistakes={
            "the weight on the previous word (key i - 1), not on the next one (key i + 1)": (
                _next_word_made_like(shift=-1),
                "row i is the query; the next word is the column to the right, i + 1"),
            "pairs with padding counted in the average": (
                _next_word_made_like(all_rows=True),
                "average over the pairs (i, i + 1) where both tokens are real (not model.pad_id)"),
            "the heads averaged into one number (the exercise asks for one per head)": (
                _next_word_made_like(heads_averaged=True),
                "keep the head axis: return (H,), one mean per head"),
            "the cross-attention's weights (model.attention), not the decoder's self-attention "
            "(model.decoder_attn)": (
                _next_word_made_like(cross=True),
                "the next word is a decoder input: read model.decoder_attn, where the target "
                "tokens attend to each other"),
        })


# ---------------------------------------------------------------------------------------------------
# 11.4 Which rungs can see the word order?
# ---------------------------------------------------------------------------------------------------
_ORDER_MODELS = {
    "rung 0": {},
    "rung 3 without positions": {"num_heads": 4, "feed_forward": True},
    "rung 6 without positions": {"num_heads": 4, "feed_forward": True, "residual_norm": True,
                                 "self_attention": True, "causal": True},
    "rung 1": {"positions": True},
    "rung 6": {"positions": True, "num_heads": 4, "feed_forward": True, "residual_norm": True,
               "self_attention": True, "causal": True},
}


def _order_blindness(translator: type[nn.Module], hidden: bool) -> tuple[bool, ...]:
    """Each model of ``_ORDER_MODELS`` untrained: are its logits unchanged when every source sentence's
    real words are shuffled (the target unchanged)?"""
    generator = torch.Generator().manual_seed(111 if hidden else 11)
    vocab, d_model = (40, 24) if hidden else (30, 16)
    lengths = (12, 7, 3, 12, 9) if hidden else (9, 6, 9, 9)
    width = max(lengths)
    src = torch.randint(3, vocab, (len(lengths), width), generator=generator)
    src[torch.arange(width) >= torch.tensor(lengths)[:, None]] = 0          # padding at the end
    tgt_in = torch.randint(3, vocab, (len(lengths), 5 if hidden else 7), generator=generator)
    if hidden:
        tgt_in[1, 3:] = 0                                                   # a padded target too
    shuffled = src.clone()
    for row, n in enumerate(lengths):
        shuffled[row, :n] = src[row, torch.randperm(n, generator=generator)]
    measured = []
    for flags in _ORDER_MODELS.values():
        seed_everything(0)
        model = translator(vocab, vocab, d_model, **flags).eval()
        with torch.no_grad():
            logits = [model(Batch(s, tgt_in, tgt_in, s != 0, tgt_in != 0, (s != 0).sum(-1)))
                      for s in (src, shuffled)]
        measured.append(bool(torch.allclose(*logits, atol=1e-5)))
    return tuple(measured)


@exercise("11.4", "Which rungs can see the word order?", "Medium", 15, kind="prediction",
          hint="ask of each piece whether its output for a word depends on where the word stands; a "
               "weighted sum over the keys does not care about their order, and shuffling the input "
               "of self-attention only shuffles its output",
          questions=[Question(
              "Which piece decides? Explain your predictions.",
              ("only the positional encoding decides: it makes a word's vector depend on where it "
               "stands", "heads and the feed-forward network act on each word and each key separately",
               "self-attention without positions is permutation-equivariant: shuffling its inputs "
               "shuffles its outputs the same way", "the cross-attention's weighted sum does not "
               "depend on the order of its terms"), 2)])
def _order_blind(answer, hidden=False, *, translator: type[nn.Module]):
    names, hint = list(_ORDER_MODELS), _order_blind.exercise.hint

    def in_order():  # the learner's dict as a tuple in the order of the models; its form checked here
        said = answer()   # (runs with the module's own functions refused: use none of them here)
        if not isinstance(said, dict) or set(said) != set(names):
            raise CheckFailed(say("{name}: return a dict with exactly these keys: {keys}; got {got}",
                                  name="Exercise 11.4", keys=names, got=f"{said!r:.200}")
                              + say(HINT, hint=hint))
        if not all(isinstance(said[name], bool) for name in names):
            raise CheckFailed(say("{name}: each value must be True (logits unchanged) or False; got "
                                  "{got}", name="Exercise 11.4", got=f"{said!r:.200}")
                              + say(HINT, hint=hint))
        return tuple(said[name] for name in names)

    verify_prediction(
        in_order, name="Exercise 11.4", form=(bool,) * len(names),
        measure=lambda: _order_blindness(translator, hidden), hint=hint,
        labels=[f"{name}: logits unchanged when the source words are shuffled?" for name in names],
        misconceptions={
            0: "the belief that chapter 3's translator sees the word order (its prediction reads a "
               "weighted sum over the source words, and a sum does not depend on the order of its "
               "terms)",
            1: "the belief that several heads or a feed-forward network see the word order (both act "
               "on each word and each key separately)",
            2: "the belief that self-attention by itself sees the word order (without positions it "
               "only permutes its outputs along with its inputs)",
            3: "the belief that positions change nothing when the words are shuffled (a shuffled word "
               "gets the encoding of its new place, so its vector changes)",
            4: "the belief that the Transformer is as blind to the order as chapter 3's model (its "
               "positional encoding makes every word's vector depend on where it stands)",
        })


# ---------------------------------------------------------------------------------------------------
# 11.5 Is the step bigger than chance?
# ---------------------------------------------------------------------------------------------------
def _discordant(right_below: torch.Tensor, right_above: torch.Tensor) -> tuple[int, int]:
    """(gained, lost): the sentences only the upper rung gets right, and those only the lower one does."""
    return int((right_above & ~right_below).sum()), int((right_below & ~right_above).sum())


def _at_most(n: int, k: int) -> float:
    """P[Binomial(n, 1/2) <= k], exactly (integer sums, one correctly rounded division)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def _paired_made_like(one_sided: bool = False, uncapped: bool = False, all_sentences: bool = False,
                      swapped: bool = False) -> Callable[..., tuple[int, int, float]]:
    """A model answer: the exact two-sided McNemar (sign) test of two rungs on the same sentences (or a
    slip of it)."""
    def paired_step(right_below: torch.Tensor, right_above: torch.Tensor) -> tuple[int, int, float]:
        gained, lost = _discordant(right_below, right_above)
        n = len(right_below) if all_sentences else gained + lost
        if n == 0 and not uncapped:
            return gained, lost, 1.0
        p = _at_most(n, min(gained, lost)) * (1 if one_sided else 2)
        p = p if uncapped else min(1.0, p)
        return (lost, gained, p) if swapped else (gained, lost, p)
    return paired_step


def _chi_square(right_below: torch.Tensor, right_above: torch.Tensor, corrected: bool = False
                ) -> tuple[int, int, float]:
    """McNemar's chi-square approximation (with Edwards' continuity correction if ``corrected``)."""
    gained, lost = _discordant(right_below, right_above)
    statistic = max(0, abs(gained - lost) - (1 if corrected else 0)) ** 2 / (gained + lost)
    return gained, lost, math.erfc(math.sqrt(statistic / 2))       # chi-square with 1 degree of freedom


def _chi_square_corrected(right_below: torch.Tensor, right_above: torch.Tensor
                          ) -> tuple[int, int, float]:
    return _chi_square(right_below, right_above, corrected=True)


def _two_proportions(right_below: torch.Tensor, right_above: torch.Tensor) -> tuple[int, int, float]:
    """The unpaired route: a two-proportion z-test on the two exact-match rates."""
    gained, lost = _discordant(right_below, right_above)
    n = len(right_below)
    below, above = right_below.float().mean().item(), right_above.float().mean().item()
    pooled = (below + above) / 2
    z = (above - below) / math.sqrt(pooled * (1 - pooled) * 2 / n)
    return gained, lost, math.erfc(abs(z) / math.sqrt(2))


def _sentences(seed: int, both_right: int, gained: int, lost: int, both_wrong: int
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """(right_below, right_above) for sentences with these counts, in a shuffled order."""
    below = [True] * both_right + [False] * gained + [True] * lost + [False] * both_wrong
    above = [True] * both_right + [True] * gained + [False] * lost + [False] * both_wrong
    order = torch.randperm(len(below), generator=torch.Generator().manual_seed(seed))
    return torch.tensor(below)[order], torch.tensor(above)[order]


def _paired_inputs(hidden: bool) -> list[tuple[torch.Tensor, torch.Tensor]]:
    if hidden:  # other sizes, no disagreement at all, a lone one, large counts with tiny p, a tie
        return [_sentences(151, 180, 150, 90, 80), _sentences(152, 7, 0, 0, 0),
                _sentences(153, 2, 0, 0, 5), _sentences(154, 0, 1, 0, 0),
                _sentences(155, 440, 30, 0, 30), _sentences(156, 100, 45, 45, 310),
                _sentences(157, 6, 0, 3, 1)]
    return [_sentences(51, 20, 9, 2, 9), _sentences(52, 31, 3, 10, 16), _sentences(53, 9, 4, 4, 8)]


def _library_tests() -> list[tuple[object, str]]:
    """The ready-made tests of the statistics libraries installed here, to be refused."""
    routes = []
    for module, names in (("scipy.stats", ("binomtest", "binom_test")),
                          ("statsmodels.stats.contingency_tables", ("mcnemar",)),
                          ("statsmodels.stats.proportion", ("binom_test",))):
        try:
            found = importlib.import_module(module)
        except ImportError:
            continue
        routes += [(found, name) for name in names if hasattr(found, name)]
    return routes


@exercise("11.5", "Is the step bigger than chance?", "Medium", 20,
          hint="count gained with right_above & ~right_below and lost the other way round; only these "
               "n = gained + lost sentences count, each going either way with probability 1/2 if the "
               "rungs are equally good: add math.comb(n, i) / 2**n for i = 0..min(gained, lost), double "
               "it, cap it at 1, and return 1.0 when n == 0",
          questions=[Question(
              "Which steps of your ladder are beyond chance at p < 0.01, and which are not? What would "
              "you change to tell the small middle steps apart?",
              ("a paired test, each rung against the rung below on the same test sentences: only the "
               "sentences on which they disagree count",
               "names the steps of their own ladder beyond p < 0.01 (the large ones: positions, the "
               "heads, the fall at rung 5, the causal mask; on the authors' runs Add & Norm too) and "
               "those that are not: typically the feed-forward network at rung 3, whose verdict changes "
               "from one training seed to another",
               "several training seeds per rung, compared seed by seed, and more test sentences: the "
               "variation from seed to seed is a second source of noise that the test over sentences "
               "does not cover"), 2),
              Question(
                  "The capstone's write-up: for every rung where your prediction (Exercise 11.1) was off "
                  "by more than 0.2, a paragraph on what you expected and what the lab measured.",
                  ("names every rung whose prediction was off by more than 0.2",
                   "explains rung 5's collapse: the decoder without its mask leans on the next input "
                   "word (teacher-forced accuracy near 1 with the true inputs, clearly lower with "
                   "random later inputs, greedy exact match near 0)",
                   "explains what the causal mask restores at rung 6, and any other miss (such as "
                   "positions at rung 1) with the lab's own numbers"), 3)])
def _paired_step(answer, hidden=False):
    exact = "with few discordant sentences the approximation is off: sum math.comb(n, i) / 2**n exactly"
    verify_function(
        answer, reference=_paired_made_like(), inputs=_paired_inputs(hidden), name="Exercise 11.5",
        hint=_paired_step.exercise.hint, forbidden=_library_tests(),
        mistakes={
            "an unpaired test (a two-proportion z-test on the two exact-match rates)": (
                _two_proportions,
                "both rungs translate the same sentences: test the ones on which they disagree, not "
                "the two rates as if they came from different sentences"),
            "gained and lost swapped": (
                _paired_made_like(swapped=True),
                "gained counts the sentences that right_above has right and right_below wrong"),
            "a one-sided p-value (the factor 2 forgotten)": (
                _paired_made_like(one_sided=True),
                "the question is whether the rungs differ in either direction: double the smaller tail"),
            "a p-value above 1 (the cap at 1, or the case n = 0, forgotten)": (
                _paired_made_like(uncapped=True),
                "when gained == lost both tails hold the middle count: cap with min(1, ...), and "
                "return 1.0 when n == 0"),
            "n counted as all test sentences, not only those where the rungs disagree": (
                _paired_made_like(all_sentences=True),
                "a sentence both rungs get right, or both get wrong, says nothing about which is "
                "better: n = gained + lost"),
            "McNemar's chi-square (normal) approximation instead of the exact test": (
                _chi_square, exact),
            "McNemar's chi-square approximation with the continuity correction instead of the exact "
            "test": (_chi_square_corrected, exact),
        })
