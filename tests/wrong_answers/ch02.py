"""Wrong answers to chapter 2's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 2.1", "the belief that shifting every key changes the weights (it adds the "
          "same q . u to every score, and the softmax ignores a shift shared by all scores)", '''
def my_predictions():
    return False, False, 0.25
'''),
    Wrong("Exercise 2.1", "the belief that a zero query gives no weight at all (four equal "
          "scores share the weight equally)", '''
def my_predictions():
    return True, False, 0.0
'''),
    Wrong("Exercise 2.2", "only the diagonal of the softmax's Jacobian, diag(p), without "
          "- p p^T", '''
def lookup_jacobian(query, keys, values):
    p = torch.softmax(keys @ query, dim=0)
    return values.T @ torch.diag(p) @ keys       # d p_i / d e_i = p_i, forgot the rest
'''),
    Wrong("Exercise 2.2", "the softmax left out of the chain rule (values.T @ keys)", '''
def lookup_jacobian(query, keys, values):
    return values.T @ keys                       # as if the weights were the scores
'''),
    Wrong("Exercise 2.3", MISTAKES["softmax_axis"], '''
def column_projected_attention(Xc, Mc, W_Q, W_K, W_V):
    Qc, Kc, Vc = W_Q.T @ Xc, W_K.T @ Mc, W_V.T @ Mc
    A_c = torch.softmax(Kc.T @ Qc / math.sqrt(W_Q.shape[1]), dim=-1)   # the habit: dim=-1
    return Vc @ A_c
'''),
    Wrong("Exercise 2.3", "the row-convention matrices used as they are, W_Q @ Xc (in "
          "columns the projection is W_Q^T x)", '''
def column_projected_attention(Xc, Mc, W_Q, W_K, W_V):
    Qc, Kc, Vc = W_Q @ Xc, W_K @ Mc, W_V @ Mc
    A_c = torch.softmax(Kc.T @ Qc / math.sqrt(W_Q.shape[1]), dim=0)
    return Vc @ A_c
'''),
    Wrong("Exercise 2.4", "the Euclidean norm ||w||_2 in place of ||w||_1 (the sum of the "
          "|w_k|)", '''
def additive_ceiling(w, T_k):
    a = w.norm().item()                          # "the size of w"
    return 1.0 / (1.0 + (T_k - 1) * math.exp(-2 * a))
'''),
    Wrong("Exercise 2.4", "the other keys at score 0 in place of -a, exp(a) / (exp(a) + T_k - 1)",
          '''
def additive_ceiling(w, T_k):
    a = w.abs().sum().item()
    return math.exp(a) / (math.exp(a) + T_k - 1)   # the rivals left at a neutral 0
'''),
    Wrong("Exercise 2.4", "the sum of the w_k in place of the sum of their sizes |w_k|", '''
def additive_ceiling(w, T_k):
    a = w.sum().item()                           # every unit at +1
    return 1.0 / (1.0 + (T_k - 1) * math.exp(-2 * a))
'''),
    Wrong("Exercise 2.4", "T_k ignored: the ceiling for two keys, 1 / (1 + exp(-2a))", '''
def additive_ceiling(w, T_k):
    a = w.abs().sum()
    return torch.sigmoid(2 * a).item()           # the best key against one rival
'''),
]
