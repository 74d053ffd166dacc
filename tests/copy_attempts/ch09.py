"""Copying submissions to chapter 9's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    # the chapter's perplexity cell, pasted: exp of the mean loss per token, with no conversion
    Copy("Exercise 9.1", "pasted", '''
def per_word_perplexity(token_ppl, n_tokens, n_words):
    nll = math.log(token_ppl) * n_tokens
    return math.exp(nll / n_tokens)
'''),
    Copy("Exercise 9.1", "package", '''
from utils.exercises.ch09 import _per_word as per_word_perplexity
'''),
    # the chapter's top-k filtering, from the generation section, in place of top-p
    Copy("Exercise 9.2", "pasted", '''
from utils.gpt import top_k_filter

def keep_top_p(logits, p):
    return top_k_filter(logits, 5)
'''),
    Copy("Exercise 9.2", "package", '''
from utils.exercises import ch09

def keep_top_p(logits, p):
    return ch09._nucleus_by_loop(logits, p)
'''),
    Copy("Exercise 9.2", "package", '''
import utils.exercises.ch09 as reference

keep_top_p = reference._nucleus_made_like()
'''),
    # the chapter's fused attention pasted without the compression
    Copy("Exercise 9.3", "pasted", '''
def memory_compressed_attention(q, k, v, stride):
    return fused_attention(q, k, v)
'''),
    Copy("Exercise 9.3", "package", '''
from utils.exercises.ch09 import _pooled_attention

def memory_compressed_attention(q, k, v, stride):
    return _pooled_attention(q, k, v, stride)
'''),
    # the shares through e^lse: the text asks for a result that stays finite at lse = 1000
    Copy("Exercise 9.4", "forbidden", '''
def merge_attention(out_a, lse_a, out_b, lse_b):
    total = lse_a.exp() + lse_b.exp()
    return (lse_a.exp() * out_a + lse_b.exp() * out_b) / total
'''),
    Copy("Exercise 9.4", "package", '''
from utils.exercises.ch09 import _merged as merge_attention
'''),
    Copy("Exercise 9.4", "package", '''
from utils.exercises import ch09

def merge_attention(out_a, lse_a, out_b, lse_b):
    return ch09._merged(out_a, lse_a, out_b, lse_b)
'''),
    # a "prediction" that runs the experiment first: the text asks for it before anything runs
    Copy("Exercise 9.5", "forbidden", '''
def predicted_distinct_sentences():
    fresh_vocab = Vocab(SOURCE_WORDS)
    fresh = TinyGPT(GPTConfig(vocab_size=len(fresh_vocab), d_model=32, num_heads=2,
                              num_layers=1, d_ff=64, dropout=0.0, max_len=16))
    drawn = sample_sentences(fresh, fresh_vocab, 20, temperature=2.0, top_k=1, seed=0)
    return len({tuple(words) for words in drawn})
'''),
    Copy("Exercise 9.5", "forbidden", '''
import utils.gpt

def predicted_distinct_sentences():
    model = TinyGPT(GPTConfig(vocab_size=40, d_model=32, num_heads=2, num_layers=1,
                              d_ff=64, dropout=0.0, max_len=16))
    ids = utils.gpt.generate(model, torch.zeros(20, 1, dtype=torch.long), 15,
                             temperature=2.0, top_k=1, seed=0)
    return len({tuple(row) for row in ids.tolist()})
'''),
    Copy("Exercise 9.5", "package", '''
from utils.exercises import ch09

def predicted_distinct_sentences():
    return ch09._distinct_top_1_sentences(5)
'''),
    # the chapter's encoder called: replaying the merges in order, or the package's learner
    Copy("Exercise 9.6", "forbidden", '''
from utils.subwords import BPE

def encode_by_rank(word, merges):
    return BPE(frozenset(word), tuple(merges)).encode_word(word)
'''),
    Copy("Exercise 9.6", "forbidden", '''
import utils.subwords

def encode_by_rank(word, merges):
    symbols = (*word[:-1], word[-1] + utils.subwords.END)
    for pair in merges:
        symbols = utils.subwords._merge(symbols, tuple(pair))
    return list(symbols)
'''),
    Copy("Exercise 9.6", "package", '''
from utils.exercises import ch09

encode_by_rank = ch09._by_rank_made_like()
'''),
    Copy("Exercise 9.6", "package", '''
from utils.exercises.ch09 import _by_rank_made_like

def encode_by_rank(word, merges):
    return _by_rank_made_like()(word, merges)
'''),
]
