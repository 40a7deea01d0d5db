"""The docs' generated tables are the catalogue's and the schemas' own
(``fsaccept reference --list``): this fails when a check, a key or an option changes and
the page does not.  Refill them with ``python -m fsaccept.suite.listing docs/user/*.md``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fsaccept.suite import listing

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "BEGIN GENERATED" in p.read_text())


def test_the_generated_tables_are_in_the_docs():
    names = {m for p in PAGES for m in re.findall(r"BEGIN GENERATED: ([\w-]+)", p.read_text())}
    assert names == set(listing.GENERATED)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_a_generated_table_is_what_the_catalogue_says(page):
    text = page.read_text()
    assert listing.fill_generated(text) == text, (
        f"{page}: its generated tables differ from the catalogue; run "
        f"python -m fsaccept.suite.listing {page}")


def test_the_readme_is_a_door():
    readme = (DOCS.parent / "README.md").read_text().splitlines()
    assert len(readme) <= 150
    first_site_step = next(i for i, line in enumerate(readme, 1) if "at your site" in line.lower())
    assert first_site_step <= 80
    assert any("./scripts/test" in line for line in readme)
