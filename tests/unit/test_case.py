"""A run report's test case read once at the door (fsaccept/reporting/case.py): typed
fields, the record read-only, per-node figures as data whether logged as data or as the
text of earlier runs (tests/data/reframe/fio-client.json, and an edited copy)."""

import json
from pathlib import Path

import pytest

from fsaccept.reporting import case as door
from fsaccept.reporting import runreport, sections

DATA = Path(__file__).resolve().parent.parent / "data" / "reframe"


def fio_cases():
    report = json.loads((DATA / "fio-client.json").read_text())
    return report, runreport.all_testcases(report)


def test_a_case_is_typed_once_and_reads_as_its_record():
    _, cases = fio_cases()
    record = next(tc for tc in cases if tc["name"] == "FioRandomReadDirect")
    case = door.case_of(record)
    assert door.case_of(case) is case  # built once: a case passed on is not read again
    assert case.name == "FioRandomReadDirect" and "acceptance" in case.tags
    assert [f.name for f in case.figures] == [
        k.rsplit(":", 1)[-1] for k in record["perfvalues"]]
    assert case.figures[0].value == next(iter(record["perfvalues"].values()))[0]
    assert case.job.nodelist == ("n1", "n2", "n3", "n4") and case.job.jobid == record["jobid"]
    assert case.per_node == {"randread_4k_direct_iops": {
        "n1": 15702.0993, "n2": 15799.4002, "n3": 15645.902732, "n4": 15792.804797}}
    assert "fio_version" in case.variables and "perfvalues" not in case.variables
    # The record as ReFrame wrote it, read-only.
    assert case.get("reference_sha256") == record["reference_sha256"]
    assert dict(case) == record and case == record
    with pytest.raises(TypeError):
        case["name"] = "x"


def test_per_node_figures_as_data_read_as_the_text_did():
    report, cases = fio_cases()
    text_tests = runreport.tests_of(report)
    as_data = json.loads(json.dumps(report))
    for tc in runreport.all_testcases(as_data):
        if tc.get("per_node_figures"):
            tc["per_node_figures"] = door.parse_per_node_text(tc["per_node_figures"])
    data_tests = runreport.tests_of(as_data)
    assert sections.per_node_values(data_tests) == sections.per_node_values(text_tests)
    shown = [sections.case_section(t.case, "Measurement").provenance for t in text_tests]
    assert [sections.case_section(t.case, "Measurement").provenance
            for t in data_tests] == shown
    assert any(k == "per_node_figures" and v.startswith("randread_4k_direct_iops (IOPS): n1 ")
               for rows in shown for k, v in rows)


def test_per_node_of_each_form():
    assert door.per_node_of("per_node_figures", "a=n1:1.5,n2:2; b=n1:x") == {
        "a": {"n1": 1.5, "n2": 2.0}}
    assert door.per_node_of("per_node_figures", {"a": {"n1": 1.5, "n2": "bad"}}) == {
        "a": {"n1": 1.5}}
    # a mapping node -> value names its figure by its key
    assert door.per_node_of("write_bandwidth_per_node", {"n1": 3, "n2": True}) == {
        "write_bandwidth": {"n1": 3.0}}
    assert door.per_node_of("ranks_per_node", 4) == {}


def test_figures_that_are_not_reframes_name_the_test():
    with pytest.raises(door.RunReportError, match=r"perfvalues\['x:y:bw'\] of 'T'"):
        door.case_of({"name": "T", "perfvalues": {"x:y:bw": [1.0]}})


def test_no_per_node_figures_show_as_before():
    # a check that measured none logs {} now, "" before: both are shown as nothing
    assert sections.provenance(door.case_of({"name": "T", "per_node_figures": {}})) == \
        sections.provenance(door.case_of({"name": "T", "per_node_figures": ""})) == [
            ("per_node_figures", "—")]
