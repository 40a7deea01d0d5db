"""The HTML sign-off report renders its summary table in a real browser.

Headless Chromium (Debian's ``chromium``, installed by scripts/setup) takes a
screenshot of report.html built from a stored run report; the test then looks
for the summary table in the pixels: one full-width border line per row.
Skips with the reason when Chromium is missing outside CI; fails in CI.
"""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fsaccept.reporting import runreport
from fsaccept.reporting import report as signoff

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"
BORDER = np.array([0x99, 0x99, 0x99]) / 255  # the tables' border colour (#999)
HEADER = np.array([0xE8, 0xE8, 0xE8]) / 255  # header cells (#e8e8e8)


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium not installed: run scripts/setup")
        pytest.skip("chromium not installed (Debian package chromium; scripts/setup installs it)")
    return exe


def screenshot(html: Path, png: Path, profile: Path, height: int = 2400) -> None:
    proc = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", "--hide-scrollbars",
         f"--window-size=1280,{height}", f"--screenshot={png}", html.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and png.is_file(), proc.stderr[-2000:]


def wide_border_lines(img: np.ndarray, min_fraction: float = 0.6) -> int:
    """Pixel rows where the border colour spans most of the page width."""
    close = np.all(np.abs(img[:, :, :3] - BORDER) < 0.03, axis=2)
    return int(np.sum(close.mean(axis=1) >= min_fraction))


def only(html: str, css: str) -> str:
    return html.replace("</style>", css + "</style>")


@pytest.mark.parametrize("name", ["fio-client.json", "ior-invalid-error.json"])
def test_summary_table_renders(name, tmp_path):
    import matplotlib.image as mpimg

    report = runreport.load_run_report(DATA / name)
    ctx = signoff.build_context(report, signed_by="Screenshot Test", harness_version="test")
    page = signoff.render(ctx, "report.html.j2")
    rows = len(ctx["rows"])
    # The whole page (kept for a person to look at), then the page with only the
    # summary table shown, then with nothing shown (the control).
    shots = {}
    for label, css in (("page", ""), ("table", "body > :not(#summary) { display: none; }"),
                       ("none", "body > * { display: none; }")):
        html = tmp_path / f"{label}.html"
        html.write_text(only(page, css))
        screenshot(html, tmp_path / f"{label}.png", tmp_path / f"profile-{label}")
        shots[label] = mpimg.imread(tmp_path / f"{label}.png")
    img = shots["table"]
    assert img.shape[1] == 1280
    # A rendered table: a full-width border line above each row and below the last.
    lines = wide_border_lines(img)
    assert lines >= rows + 1, (f"summary table of {rows} rows not rendered "
                               f"({lines} full-width table lines; see {tmp_path}/table.png)")
    assert np.any(np.all(np.abs(img[:, :, :3] - HEADER) < 0.02, axis=2)), "no header cells"
    assert wide_border_lines(shots["none"]) == 0
    # The full page is not blank and has at least the summary's lines.
    assert wide_border_lines(shots["page"]) >= rows + 1
