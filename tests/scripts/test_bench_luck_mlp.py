"""The learned-value experiment of scripts/bench_luck_mlp.py: its numba forward pass is the network torch trained.

The kernel is checked against a plain numpy forward pass on the weights in the layout ``train`` hands it
((in, out) matrices), on sparse 0/1 inputs like the card bits plus dense scalars.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.file_module import load_file

bench = load_file("bench_luck_mlp_under_test", Path("scripts/bench_luck_mlp.py"))


def test_the_numba_forward_pass_matches_numpy_on_sparse_card_bits_and_scalars():
    rng = np.random.default_rng(11)
    nf, h = bench.NF, 16
    w = (rng.normal(0, 0.3, (nf, h)), rng.normal(0, 0.1, h), rng.normal(0, 0.3, (h, h)), rng.normal(0, 0.1, h),
         rng.normal(0, 0.3, (h, 6)), rng.normal(0, 0.1, 6))  # fmt: skip
    out = np.zeros(6)
    for _ in range(20):
        x = np.zeros(nf)
        x[rng.choice(208, 31, replace=False)] = 1.0
        x[208:] = rng.random(nf - 208)
        bench._forward(x, *w, np.zeros(h), np.zeros(h), out)
        h1 = np.maximum(x @ w[0] + w[1], 0.0)
        h2 = np.maximum(h1 @ w[2] + w[3], 0.0)
        np.testing.assert_allclose(out, h2 @ w[4] + w[5], rtol=1e-12, atol=1e-12)
