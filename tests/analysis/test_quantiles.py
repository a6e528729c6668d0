"""The tables' distribution functions equal scipy.stats', and a run's path does not import scipy.stats."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sps

from arena.analysis.quantiles import normal_quantile, sign_test_p, t_quantile


@pytest.mark.parametrize("conf", [0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
def test_the_t_and_normal_quantiles_are_scipy_stats_own(conf):
    df = np.array([1, 2, 3, 5, 9, 30, 99, 1000, 1e6, 2.5])
    assert np.array_equal(t_quantile(conf, df), sps.t.ppf(0.5 + conf / 2, df))
    for d in df:
        got = t_quantile(conf, d)
        assert isinstance(got, float) and got == pytest.approx(sps.t.ppf(0.5 + conf / 2, d), rel=1e-14)
    assert normal_quantile(conf) == pytest.approx(sps.norm.ppf(0.5 + conf / 2), rel=1e-14)


def test_the_sign_test_is_scipys_two_sided_binomial_test_at_one_half():
    cases = [(a, b) for a in range(41) for b in range(41)] + [(480, 520), (1000, 1100), (3, 900), (5000, 5000)]
    for a, b in cases:
        got = sign_test_p(a, b)
        if a + b == 0:
            assert np.isnan(got)
            continue
        want = sps.binomtest(a, a + b, 0.5).pvalue
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300), (a, b, got, want)


def test_a_run_that_prints_its_tables_imports_neither_scipy_stats_nor_scipy_optimize(tmp_path):
    """Importing them costs about a second of CPU per ``arena run``; its tables need only scipy.special."""
    (tmp_path / "c.toml").write_text('name = "q"\nbots = ["random", "simple"]\nseed = 5\nworkers = 1\n')
    code = (
        "import sys\n"
        "from arena.cli.main import main\n"
        "sys.argv = ['arena', 'run', 'c.toml', '--games', '4', '--no-report']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "heavy = {m.split('.')[1] for m in sys.modules if m.startswith('scipy.')} & {'stats', 'optimize'}\n"
        "print('scipy:', sorted(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "random vs simple" in out.stdout  # the tables were printed
    assert out.stdout.strip().splitlines()[-1] == "scipy: []"


def test_the_beta_quantile_is_the_exact_one_sided_binomial_bound():
    """For x successes in n, Beta(x, n - x + 1)'s q quantile is the p with P(Binomial(n, p) >= x) = q: checked
    against the binomial sum written out, and against scipy.stats.beta.ppf for shapes that are not whole."""
    import math

    from arena.analysis.quantiles import beta_quantile

    for n in (1, 5, 20, 50, 200):
        for x in range(1, min(n, 12) + 1):
            for q in (0.025, 0.05, 0.2):
                p = beta_quantile(q, x, n - x + 1)
                tail = sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(x, n + 1))
                assert tail == pytest.approx(q, rel=1e-9), (n, x, q)
    assert beta_quantile(0.05, 1, 50) == pytest.approx(1 - 0.95 ** (1 / 50), rel=1e-12)
    a, b = np.array([0.3, 0.98, 2.5, 7.25]), np.array([49.02, 10.5, 3.0, 100.0])
    assert beta_quantile(0.05, a, b) == pytest.approx(sps.beta.ppf(0.05, a, b), rel=1e-10)
    assert beta_quantile(0.05, 0.0, 10.0) == 0.0  # no success: nothing bounds p away from 0
