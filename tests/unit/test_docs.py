"""The docs' generated tables are the catalogue's and the schemas' own
(``fsaccept reference --list``), and the API reference's the code's own
(``docs/dev/api.md``): this fails when a check, a key, an option, a record's field or a
hook changes and the page does not.  Refill them with ``python -m
fsaccept.suite.listing docs/user/*.md`` and ``python -m fsaccept.rfm.apiref
docs/dev/api.md``.

The user pages as a site reads them: no sentence longer than :data:`MAX_SENTENCE_WORDS`
words, every relative link (and its heading anchor) leads somewhere, and every command
is written one way (docs/user/index.md, "How commands are written")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fsaccept.rfm import apiref
from fsaccept.suite import listing

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "BEGIN GENERATED" in p.read_text())


def test_the_generated_tables_are_in_the_docs():
    names = {m for p in PAGES for m in re.findall(r"BEGIN GENERATED: ([\w-]+)", p.read_text())}
    assert names == set(listing.GENERATED) | set(apiref.GENERATED)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_a_generated_table_is_what_the_catalogue_says(page):
    text = page.read_text()
    assert apiref.fill(listing.fill_generated(text)) == text, (
        f"{page}: its generated sections differ from the catalogue or the code; run "
        f"python -m fsaccept.suite.listing {page} (user pages) or python -m "
        f"fsaccept.rfm.apiref {page} (docs/dev/api.md)")


def test_the_readme_is_a_door():
    readme = (DOCS.parent / "README.md").read_text().splitlines()
    assert len(readme) <= 150
    first_site_step = next(i for i, line in enumerate(readme, 1) if "at your site" in line.lower())
    assert first_site_step <= 80
    assert any("./scripts/test" in line for line in readme)


# --- The user pages, as a site reads them ------------------------------------------------

ROOT = DOCS.parent
USER_PAGES = sorted((DOCS / "user").glob("*.md")) + [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
#: The longest sentence a user page may have, in words (a code span is one word).
MAX_SENTENCE_WORDS = 50
_FENCED = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.S | re.M)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
_LIST_ITEM = re.compile(r"^\s*([-*+]|\d+\.)\s+")


def _paragraphs(text: str) -> list[str]:
    """The page's own prose, one string per paragraph or list item: without fenced or
    indented code blocks, tables, headings and comments."""
    text = _FENCED.sub("", _COMMENT.sub("", text))
    paragraphs: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        code = line.startswith("    ") and not current and not _LIST_ITEM.match(line)
        if not line.strip() or line.lstrip().startswith(("|", "#")) or code:
            paragraphs += [" ".join(current)] if current else []
            current = []
            continue
        if _LIST_ITEM.match(line):
            paragraphs += [" ".join(current)] if current else []
            current = []
        current.append(_LIST_ITEM.sub("", line).strip())
    return paragraphs + ([" ".join(current)] if current else [])


def sentences(text: str) -> list[str]:
    """The sentences of a page's prose: a code span counts as one word, a link as its text."""
    out = []
    for paragraph in _paragraphs(text):
        plain = _LINK.sub(r"\1", _CODE_SPAN.sub("CODE", paragraph))
        out += [s for s in re.split(r"""(?<=[.!?])['")]*\s+""", plain) if s.strip()]
    return out


def test_sentences_are_split_as_a_reader_reads_them():
    page = ("# Title\n\nOne `a. b` here. Two [a link](x.md) end: \"quoted.\" Three\n"
            "lines.\n\n    code. block. here\n\n| a. b | c. d |\n\n- an item. And\n  more\n"
            "- next\n\n```\nx. y.\n```\n")
    assert sentences(page) == ["One CODE here.", "Two a link end: \"quoted.", "Three lines.",
                               "an item.", "And more", "next"]


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sentence_of_a_user_page_runs_long(page):
    long = [f"{len(s.split())} words: {s[:120]}…" for s in sentences(page.read_text())
            if len(s.split()) > MAX_SENTENCE_WORDS]
    assert not long, f"{page}: split these sentences:\n" + "\n".join(long)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, blanks as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    for line in _FENCED.sub("", page.read_text()).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = _slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
    return {s if i == 0 else f"{s}-{i}" for s, count in seen.items() for i in range(count)}


LINKED_PAGES = sorted(DOCS.rglob("*.md")) + [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]


@pytest.mark.parametrize("page", LINKED_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_of_a_page_leads_somewhere(page):
    text = _CODE_SPAN.sub("", _FENCED.sub("", page.read_text()))
    broken = []
    for target in (m.group(2) for m in _LINK.finditer(text)):
        if not target or re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    assert not broken, f"{page}: " + "; ".join(broken)


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_commands_are_written_one_way(page):
    """docs/user/index.md: a script is typed `./scripts/NAME ...`; `fsaccept` and `reframe`
    bare, after `. .venv/bin/activate`."""
    text = page.read_text()
    assert not re.findall(r"\.venv/bin/(?!activate\b)[\w.-]+", text), page
    assert not re.findall(r"(?<![\w./\[-])scripts/[\w-]+ +[\w<\[\"'-]", text), page
