"""Wrong answers to chapter 9's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 9.1", "the perplexity itself scaled by n_tokens / n_words (it is the loss that "
          "adds up, not the perplexity)", '''
def per_word_perplexity(token_ppl, n_tokens, n_words):
    return token_ppl * n_tokens / n_words
'''),
    Wrong("Exercise 9.1", "the ratio turned upside down (n_words / n_tokens)", '''
def per_word_perplexity(token_ppl, n_tokens, n_words):
    return math.exp(math.log(token_ppl) * n_words / n_tokens)
'''),
    Wrong("Exercise 9.2", "the token that reaches p dropped", '''
def keep_top_p(logits, p):
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_ranked = probs.cumsum(dim=-1) < p      # stops one token short of p
    keep = torch.zeros_like(keep_ranked).scatter(-1, order, keep_ranked)
    return logits.masked_fill(~keep, float("-inf"))
'''),
    Wrong("Exercise 9.2", "probabilities added up in vocabulary order", '''
def keep_top_p(logits, p):
    probs = logits.softmax(dim=-1)
    keep = probs.cumsum(dim=-1) - probs < p     # forgot to sort first
    return logits.masked_fill(~keep, float("-inf"))
'''),
    Wrong("Exercise 9.2", "the decision made in ranked order applied to the scores in "
          "vocabulary order", '''
def keep_top_p(logits, p):
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep = probs.cumsum(dim=-1) - probs < p     # ranked order ...
    return logits.masked_fill(~keep, float("-inf"))   # ... used as if unsorted
'''),
    Wrong("Exercise 9.2", "the raw scores added up instead of their probabilities", '''
def keep_top_p(logits, p):
    scores, order = logits.sort(dim=-1, descending=True)
    keep_ranked = scores.cumsum(dim=-1) - scores < p
    keep = torch.zeros_like(keep_ranked).scatter(-1, order, keep_ranked)
    return logits.masked_fill(~keep, float("-inf"))
'''),
    Wrong("Exercise 9.3", "keys T_k / stride apart averaged together", '''
def memory_compressed_attention(q, k, v, stride):
    b, t_k, d = k.shape
    k_c = k.view(b, stride, t_k // stride, d).mean(dim=1)
    v_c = v.view(b, stride, t_k // stride, d).mean(dim=1)
    return scaled_dot_product_attention(q, k_c, v_c)[0]
'''),
    Wrong("Exercise 9.3", MISTAKES["unscaled"], '''
def memory_compressed_attention(q, k, v, stride):
    b, t_k, d = k.shape
    k_c = k.view(b, t_k // stride, stride, d).mean(dim=2)
    v_c = v.view(b, t_k // stride, stride, d).mean(dim=2)
    return torch.softmax(q @ k_c.transpose(1, 2), dim=-1) @ v_c
'''),
    Wrong("Exercise 9.3", MISTAKES["softmax_axis"], '''
def memory_compressed_attention(q, k, v, stride):
    b, t_k, d = k.shape
    k_c = k.view(b, t_k // stride, stride, d).mean(dim=2)
    v_c = v.view(b, t_k // stride, stride, d).mean(dim=2)
    scores = q @ k_c.transpose(1, 2) / math.sqrt(d)          # (B, T_q, T_k / s)
    return torch.softmax(scores, dim=1) @ v_c
'''),
    Wrong("Exercise 9.3", "the keys and values summed over each group instead of averaged", '''
def memory_compressed_attention(q, k, v, stride):
    b, t_k, d = k.shape
    k_c = k.view(b, t_k // stride, stride, d).sum(dim=2)
    v_c = v.view(b, t_k // stride, stride, d).sum(dim=2)
    return scaled_dot_product_attention(q, k_c, v_c)[0]
'''),
    Wrong("Exercise 9.4", "the shares computed from e^lse itself", '''
def merge_attention(out_a, lse_a, out_b, lse_b):
    sum_a, sum_b = lse_a.exp(), lse_b.exp()     # each part's sum of exponentials
    return (sum_a * out_a + sum_b * out_b) / (sum_a + sum_b)
'''),
    Wrong("Exercise 9.4", "the two outputs averaged with equal weights", '''
def merge_attention(out_a, lse_a, out_b, lse_b):
    return (out_a + out_b) / 2                  # each part is already normalised
'''),
    Wrong("Exercise 9.4", "the shares not normalised", '''
def merge_attention(out_a, lse_a, out_b, lse_b):
    m = torch.maximum(lse_a, lse_b)             # the online softmax's running max
    return torch.exp(lse_a - m) * out_a + torch.exp(lse_b - m) * out_b
'''),
    Wrong("Exercise 9.4", "the shares swapped", '''
def merge_attention(out_a, lse_a, out_b, lse_b):
    lse = torch.logaddexp(lse_a, lse_b)
    return torch.exp(lse_b - lse) * out_a + torch.exp(lse_a - lse) * out_b
'''),
    Wrong("Exercise 9.5", "the belief that a temperature changes which word is the most likely", '''
def predicted_distinct_sentences():
    return 20                  # temperature 2 flattens the distribution: all differ
'''),
    Wrong("Exercise 9.5", "the belief that a temperature changes which word is the most likely", '''
def predicted_distinct_sentences():
    return 7                   # flatter, so a few different sentences
'''),
    Wrong("Exercise 9.6", "the merges replayed once each, in list order", '''
def encode_by_rank(word, merges):
    symbols = [*word[:-1], word[-1] + "</w>"]
    for a, b in merges:                         # as encode_word does
        out, at = [], 0
        while at < len(symbols):
            if at + 1 < len(symbols) and (symbols[at], symbols[at + 1]) == (a, b):
                out.append(a + b)
                at += 2
            else:
                out.append(symbols[at])
                at += 1
        symbols = out
    return symbols
'''),
    Wrong("Exercise 9.6", "the latest-learned pair merged first", '''
def encode_by_rank(word, merges):
    rank = {tuple(p): r for r, p in enumerate(merges)}
    symbols = [*word[:-1], word[-1] + "</w>"]
    while True:
        listed = [(rank[p], k) for k, p in enumerate(zip(symbols, symbols[1:])) if p in rank]
        if not listed:
            return symbols
        _, k = max(listed)                      # the newest merge is the best one
        a, b = symbols[k], symbols[k + 1]
        out, at = [], 0
        while at < len(symbols):
            if symbols[at:at + 2] == [a, b]:
                out.append(a + b)
                at += 2
            else:
                out.append(symbols[at])
                at += 1
        symbols = out
'''),
    Wrong("Exercise 9.6", "the leftmost mergeable pair merged first", '''
def encode_by_rank(word, merges):
    listed = {tuple(p) for p in merges}
    symbols = [*word[:-1], word[-1] + "</w>"]
    while True:
        found = [k for k, p in enumerate(zip(symbols, symbols[1:])) if p in listed]
        if not found:
            return symbols
        k = found[0]                            # read the word from the left
        a, b = symbols[k], symbols[k + 1]
        out, at = [], 0
        while at < len(symbols):
            if symbols[at:at + 2] == [a, b]:
                out.append(a + b)
                at += 2
            else:
                out.append(symbols[at])
                at += 1
        symbols = out
'''),
    Wrong("Exercise 9.6", "no </w> marker on the last character", '''
def encode_by_rank(word, merges):
    rank = {}
    for r, p in enumerate(merges):
        rank.setdefault(tuple(p), r)
    symbols = list(word)                        # the characters, nothing more
    while True:
        listed = [(rank[p], k) for k, p in enumerate(zip(symbols, symbols[1:])) if p in rank]
        if not listed:
            return symbols
        _, k = min(listed)
        a, b = symbols[k], symbols[k + 1]
        out, at = [], 0
        while at < len(symbols):
            if symbols[at:at + 2] == [a, b]:
                out.append(a + b)
                at += 2
            else:
                out.append(symbols[at])
                at += 1
        symbols = out
'''),
]
