"""A figure's repetitions and two figures' ratio (``fsaccept/core/statistics.py``),
held to values computed by hand from their definitions and Student's t tables."""

from __future__ import annotations

import math

import pytest

from fsaccept.core import statistics as st


def test_a_spread_gives_n_mean_sd_range_and_the_means_interval():
    s = st.spread([1, 2, 3])
    assert (s.n, s.mean, s.sd, s.minimum, s.maximum) == (3, 2, 1, 1, 3)
    low, high = s.interval
    half = 4.302653 / math.sqrt(3)  # t(0.975, 2 degrees of freedom)
    assert low == pytest.approx(2 - half, abs=1e-5) and high == pytest.approx(2 + half,
                                                                              abs=1e-5)
    assert s.cov == pytest.approx(0.5)
    assert s.text("MiB/s") == "2 ± 1 MiB/s (n = 3, range 1 … 3, 95 % CI -0.484 … 4.48)"


def test_one_repetition_has_no_spread_nor_interval():
    s = st.spread([412.0])
    assert s.sd is None and s.interval is None and s.cov is None
    assert s.text("MiB/s") == "412 MiB/s (n = 1: no spread)"
    assert st.noise_reason(s, 0.1) is None


def test_a_figure_in_percent_keeps_its_own_unit():
    assert st.spread([20, 22, 24]).text("%") == "22 ± 2 % (n = 3, range 20 … 24, 95 % CI 17 … 27)"


def test_identical_repetitions_have_a_zero_width_interval():
    assert st.spread([5, 5, 5]).interval == (5, 5)


@pytest.mark.parametrize("values", [[], [1, float("nan")], [1, float("inf")], [-1, 2]])
def test_what_is_no_repetition_is_refused(values):
    with pytest.raises(ValueError):
        st.spread(values)


def test_a_spread_beyond_its_cov_is_too_noisy_to_judge():
    s = st.spread([100, 140, 60])  # sd 40, mean 100
    assert st.noise_reason(s, 0.5) is None
    assert st.noise_reason(s, 0.1) == (
        "too noisy to judge (CoV 40 % over 3 repetitions, at most 10 %): random error "
        "dominates; find what else runs")


def test_a_real_drop_is_significant_and_one_within_the_noise_is_not():
    a = st.spread([100, 102, 98])
    slower = st.ratio(a, st.spread([66, 67, 65]))
    assert slower.value == pytest.approx(0.66)
    assert slower.significant is True
    low, high = slower.interval
    assert low < 0.66 < high and high < 1
    assert slower.text().startswith("0.66 ± 0.0") and slower.text().endswith(
        ": B is lower; significant)")
    same = st.ratio(a, st.spread([101, 99, 100]))
    assert same.significant is False
    assert same.text().endswith("not significant)")


def test_the_interval_is_welchs_on_the_logarithms():
    """Against Welch's interval worked out from its formula (Welch–Satterthwaite degrees
    of freedom), not SciPy's call."""
    from scipy import stats
    a, b = [10.0, 12.0, 11.0, 13.0], [15.0, 14.0, 17.0]
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    def var(x):
        m = sum(x) / len(x)
        return sum((v - m) ** 2 for v in x) / (len(x) - 1)
    va, vb = var(la) / len(la), var(lb) / len(lb)
    df = (va + vb) ** 2 / (va ** 2 / (len(la) - 1) + vb ** 2 / (len(lb) - 1))
    half = stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    r = st.ratio(st.spread(a), st.spread(b))
    low, high = r.interval
    # Centred on the ratio of the means: the width on the log scale is Welch's.
    assert math.log(high) - math.log(low) == pytest.approx(2 * half)
    assert math.log(high) + math.log(low) == pytest.approx(2 * math.log(r.value))


def test_one_repetition_on_a_side_gives_no_interval_and_says_so():
    r = st.ratio(st.spread([100.0]), st.spread([66, 67, 65]))
    assert r.interval is None and r.significant is None
    assert r.text() == "0.66 × (no interval can be given: one repetition on side A)"


def test_no_ratio_over_a_zero_figure():
    with pytest.raises(ValueError, match="A's figure is 0"):
        st.ratio(st.spread([0, 0]), st.spread([1, 2]))


def test_a_prediction_bound_is_students_t_for_one_new_measurement():
    s = st.spread([100, 101, 99, 100, 102, 98, 100])
    # t(0.99, 6) = 3.1427; σ = 1.29099; √(1 + 1/7) = 1.06904.
    assert s.prediction_bound(False, 0.99) == pytest.approx(100 - 3.1427 * 1.29099 * 1.06904,
                                                            abs=1e-3)
    assert s.prediction_bound(True, 0.99) == pytest.approx(100 + 3.1427 * 1.29099 * 1.06904,
                                                           abs=1e-3)
    # Fewer measurements, a wider bound for the same spread.
    few = st.spread([100, 101, 99])
    assert few.prediction_bound(False, 0.99) < s.prediction_bound(False, 0.99)
    assert st.spread([5.0]).prediction_bound(False, 0.99) is None
    with pytest.raises(ValueError, match="confidence"):
        s.prediction_bound(False, 1.5)


def test_a_ratio_far_below_one_keeps_its_significant_digits():
    r = st.ratio(st.spread([1000.0, 1100.0, 1050.0]), st.spread([0.79, 0.80, 0.78]))
    text = r.text()
    assert text.startswith("0.00075 ± 0.0000"), text
    assert text.endswith("B is lower; significant)"), text
