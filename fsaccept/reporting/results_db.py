"""ReFrame's results database (SQLite, ``RFM_SQLITE_DB_FILE``): the one adapter to
ReFrame's storage internals.  Nightly sessions are found by their session extras
(``fsaccept_kind``, ``fsaccept_system``); a file that is not ReFrame's database is
refused before ReFrame opens (and may write to) it."""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

# ReFrame's lock (reframe.utility.osext.ReadWriteFileLock) is fasteners' own: taken
# through fasteners, so that `nightly check-db` does not import all of ReFrame.
from fasteners import InterProcessReaderWriterLock

#: Session extras (``--session-extras``) that say what kind of run a session was.
KIND_KEY, SYSTEM_KEY = "fsaccept_kind", "fsaccept_system"


class NightlyError(ValueError):
    """Bad nightly settings or storage; the message names the file or key."""



def _session_info(blob: str) -> dict[str, Any]:
    """The ``session_info`` object of a stored session's JSON, decoded alone."""
    key = blob.find('"session_info"')
    start = blob.find("{", key)
    if key < 0 or start < 0:
        raise NightlyError("a stored session has no session_info")
    return json.JSONDecoder().raw_decode(blob, start)[0]


#: Tables of ReFrame's results database (reframe/frontend/reporting/storage.py).
RESULTS_TABLES = frozenset({"sessions", "testcases", "metadata"})

#: Seconds a results database locked by another writer (a session being stored) is
#: waited for before giving up, saying it is busy: storing one session takes seconds,
#: a writer that never lets go is stuck.
BUSY_WAIT_S = 120.0
#: One attempt's wait (SQLite's busy timeout); attempts repeat up to BUSY_WAIT_S.
BUSY_STEP_S = 5.0


def _is_busy(err: BaseException) -> bool:
    """SQLite's 'database is locked' (another connection holds the lock): the database
    is healthy, only in use."""
    return isinstance(err, sqlite3.OperationalError) and (
        getattr(err, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
        or "database is locked" in str(err))


def _busy_error(path: Path, wait_s: float, who: str = "another process") -> NightlyError:
    return NightlyError(f"{path}: the results database is busy: {who} holds its lock (still "
                        f"after {wait_s:g} s); it is not damaged: run again when that "
                        "writer has finished, or stop it")


def _waiting(path: Path, wait_s: float) -> None:
    """Said once, when a first attempt found the database locked (cron logs show why
    the nightly waits)."""
    print(f"fsaccept: {path}: results database busy (locked by another writer); waiting "
          f"up to {wait_s:g} s", file=sys.stderr)


def _while_busy(path: Path, action: Any, wait_s: float) -> Any:
    """``action(timeout)`` (an SQLite access, ``timeout`` its busy wait), repeated while
    the database is locked, for at most about ``wait_s`` seconds in all."""
    attempts = max(1, math.ceil(wait_s / BUSY_STEP_S))
    for attempt in range(attempts):
        try:
            return action(min(BUSY_STEP_S, wait_s))
        except sqlite3.OperationalError as err:
            if not _is_busy(err):
                raise
            if attempt == attempts - 1:
                raise _busy_error(path, wait_s) from None
            if attempt == 0:
                _waiting(path, wait_s)
    raise AssertionError("unreachable")  # pragma: no cover


def _reframe_lock_free(path: Path, wait_s: float) -> None:
    """Wait (bounded) until no ReFrame session holds the lock file it keeps beside the
    database (``.db.lock``) for writing; NightlyError 'busy' after ``wait_s``."""
    lock_file = path.parent / ".db.lock"
    if not lock_file.is_file():
        return
    lock = InterProcessReaderWriterLock(str(lock_file))
    try:
        if not lock.acquire_read_lock(timeout=min(BUSY_STEP_S, wait_s)):
            _waiting(path, wait_s)
            if not lock.acquire_read_lock(timeout=max(wait_s - BUSY_STEP_S, 0)):
                raise _busy_error(path, wait_s, f"a ReFrame session ({lock_file})")
        lock.release_read_lock()
    except OSError as err:  # a lock file we cannot open: ReFrame will say so itself
        del err


def check_results_db(db_file: Path | str, wait_s: float | None = None) -> None:
    """Refuse, before ReFrame opens (and may write to) it, a file that is not ReFrame's
    results database: not SQLite, truncated, another program's database, or not a
    regular file. A missing or empty file is fine (ReFrame creates it). A database
    locked by another writer is waited for, at most ``wait_s`` seconds, then refused as
    busy (NightlyError), never called damaged (default: :data:`BUSY_WAIT_S`)."""
    wait_s = BUSY_WAIT_S if wait_s is None else wait_s
    path = Path(db_file)
    if not path.exists():
        return
    if not path.is_file():
        raise NightlyError(f"{path}: not a regular file (a directory, FIFO or device): not "
                           "ReFrame's results database")
    if path.stat().st_size == 0:
        return
    _reframe_lock_free(path, wait_s)

    def inspect(timeout: float) -> tuple[set[str], Any]:
        with contextlib.closing(sqlite3.connect(path.resolve().as_uri() + "?mode=ro",
                                                uri=True, timeout=timeout)) as con:
            tables = {row[0] for row in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            return tables, con.execute("PRAGMA quick_check").fetchone()

    try:
        tables, bad = _while_busy(path, inspect, wait_s)
    except sqlite3.Error as err:
        raise NightlyError(f"{path}: not a readable SQLite database ({err}): not ReFrame's "
                           "results database, or damaged; move it aside") from None
    if not RESULTS_TABLES <= tables:
        raise NightlyError(f"{path}: an SQLite database but not ReFrame's results database "
                           f"(tables: {', '.join(sorted(tables)) or 'none'}); move it aside")
    if bad and bad[0] != "ok":
        raise NightlyError(f"{path}: the results database is damaged ({bad[0]}); restore it "
                           "or move it aside")


class Store:
    """ReFrame's results storage (SQLite), through ReFrame's own API. Every error of the
    database is a :class:`NightlyError` naming the file."""

    def __init__(self, db_file: Path | str):
        from reframe.core import config, runtime  # heavy: ReFrame
        from reframe.core.exceptions import ReframeFatalError  # heavy: ReFrame

        check_results_db(db_file)
        self.db_file = str(Path(db_file).resolve())
        try:
            rt = runtime.runtime()
        except ReframeFatalError:  # no runtime yet: a minimal one, like `reframe` builds
            site = config.load_config("<builtin>")
            site.select_subconfig("generic")
            runtime.init_runtime(site)
            rt = runtime.runtime()
        rt.site_config.add_sticky_option("storage/enable", True)
        rt.site_config.add_sticky_option("storage/sqlite_db_file", self.db_file)
        # ReFrame's own accesses wait as long for a writer's lock, then say busy.
        rt.site_config.add_sticky_option("storage/sqlite_conn_timeout", BUSY_WAIT_S)

    @property
    def backend(self):
        from reframe.frontend.reporting.storage import StorageBackend  # heavy: ReFrame
        return StorageBackend.default()

    @contextlib.contextmanager
    def _errors(self):
        from reframe.core.exceptions import ReframeError  # heavy: ReFrame
        try:
            yield
        except (sqlite3.Error, ReframeError) as err:
            if _is_busy(err) or _is_busy(err.__cause__ or err.__context__ or err):
                raise _busy_error(Path(self.db_file), BUSY_WAIT_S) from None
            raise NightlyError(f"{self.db_file}: results database: {err}") from None

    def store(self, report: dict[str, Any], report_file: str = "") -> str:
        with self._errors():
            return self.backend.store(report, report_file)

    @staticmethod
    def session_filter(system: str, kind: str = "nightly") -> str:
        return f'{KIND_KEY} == "{kind}" and {SYSTEM_KEY} == "{system}"'

    def sessions(self, system: str, kind: str = "nightly") -> list[tuple[str, float]]:
        """(uuid, start time) of the stored sessions of this kind and system, oldest first."""
        from reframe.frontend.reporting.utility import QuerySelectorTestcase  # heavy: ReFrame
        if not Path(self.db_file).exists():
            return []
        # Undecoded (decode=False): ReFrame filters on each session's info alone;
        # decoding every whole session (all its test cases) took seconds for years
        # of nightly sessions, and only the info is needed here.
        with self._errors():
            found = self.backend.fetch_sessions(
                QuerySelectorTestcase(sess_filter=self.session_filter(system, kind)),
                decode=False)
        infos = [_session_info(blob) for blob in found]
        out = [(i["uuid"], float(i["time_start_unix"])) for i in infos]
        return sorted(out, key=lambda x: x[1])

    @staticmethod
    def _window(sessions: list[tuple[str, float]]) -> str:
        """A ReFrame query: the time window of these sessions and their uuids."""
        t0 = time.strftime("%Y%m%dT%H%M%S+0000", time.gmtime(math.floor(sessions[0][1])))
        t1 = time.strftime("%Y%m%dT%H%M%S+0000", time.gmtime(math.floor(sessions[-1][1]) + 1))
        uuids = ", ".join(f'"{u}"' for u, _ in sessions)
        return f"{t0}:{t1}?uuid in ({uuids})"

    def compare(self, session: str, previous: list[tuple[str, float]]) -> list[Any]:
        """ReFrame's performance comparison: this session vs the median of ``previous``."""
        from reframe.frontend.reporting import performance_compare  # heavy: ReFrame
        spec = f"{session}/{self._window(previous)}/median:/+pref"
        with self._errors():
            try:
                return performance_compare(spec)
            except Exception as err:  # polars' own errors on stored data it cannot take
                if not type(err).__module__.startswith("polars"):
                    raise
                raise NightlyError(f"{self.db_file}: ReFrame's performance comparison "
                                   f"failed on the stored figures: {err}") from None

    def testcases(self, sessions: list[tuple[str, float]]) -> list[dict[str, Any]]:
        """Every stored test case of these sessions."""
        from reframe.frontend.reporting.utility import parse_query_spec  # heavy: ReFrame
        if not sessions:
            return []
        with self._errors():
            return self.backend.fetch_testcases(parse_query_spec(self._window(sessions)))
