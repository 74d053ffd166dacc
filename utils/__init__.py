"""The shared package of the course 'Attention, from seq2seq to the Transformer'.

Modules, one per subject, imported by the chapter notebooks:

- ``utils.runtime``     device and CPU-thread choice, seeding, environment report
- ``utils.data``        the synthetic language pair, vocabularies, batching, padding masks
- ``utils.attention``   scaled dot-product attention, masks, multi-head attention (chapters 2-5)
- ``utils.positional``  sinusoidal and learned positional encodings (chapter 6)
- ``utils.rnn``         GRU encoder-decoder with and without attention (chapter 1)
- ``utils.seq2seq``     an attention-only translator with no recurrence (chapter 3)
- ``utils.transformer`` encoder, decoder and the full Transformer (chapters 7-8)
- ``utils.translation`` greedy and beam-search decoding, training on a translation task (chapter 8)
- ``utils.efficient``   the fused attention fast path, timing and memory measurements (chapter 9)
- ``utils.gpt``         a tiny decoder-only (GPT-style) model, sampling, a grammar checker (chapter 9)
- ``utils.subwords``    byte-pair encoding, subwords learned on the course's sentences (chapter 9)
- ``utils.corpus``      a loader for a real parallel corpus (Tatoeba English-French), for online readers
- ``utils.train``       a training loop with progress bars, evaluation helpers
- ``utils.plots``       attention heatmaps and other figures, readable at the book's column width
- ``utils.views``       interactive attention views (head view, model view) of the course's own models
- ``utils.diagrams``    the visual vocabulary of the architecture diagrams (colours, boxes, arrows)
- ``utils.architectures`` the architecture diagrams, drawn from a model's own configuration
- ``utils.checks``      auto-checks for the exercises, with hints
- ``utils.glue``        measured numbers recorded for the book's prose (myst-nb's glue, without myst-nb)

Shape legend used in every module: B batch, T tokens (T_q queries, T_k keys), H heads,
D head size, C = H * D = d_model.
"""

from utils.runtime import choose_threads, get_device, seed_everything, show_source

__all__ = ["choose_threads", "get_device", "seed_everything", "show_source"]
__version__ = "0.1.0"  # the release; set in pyproject.toml, written by scripts/course_address.py
__course__ = "attention-course"  # tells this course's `utils` from other packages named utils
