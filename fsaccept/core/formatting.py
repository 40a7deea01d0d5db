"""How a figure is printed for people: the one place for it.

Every figure in the console summary, ``report.md``, ``report.html``, plot
labels and the nightly summary goes through :func:`format_number` /
:func:`format_figure`: five significant digits, thousands separators, the unit
always shown, MB/s beside MiB/s.  ``424.6202964782715`` is shown as
``424.62``, ``5486.8377199999995`` as ``5,486.8``.  The integer part is never
rounded away (``3,427,179``, not ``3,427,200``), and a value that already has
at most five significant digits is shown exactly as it is (``45``, ``0.9``).

The exact values stay where machines read them: ReFrame's JSON run report and
perflogs, ``fsaccept parse`` output (JSON).
"""

from __future__ import annotations

import math
from decimal import Decimal

#: Significant digits a figure is shown with.
SIGNIFICANT_DIGITS = 5
#: 1 MiB/s in MB/s, exactly (2**20 / 10**6).
MB_PER_MIB = Decimal("1.048576")
#: Shown for a figure that has no value (invalid, not measured).
NO_VALUE = "—"


def format_number(value: float | int | Decimal | None) -> str:
    """A number for people: '1,987.0', '424.62', '3,427,179', '45', '0.9';
    '—' for None."""
    if value is None or isinstance(value, bool):
        return NO_VALUE
    if isinstance(value, int):
        return f"{value:,}"
    value = float(value)
    if not math.isfinite(value):
        return str(value)  # 'nan', 'inf': never pretend they are figures
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 1e21:  # no figure: 300 digits of a typo or an edit, shown short
        return f"{value:.{SIGNIFICANT_DIGITS}g}"
    if value == 0:
        return "0"
    integer_digits = math.floor(math.log10(abs(value))) + 1
    decimals = max(0, SIGNIFICANT_DIGITS - integer_digits)
    text = f"{value:,.{decimals}f}"
    if float(text.replace(",", "")) == value:
        # Exact in fewer digits (0.9, 45.5): no invented trailing zeros.
        text = text.rstrip("0").rstrip(".") if "." in text else text
    return text


def mib_to_mb(mib_per_s: float) -> Decimal:
    """MB/s from MiB/s, exactly: × 1.048576."""
    return Decimal(repr(mib_per_s)) * MB_PER_MIB


#: Time units, each with the next smaller one (× 1000): a sub-unit time is shown in
#: the smaller unit ('45.061 µs', not '0.000045061 s').
SMALLER_TIME_UNIT = {"s": "ms", "ms": "µs", "us": "ns", "µs": "ns"}


def time_scale(value: float | Decimal | None, unit: str) -> tuple[int, str]:
    """(power of 1000, unit) to show a time in: ``0.000045061 s`` → (2, 'µs'); a time
    of at least 1 in its unit, 0, or any other unit: (0, unit)."""
    steps = 0
    if value is None or unit not in SMALLER_TIME_UNIT:
        return 0, unit
    v = abs(float(value))
    if not math.isfinite(v):
        return 0, unit
    while v and v < 1 and unit in SMALLER_TIME_UNIT:
        v *= 1000
        unit = SMALLER_TIME_UNIT[unit]
        steps += 1
    return steps, unit


def format_quantity(value: float | Decimal | None, unit: str, steps: int | None = None,
                    scaled_unit: str | None = None) -> str:
    """'45.061 µs' for 4.5061e-05 s (exactly: the value × 1000 per step, in decimal);
    '424.62 MiB/s'; ``steps`` and ``scaled_unit`` from :func:`time_scale` to show
    several values in one unit."""
    if value is None:
        return NO_VALUE
    if steps is None:
        steps, scaled_unit = time_scale(value, unit)
    if steps and isinstance(value, (int, float, Decimal)) and not isinstance(value, bool) \
            and math.isfinite(float(value)):
        value = Decimal(repr(value) if isinstance(value, float) else value) * 1000 ** steps
        unit = scaled_unit or unit
    return f"{format_number(value)} {unit}".rstrip()


def format_figure(value: float | None, unit: str) -> str:
    """'1,987.0 MiB/s (2,083.5 MB/s)' for bandwidth; '45.061 µs' for a sub-millisecond
    time; '31,618 IOPS' otherwise; '—' without a value."""
    if value is None:
        return NO_VALUE
    text = format_quantity(value, unit)
    if unit == "MiB/s":
        text += f" ({format_number(mib_to_mb(value))} MB/s)"
    return text
