"""The soak (``checks/soak/soak.py``): fio's sequential direct writes on every node for
``runtime_s``, each node's fio writing its interval logs (``--write_bw_log``,
``--write_lat_log``, ``--log_avg_msec``) into the stage directory as
``soak-<node>_bw.<job>.log``.  After the job the logs are read one client at a time into
the soak's compact record (:func:`fsaccept.benchmarks.fio.logs.soak_evidence`), kept in
the run report (``soak_record``), and judged by :func:`fsaccept.benchmarks.fio.soak.judge`:
the longest time a client went without progress, the bandwidth's drift over the run and the
slowest node's shortfall are figures, each at most the entry's limit.  The sign-off
re-judges the same record, read from the file the check writes beside its outputs
(``soak-record.json``: :data:`fsaccept.benchmarks.fio.soak.RECORD_FILE`, kept with
``keep_files``), never from the run report's field.  The logs themselves are not kept: a
day of 1,000 clients would be gigabytes; the record's file is what the manifest hashes.
"""

from __future__ import annotations

import glob
import json
import os

import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError
from reframe.core.logging import getlogger

from fsaccept.benchmarks.fio import command as fiocmd
from fsaccept.benchmarks.fio import logs as fiologs
from fsaccept.benchmarks.fio import soak
from fsaccept.rfm.fio import FioTest


class FioSoakTest(FioTest):
    """A soak: fio's time series on every node, judged."""

    #: The soak's compact record (``fsaccept.benchmarks.fio.soak.Evidence.to_dict``, JSON):
    #: what the sign-off judges again and draws.
    soak_record = variable(str, value="", loggable=True)
    #: Each judgement that did not pass, with its reasons (when, which nodes).
    soak_failures = variable(str, value="", loggable=True)

    #: A stall of 0 s, a drift of 0 %: measurements (the catalogue's ``may_be_zero``).
    counts = FioTest.counts | frozenset(fiocmd.SOAK_FIGURES)

    @run_after("setup")
    def keep_soak_record(self):
        """The record's file goes with the test's outputs (the logs do not)."""
        self.keep_files = [*self.keep_files, soak.RECORD_FILE]

    def fio_references(self) -> dict[str, tuple]:
        """The entry's thresholds and the soak's limits (each figure at most its limit)."""
        return {**super().fio_references(), **fiocmd.soak_references(self.params.soak)}

    def soak_evidence(self) -> soak.Evidence | None:
        """The record made from the nodes' logs, once (None: a log could not be read;
        the reason is in :meth:`benchmark_reasons`)."""
        if hasattr(self, "_soak"):
            return self._soak
        self._soak, self._soak_reasons = None, []
        nodes = sorted(self.fio_results().runs)
        try:
            clients = list(self._clients(nodes))
            self._soak = fiologs.soak_evidence(clients, self.params.soak)
        except (fiologs.LogError, soak.EvidenceError, OSError) as err:
            self._soak_reasons = [f"the soak's logs cannot be read: {err}"]
            return None
        self.soak_record = json.dumps(self._soak.to_dict(), sort_keys=True)
        judged = soak.judge(self._soak)
        self._soak_reasons = [f"{j.what}: {r}" for j in judged if j.verdict == soak.INVALID
                              for r in j.reasons]
        self._soak_reasons += soak.record_reasons(self._soak, list(self.job.nodelist or []))
        try:  # the evidence the sign-off reads (the run report's field is not taken on trust)
            with open(os.path.join(self.stagedir, soak.RECORD_FILE), "w",
                      encoding="utf-8") as f:
                f.write(self.soak_record)
        except OSError as err:
            self._soak_reasons.append(f"the soak's record cannot be kept as "
                                      f"{soak.RECORD_FILE}: {err.strerror or err}")
        self.soak_failures = "; ".join(
            (j.what if j.what == "stall" else f"{j.what} of {j.figure}") + f": {r}"
            for j in judged if j.verdict == soak.FAIL for r in j.reasons)
        if self.soak_failures:
            getlogger().warning(f"fsaccept: {self.display_name}: {self.soak_failures}")
        return self._soak

    def _clients(self, nodes: list[str]):
        for node in nodes:
            prefix = os.path.join(self.stagedir, f"{fiocmd.SOAK_LOG}{node}_")
            by_job: dict[str, list[fiologs.IntervalLog]] = {}
            for path in sorted(glob.glob(glob.escape(prefix) + "*.log")):
                name = fiologs.log_name(path)
                if name.kind in fiologs.SOAK_FIGURES:
                    by_job.setdefault(str(name.job or 1), []).append(fiologs.read_log(path))
            if not by_job:
                raise fiologs.LogError(f"{prefix}bw.1.log: node {node} wrote no log")
            for job, logs in sorted(by_job.items()):
                yield fiologs.ClientLogs(f"{node}/{job}", node, logs)

    def benchmark_reasons(self) -> list[str]:
        reasons = super().benchmark_reasons()
        if reasons:
            return reasons
        self.soak_evidence()
        return self._soak_reasons

    @run_before("performance")
    def set_perf_variables(self):
        # Overrides FioTest.set_perf_variables (same name, same place): the soak's too.
        super().set_perf_variables()
        for name, unit in fiocmd.SOAK_FIGURES.items():
            self.perf_variables[name] = sn.make_performance_function(
                self._soak_figure, unit, name)

    def _soak_figure(self, name: str) -> float:
        evidence = self.soak_evidence()
        if evidence is None:
            raise SanityError("INVALID: no soak record")
        # A judgement that judges nothing (one node: no shortfall) is 0 against its limit.
        return fiocmd.soak_figures(soak.judge(evidence)).get(name, 0.0)
