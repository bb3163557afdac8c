#!/usr/bin/env python3
# The figures tests/registry/drift_stats_test.cc holds, computed with SciPy and NumPy (Debian 12:
# apt-get install python3-scipy; /usr/bin/python3 tests/registry/drift_reference.py). Not run
# by the tests: the figures are kept there, so the test needs no Python.
import numpy as np
from scipy import stats
from scipy.spatial.distance import jensenshannon
def gen(n, mul, mod, div, shift):
    return np.array([((i * mul) % mod) / div + shift for i in range(n)], dtype=float)
cases = {
  "shifted": (gen(200, 7919, 1000, 100.0, 0.0), gen(150, 104729, 997, 90.0, 1.5)),
  "same": (gen(300, 7919, 1000, 100.0, 0.0), gen(300, 6841, 1000, 100.0, 0.0)),
  "small": (np.array([1.0, 2, 2, 3, 4, 5, 5, 5, 9]), np.array([2.0, 3, 3, 4, 7, 8, 8])),
}
for name, (ref, cur) in cases.items():
    d = stats.ks_2samp(ref, cur).statistic
    n, m = len(ref), len(cur)
    p = stats.kstwobign.sf(np.sqrt(n * m / (n + m)) * d)
    lo, hi = min(ref.min(), cur.min()), max(ref.max(), cur.max())
    r, _ = np.histogram(ref, bins=10, range=(lo, hi)); c, _ = np.histogram(cur, bins=10, range=(lo, hi))
    r = np.maximum(r / n, 1e-4); c = np.maximum(c / m, 1e-4)
    psi = np.sum((c - r) * np.log(c / r))
    js = jensenshannon(r, c)
    w = stats.wasserstein_distance(ref, cur)
    wn = w / np.std(ref, ddof=1)
    print(f'{{"{name}", {d!r}, {p!r}, {psi!r}, {js!r}, {w!r}, {wn!r}}},')

# Histograms (registry::drift_stats of two Histograms): both samples of "shifted" counted in
# the 12 bins of edges 0, 1, ..., 12; each bin's count at its centre.
edges = np.arange(0, 13, dtype=float)
centres = (edges[:-1] + edges[1:]) / 2
ref, cur = cases["shifted"]
r, _ = np.histogram(ref, bins=edges); c, _ = np.histogram(cur, bins=edges)
r = r.astype(float); c = c.astype(float)
n, m = r.sum(), c.sum()
d = np.max(np.abs(np.cumsum(r) / n - np.cumsum(c) / m))
p = stats.kstwobign.sf(np.sqrt(n * m / (n + m)) * d)
rs = np.maximum(r / n, 1e-4); cs = np.maximum(c / m, 1e-4)
psi = np.sum((cs - rs) * np.log(cs / rs))
js = jensenshannon(rs, cs)
w = stats.wasserstein_distance(centres, centres, r, c)
mu = np.sum(r * centres) / n
wn = w / np.sqrt(np.sum(r * (centres - mu) ** 2) / (n - 1))
print("histogram counts", list(r), list(c))
print(f'{{"histograms", {d!r}, {p!r}, {psi!r}, {js!r}, {w!r}, {wn!r}}},')
