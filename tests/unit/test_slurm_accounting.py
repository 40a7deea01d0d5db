"""A job's record in Slurm's accounting (fsaccept/core/slurm.py): read from sacct, shown
beside the figures, and judged the same way live and in the sign-off."""

import pytest

from fsaccept.core import slurm
from fsaccept.reporting.sections import _show

# What `sacct -n -P -X -j 241 -o JobIDRaw,State,ExitCode,ElapsedRaw,NodeList` printed on
# the emulated cluster (slurmdbd 22.05, MariaDB 10.11) for jobs that ended each way.
COMPLETED = "241|COMPLETED|0:0|41|n[1-4]|2026-11-27T04:21:06"
TIMEOUT = "237|TIMEOUT|0:0|83|n1|2026-11-27T04:14:15"
NODE_FAIL = "250|NODE_FAIL|0:0|12|n[1-2]|2026-11-27T04:30:00"
CANCELLED = "241|CANCELLED by 0|0:0|31|n[1-4]|2026-11-27T04:21:06"
# ReFrame's max_pending_time cancelled it while every node ran another job.
NEVER_STARTED = "242|CANCELLED by 0|0:0|0|None assigned|None"


def test_the_command_asks_for_the_allocation_only_in_the_recorded_fields():
    assert slurm.sacct_command("241") == [
        "sacct", "-n", "-P", "-X", "-j", "241", "-o",
        "JobIDRaw,State,ExitCode,ElapsedRaw,NodeList,Start"]


def test_the_record_is_the_jobs_own_line():
    text = "240|COMPLETED|0:0|3|n1|2026-11-27T04:20:00\n" + COMPLETED + "\n"
    assert slurm.sacct_record(text, "241") == COMPLETED
    assert slurm.sacct_record(text, "24") == ""
    assert slurm.sacct_record("", "241") == ""
    # A line with a field too many or too few is not sacct's.
    assert slurm.sacct_record("241|COMPLETED|0:0|41|n1\n", "241") == ""


def test_a_job_that_ended_by_itself_gives_no_reason():
    assert slurm.accounting_reasons(COMPLETED, "241") == []
    assert slurm.accounting_reasons("241|FAILED|2:0|5|n1|2026-11-27T04:21:06", "241") == []
    assert slurm.accounting_reasons("", "241") == []  # no accounting
    assert slurm.accounting_reasons(None, "241") == []
    assert slurm.accounting_reasons("", "241", scheduler="squeue") == []


def test_a_job_of_the_slurm_backend_without_its_record_is_evidence_missing():
    [reason] = slurm.accounting_reasons("", "241", scheduler="slurm")
    assert reason.startswith("evidence missing: job 241 ran through ReFrame's slurm backend")
    assert slurm.accounting_reasons("", "", scheduler="slurm") == []  # no job ran


@pytest.mark.parametrize("record, jobid, words", [
    (TIMEOUT, "237", "job 237 ended TIMEOUT (its time limit) after 83 s, exit 0:0, on n1"),
    (NODE_FAIL, "250", "ended NODE_FAIL (a node failure) after 12 s"),
    (CANCELLED, "241", "ended CANCELLED (a cancellation) after 31 s, exit 0:0, on n[1-4]"),
    (NEVER_STARTED, "242", "job 242 never started (CANCELLED by 0 while it waited"),
])
def test_a_job_slurm_ended_is_a_reason(record, jobid, words):
    [reason] = slurm.accounting_reasons(record, jobid)
    assert words in reason


def test_a_time_limit_noted_after_the_benchmark_is_no_reason():
    assert slurm.accounting_reasons(TIMEOUT, "237", "Slurm cancelled job 237 ...") == []
    assert slurm.accounting_reasons(NODE_FAIL, "250", "noted") != []


@pytest.mark.parametrize("record", [
    "garbage", 7, ["241"], "241|COMPLETED|0:0|nan|n1|x", "241|COMPLETED|0:0|-1|n1|x",
    "241|COMPLETED|0:0|41|n1|x|extra"])
def test_a_record_that_is_not_saccts_is_a_reason(record):
    [reason] = slurm.accounting_reasons(record, "241")
    assert "job_accounting is not a record of sacct's" in reason


def test_another_jobs_record_is_a_reason():
    [reason] = slurm.accounting_reasons(COMPLETED, "242")
    assert reason == "job_accounting is the record of job 241, not of this test's job 242"


def test_the_report_shows_it_for_people():
    assert _show("job_accounting", COMPLETED) == (
        "job 241: COMPLETED, exit 0:0, 41 s on n[1-4] from 2026-11-27T04:21:06")
    assert _show("job_accounting", NEVER_STARTED) == "job 242: CANCELLED by 0 before it started"
    assert slurm.never_started(NEVER_STARTED) and not slurm.never_started(CANCELLED)
    assert _show("job_accounting", "") == "—"


def test_a_record_is_settled_once_it_has_the_nodes_slurmctld_gave_the_job():
    # slurmdbd first recorded a 4-node job as on n1 only, for ~0.5 s after its end.
    assert not slurm.settled("505|COMPLETED|0:0|1|n1|2026-11-27T05:23:01", "n[1-4]")
    assert slurm.settled("505|COMPLETED|0:0|1|n[1-4]|2026-11-27T05:23:01", "n[1-4]")
    assert slurm.settled(NEVER_STARTED, "")  # slurmctld gave it no node
    assert not slurm.settled("", "n[1-4]")  # no record yet
