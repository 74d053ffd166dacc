"""GRU encoder-decoders with and without attention, the models of chapter 1.

Shape legend: B batch, S source tokens, T target tokens, d_emb embedding size, C hidden size of the GRUs
(d_model; in shape comments C is always this width, never the context vector c = h_S of the prose),
V vocabulary size. Row vectors throughout; masks are bool, True = real token.

Two distinct models, same encoder, same training recipe:

- ``Seq2SeqGRU``: the encoder's last state h_S is the single context c of every decoder step
  (Cho et al., 2014; Sutskever et al., 2014): y_i = f(c, y_1 .. y_{i-1}).
- ``AttentionSeq2SeqGRU``: a context c_i recomputed at every decoder step by ``RNNAttention``
  (q_i = s_i W_Q, k_j = h_j W_K, v_j = h_j W_V, alpha_i = softmax(K q_i^T), c_i = sum_j alpha_ij v_j),
  in the style of Luong et al. (2015), with the query taken from the current decoder state.

API used by later chapters (chapter 8 compares the Transformer with the RNN with attention):

    from utils.data import load_synthetic
    from utils.rnn import train_rnn_translator
    from utils.train import evaluate_translation
    data = load_synthetic(n_train=3000)
    run = train_rnn_translator(data, attention=True, epochs=8)      # -> TrainedTranslator
    model, history, seconds = run                                   # or run.model, run.seconds
    scores = evaluate_translation(model.translate, data.test, data.src_vocab, data.tgt_vocab)
    scores.exact_match, scores.binned([5, 10, 15, 20, 30])

The defaults are chapter 1's settings: on ``load_synthetic(n_train=3000)`` each model trains in about
10 s of one CPU core, and the attention model reaches about 0.95 exact match on the test split while
the model without attention stays near 0.2 (it fails on every sentence longer than about ten words).
Small GRUs run fastest on one thread: ``torch.set_num_threads(1)`` on a CPU.

``model.translate(batch)`` decodes greedily (feeding each output back in) and returns (B, T_out) ids;
``model.translate(batch, return_weights=True)`` also returns the attention weights (B, T_out, S).
On a GPU: ``train_rnn_translator(data, device="cuda")``, then pass ``device="cuda"`` to
``evaluate_translation`` so that its batches are moved there too.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from utils.attention import check_mask_rows
from utils.data import Batch, TranslationData, batches, check_token_ids
from utils.runtime import seed_everything
from utils.train import History, fit


# ---------------------------------------------------------------------------------------------------
# Encoder (section 1): h_1 .. h_S
# ---------------------------------------------------------------------------------------------------
class GRUEncoder(nn.Module):
    """Embed the source and run a GRU over it: all states h_1..h_S and the last real state h_S."""

    def __init__(self, vocab_size: int, d_emb: int, d_model: int, pad_id: int = 0):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_emb, padding_idx=pad_id)
        self.gru = nn.GRU(d_emb, d_model, batch_first=True)

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """src (B, S) ids, src_lengths (B,) -> states (B, S, C), last real state h_S (B, C)."""
        check_token_ids(src, "src")
        b, s = src.shape
        if src_lengths.shape != (b,) or src_lengths.min() < 1 or src_lengths.max() > s:
            raise ValueError(f"src_lengths must be (B,) = ({b},) with values in 1..{s} (the padded "
                             f"length), got {src_lengths.tolist()}")
        states, _ = self.gru(self.embed(src))  # (B, S, d_emb) -> (B, S, C)
        # Padding comes after the real tokens, so the state at position length-1 has read exactly the
        # sentence: that is h_S. States at padded positions are never used (the masks hide them).
        rows = torch.arange(b, device=src.device)
        last = states[rows, src_lengths.to(src.device) - 1]  # (B, C)
        return states, last


# ---------------------------------------------------------------------------------------------------
# Attention inside the RNN (section 2), written as Q, K, V
# ---------------------------------------------------------------------------------------------------
class RNNAttention(nn.Module):
    """Context c_i = sum_j alpha_ij v_j with alpha_i = softmax_j(q_i . k_j), q_i = s_i W_Q, k_j = h_j W_K,
    v_j = h_j W_V (chapter 1, section 2). No 1/sqrt(d_k) scaling here: chapter 2 adds it."""

    def __init__(self, d_dec: int, d_enc: int, d_k: int, d_v: int):
        super().__init__()
        self.w_q = nn.Linear(d_dec, d_k, bias=False)  # W_Q
        self.w_k = nn.Linear(d_enc, d_k, bias=False)  # W_K
        self.w_v = nn.Linear(d_enc, d_v, bias=False)  # W_V

    def forward(self, s: torch.Tensor, h: torch.Tensor,
                src_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Decoder states s (B, T, C) and encoder states h (B, S, C), src_mask (B, S) True at real tokens
        -> contexts c (B, T, d_v) and weights alpha (B, T, S), each row summing to 1 over the source."""
        if src_mask.dtype != torch.bool or src_mask.shape != h.shape[:2]:
            raise ValueError(f"src_mask must be a bool (B, S) = {tuple(h.shape[:2])} mask, True at real "
                             f"tokens; got {src_mask.dtype} {tuple(src_mask.shape)}")
        check_mask_rows(src_mask, "src_mask")  # a sentence with no real token: softmax would be 0/0
        # 1. gather the encoder states and turn them into keys and values
        k = self.w_k(h)  # k_j = h_j W_K: (B, S, C) -> (B, S, d_k)
        v = self.w_v(h)  # v_j = h_j W_V: (B, S, C) -> (B, S, d_v)
        q = self.w_q(s)  # q_i = s_i W_Q: (B, T, C) -> (B, T, d_k)
        # 2. score every source position for every decoder step: K q_i^T, S scores per step
        scores = q @ k.transpose(1, 2)  # (B, T, d_k) @ (B, d_k, S) -> (B, T, S)
        scores = scores.masked_fill(~src_mask[:, None, :], float("-inf"))  # padding gets weight 0
        # 3. softmax over the source positions: each row alpha_{i,:} sums to 1
        alpha = torch.softmax(scores, dim=-1)  # (B, T, S)
        # 4. weighted sum of the values
        c = alpha @ v  # (B, T, S) @ (B, S, d_v) -> (B, T, d_v)
        return c, alpha


# ---------------------------------------------------------------------------------------------------
# The two encoder-decoders
# ---------------------------------------------------------------------------------------------------
class EncoderMemory(NamedTuple):
    """What the decoder may read: every encoder state, the last real one, and which positions are real."""

    states: torch.Tensor  # (B, S, C): h_1 .. h_S
    last: torch.Tensor  # (B, C): h_S, the last real state of each sentence
    src_mask: torch.Tensor  # (B, S) bool, True at real tokens


class Seq2SeqGRU(nn.Module):
    """GRU encoder-decoder without attention: one fixed context c = h_S for every output (section 1)."""

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, d_emb: int = 32, d_model: int = 64,
                 pad_id: int = 0, bos_id: int = 1, eos_id: int = 2):
        super().__init__()
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.encoder = GRUEncoder(src_vocab_size, d_emb, d_model, pad_id)
        self.embed = nn.Embedding(tgt_vocab_size, d_emb, padding_idx=pad_id)
        self.gru = nn.GRU(d_emb + d_model, d_model, batch_first=True)  # input [y_{i-1}; c]
        self.out = nn.Linear(2 * d_model, tgt_vocab_size)  # logits from [s_i; c]

    def encode(self, batch: Batch) -> EncoderMemory:
        """Run the encoder over ``batch.src``: states (B, S, C), h_S (B, C) and the source mask (B, S)."""
        states, last = self.encoder(batch.src, batch.src_lengths)
        return EncoderMemory(states, last, batch.src_mask)

    def decode(self, y_prev: torch.Tensor, state: torch.Tensor, memory: EncoderMemory
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """y_prev (B, T) ids, state (1, B, C) -> logits (B, T, V), new state, no attention weights."""
        t = y_prev.shape[1]
        ctx = memory.last[:, None, :].expand(-1, t, -1)  # the same c = h_S at every step: (B, T, C)
        s, state = self.gru(torch.cat([self.embed(y_prev), ctx], dim=-1), state)  # (B, T, C)
        return self.out(torch.cat([s, ctx], dim=-1)), state, None  # (B, T, 2C) -> (B, T, V)

    def forward(self, batch: Batch) -> torch.Tensor:
        """Teacher forcing: logits (B, T, V) for ``batch.tgt_in`` (the decoder sees the true y_{<j})."""
        check_token_ids(batch.tgt_in, "batch.tgt_in")
        memory = self.encode(batch)
        logits, _, _ = self.decode(batch.tgt_in, memory.last[None], memory)  # s_0 = h_S
        return logits

    @torch.no_grad()
    def translate(self, batch: Batch, max_len: int | None = None,
                  return_weights: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Greedy decoding from <bos>, one token per step, each output fed back: (B, T_out) ids.

        Stops when every sentence has produced <eos> or after ``max_len`` steps (default S + 5);
        positions after a sentence's <eos> hold <pad>. With ``return_weights`` also returns the
        attention weights (B, T_out, S) (attention models only).
        """
        if return_weights and not isinstance(self, AttentionSeq2SeqGRU):
            raise ValueError(f"{type(self).__name__} has no attention weights to return; "
                             "use an AttentionSeq2SeqGRU")
        was_training = self.training
        self.eval()
        b = batch.src.shape[0]
        max_len = max_len if max_len is not None else batch.src.shape[1] + 5
        memory = self.encode(batch)
        state = memory.last[None]  # s_0 = h_S: (1, B, C)
        y = torch.full((b, 1), self.bos_id, dtype=torch.long, device=batch.src.device)
        outputs, weights = [], []
        done = torch.zeros(b, dtype=torch.bool, device=batch.src.device)
        for _ in range(max_len):
            logits, state, alpha = self.decode(y, state, memory)  # one step: (B, 1, V)
            y = logits.argmax(dim=-1).masked_fill(done[:, None], self.pad_id)  # (B, 1), fed back next
            outputs.append(y)
            if alpha is not None:
                weights.append(alpha)  # (B, 1, S)
            done |= y[:, 0] == self.eos_id
            if done.all():
                break
        self.train(was_training)
        ids = torch.cat(outputs, dim=1)  # (B, T_out)
        return (ids, torch.cat(weights, dim=1)) if return_weights else ids


class AttentionSeq2SeqGRU(Seq2SeqGRU):
    """GRU encoder-decoder with attention: a new context c_i at every decoder step (section 2)."""

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, d_emb: int = 32, d_model: int = 64,
                 pad_id: int = 0, bos_id: int = 1, eos_id: int = 2):
        super().__init__(src_vocab_size, tgt_vocab_size, d_emb, d_model, pad_id, bos_id, eos_id)
        self.gru = nn.GRU(d_emb, d_model, batch_first=True)  # s_i from y_{i-1} and s_{i-1}
        self.attention = RNNAttention(d_dec=d_model, d_enc=d_model, d_k=d_model, d_v=d_model)

    def decode(self, y_prev: torch.Tensor, state: torch.Tensor, memory: EncoderMemory
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """y_prev (B, T) ids, state (1, B, C) -> logits (B, T, V), new state, weights alpha (B, T, S)."""
        s, state = self.gru(self.embed(y_prev), state)  # decoder states s_i: (B, T, C)
        c, alpha = self.attention(s, memory.states, memory.src_mask)  # c_i: (B, T, C), (B, T, S)
        return self.out(torch.cat([s, c], dim=-1)), state, alpha  # (B, T, 2C) -> (B, T, V)


# ---------------------------------------------------------------------------------------------------
# Training in one call (used by chapters 1 and 8)
# ---------------------------------------------------------------------------------------------------
def translation_loss(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Mean cross-entropy of the teacher-forced logits against ``batch.tgt_out``, padding ignored."""
    logits = model(batch)  # (B, T, V)
    return F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=model.pad_id)


class TrainedTranslator(NamedTuple):
    """What ``train_rnn_translator`` returns: the model, its training history and the seconds taken."""

    model: Seq2SeqGRU
    history: History
    seconds: float


def train_rnn_translator(data: TranslationData, attention: bool = True, *, epochs: int = 8,
                         d_emb: int = 32, d_model: int = 64, batch_size: int = 64, lr: float = 6e-3,
                         seed: int = 0, device: torch.device | str = "cpu",
                         progress: bool = True) -> TrainedTranslator:
    """Build ``AttentionSeq2SeqGRU`` (or ``Seq2SeqGRU`` if ``attention`` is False) and train it with Adam
    on ``data.train`` by teacher forcing; the same ``seed`` gives the same model."""
    if epochs < 1 or batch_size < 1 or lr <= 0:
        raise ValueError(f"need epochs >= 1, batch_size >= 1 and lr > 0; got epochs={epochs}, "
                         f"batch_size={batch_size}, lr={lr}")
    if not data.train:
        raise ValueError("data.train is empty: nothing to train on")
    seed_everything(seed)  # plus $COURSE_SEED, as everywhere in the course
    cls = AttentionSeq2SeqGRU if attention else Seq2SeqGRU
    model = cls(len(data.src_vocab), len(data.tgt_vocab), d_emb=d_emb, d_model=d_model,
                pad_id=data.tgt_vocab.pad_id, bos_id=data.tgt_vocab.bos_id,
                eos_id=data.tgt_vocab.eos_id).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    start = time.perf_counter()
    history = fit(
        model,
        lambda epoch: (b.to(device) for b in batches(data.train, data.src_vocab, data.tgt_vocab,
                                                     batch_size, seed=seed + epoch)),
        translation_loss, optimizer, epochs=epochs, progress=progress,
        desc=f"{cls.__name__} ({'with' if attention else 'no'} attention)",
    )
    return TrainedTranslator(model, history, time.perf_counter() - start)
