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

Recorded text printed on the console goes through :func:`one_line` (a message of several
lines through :func:`prefixed_lines`): a run report cannot put a line of its own, such as a
false ``overall verdict:``, before the true one.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

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
    if not isinstance(value, (int, float, Decimal)):
        return str(value)[:200]  # an edited run report's text where a number belongs
    if isinstance(value, int):
        if abs(value) >= 10**21:  # no figure: a typo or an edit, shown short
            return _huge(value)
        return f"{value:,}"
    try:
        value = float(value)
    except OverflowError:  # a Decimal beyond any float
        return _huge(int(value))
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


def _huge(value: int) -> str:
    """'1.0000e+4000'-like text of an integer too large to be a figure (Python refuses to
    print one of more than 4,300 digits)."""
    digits = int(value.bit_length() * 0.30103) + 1
    return f"{'-' if value < 0 else ''}a number of about {digits:,} digits"


def mib_to_mb(mib_per_s: float) -> Decimal:
    """MB/s from MiB/s, exactly: × 1.048576."""
    return Decimal(repr(mib_per_s)) * MB_PER_MIB


#: Units people read a quantity in, smallest first, and the factor between neighbours:
#: a time or a size is shown in the unit that puts it between 1 and that factor
#: ('2.5395 ms', not '2,539.5 us'; '184 KiB', not '0.17969 MiB'; '10 s', not
#: '10,000,000 us').  Rates (MiB/s, IOPS, ops/s) keep the unit they are stated in.
LADDERS = ((("ns", "µs", "ms", "s"), 1000), (("B", "KiB", "MiB", "GiB", "TiB"), 1024))
#: Another spelling of a unit of a ladder.
UNIT_ALIASES = {"us": "µs"}


def unit_scale(value: float | Decimal | None, unit: str) -> tuple[Decimal, str]:
    """(factor, unit) to show ``value`` (in ``unit``) in: ``0.000045061 s`` → (10**6,
    'µs'), ``10000000 us`` → (10**-6, 's'); 0, a value that is not finite, or a unit on no
    ladder: (1, unit)."""
    name = UNIT_ALIASES.get(unit, unit)
    ladder = next(((units, step) for units, step in LADDERS if name in units), None)
    if value is None or ladder is None or isinstance(value, bool):
        return Decimal(1), unit
    v = abs(Decimal(repr(value)) if isinstance(value, float) else Decimal(value))
    if not v.is_finite() or not v:
        return Decimal(1), unit
    units, step = ladder
    i, factor = units.index(name), Decimal(1)
    while v * factor < 1 and i > 0:
        i, factor = i - 1, factor * step
    while v * factor >= step and i < len(units) - 1:
        i, factor = i + 1, factor / step
    return factor, (unit if factor == 1 else units[i])


def format_quantity(value: float | Decimal | None, unit: str,
                    factor: Decimal | None = None, scaled_unit: str | None = None) -> str:
    """'45.061 µs' for 4.5061e-05 s (exactly: the value × the factor, in decimal);
    '424.62 MiB/s'; ``factor`` and ``scaled_unit`` from :func:`unit_scale` to show
    several values in one unit."""
    if value is None:
        return NO_VALUE
    if factor is None:
        factor, scaled_unit = unit_scale(value, unit)
    if factor != 1 and isinstance(value, (int, float, Decimal)) and not isinstance(
            value, bool) and math.isfinite(float(value)):
        value = (Decimal(repr(value)) if isinstance(value, float) else Decimal(value)) * factor
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


#: Every line break a terminal, Markdown or a browser may honour (LF, CR, VT, FF, FS, GS,
#: RS, NEL, LS, PS: those of ``str.splitlines``), with the blanks around it.
LINE_BREAKS = re.compile(r"\s*[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]\s*")


def one_line(value: Any, sep: str | None = " / ") -> str:
    """Recorded text (a reason, a path, a test name...) as one console line: each line
    break, with the blanks around it, made ``sep`` (None: escaped as the rest, for a file
    name shown exactly); every other character that is not printable (a terminal's escape
    sequence, which moves the cursor or erases a line; a direction override) shown
    escaped (``\\x1b``), never sent."""
    text = str(value)
    if sep is not None:
        text = LINE_BREAKS.sub(sep, text.strip())
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def prefixed_lines(prefix: str, message: Any) -> str:
    """A message of several lines (joined by ``\\n``, as the errors that name each key
    are) with each line ``prefix``-ed and folded by :func:`one_line`: no line of it can
    read as another command's output."""
    return "\n".join(prefix + one_line(line) for line in str(message).split("\n"))
