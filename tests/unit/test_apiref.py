"""The API reference's makers (``fsaccept/rfm/apiref.py``): a record's ``#:`` comments
read from its source, and ``BenchmarkTest``'s hooks in the order ReFrame runs them."""

from __future__ import annotations

from fsaccept.benchmarks.catalogue import Condition, TestSpec
from fsaccept.benchmarks.fio.command import Kind
from fsaccept.rfm import apiref


def test_a_fields_comment_is_read_from_the_lines_above_it_or_its_own_line():
    assert apiref.field_comments(TestSpec)["check"].startswith("The class name in")
    assert apiref.field_comments(Kind)["rw"] == "fio ``rw=``"
    # Two lines of comment above one field are one sentence.
    assert "lays out its report section" in apiref.field_comments(Condition)["report"]


def test_every_field_of_every_record_has_its_comment():
    for cls in apiref.RECORDS:
        missing = [f for f, said in apiref.field_comments(cls).items() if not said]
        assert not missing, (cls.__name__, missing)


def test_the_hooks_come_in_the_order_reframe_runs_them():
    hooks = apiref.hooks_in_order()
    whens = [w for w, _, _ in hooks]
    stages = [apiref.STAGES.index(w.split("_", 1)[1]) * 2 + w.startswith("post")
              for w in whens]
    assert stages == sorted(stages)
    names = [n for _, _, n in hooks]
    assert names.index("guard_target") < names.index("guard_capacity")
    # Run last of its stage (ReFrame's always_last).
    pre_run = [n for w, _, n in hooks if w == "pre_run"]
    assert pre_run[-1] == "count_while_running"


def test_every_hook_says_what_it_does():
    assert "|  |" not in apiref.hooks_reference()
