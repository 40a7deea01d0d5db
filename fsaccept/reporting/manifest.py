"""A tamper-evident run: the SHA-256 of every file its sign-off rests on, and optionally
a site's SSH signature of that list.

(Over 600 lines, one concept: one record, written and verified by the same code, and
its signature.)

``scripts/acceptance`` writes ``manifest.json`` into the run directory after ReFrame
finishes and before ``fsaccept report``: the run report, every regular file in each
test's output and stage directories that the run report names (``rfm_job.sh``,
``rfm_job.out``, ``rfm_job.err``, the benchmark outputs), and each reference file a test
names (``reference_path``): one outside the run directory through its copy, made into
``reference/`` when the manifest is written (the path the run read it at recorded for
information), so that a run directory moved or sent still verifies.  Paths are relative
to the run directory (an older manifest names a reference file outside it absolute).  ``fsaccept report`` verifies it (:func:`verify`):
a file changed, missing, or added in one of those directories, and a test directory the
run report names that it does not cover (made after it was written), make the verdict
at most INCOMPLETE, naming the file or directory.

A site may sign the manifest with an SSH key it already has, in the namespace
``fsaccept-manifest``::

    ssh-keygen -Y sign -f KEY -n fsaccept-manifest RUN_DIR/manifest.json

(``fsaccept manifest write RUN_DIR --sign-key KEY`` runs it), which writes
``manifest.json.sig``; ``fsaccept report --allowed-signers FILE`` verifies it with
``ssh-keygen -Y verify`` (FILE in ssh-keygen's ALLOWED SIGNERS format) and names the
signer.  Without a signature the manifest shows that the files are those it lists,
not who listed them: whoever can edit the run directory can write a new one.

Every file is read as :mod:`fsaccept.core.inputs` reads what a run report names: a
regular file, below the run directory, reached without a symbolic link, within a cap;
and once (:class:`fsaccept.core.inputs.Reader`, the sign-off's): the digest checked is
that of the bytes the report parsed or shows (the run report, a job script, the
reference file), never of a second read a file swapped in between would split.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from fsaccept.core import formatting, inputs, yamlfile
from fsaccept.reporting.runreport import all_testcases, read_run_report
from fsaccept.reporting.verdicts import RunReportError

#: The manifest's file name in the run directory, and its signature's (ssh-keygen's).
MANIFEST = "manifest.json"
SIGNATURE_SUFFIX = ".sig"
#: The SSH signature namespace (ssh-keygen -Y sign/verify -n): a signature made for
#: anything else (a git commit, a file) does not verify a manifest.
NAMESPACE = "fsaccept-manifest"
FORMAT = "fsaccept manifest 1"
#: A manifest: an entry is about 250 bytes (a path of ReFrame's output tree, its 64-digit
#: SHA-256, JSON's punctuation); a test case's directories hold about 10 files
#: (rfm_job.sh, .out, .err, the benchmark's outputs, a stage directory kept); the largest
#: run fsaccept renders is 10,000 test cases (bench/bench_report.py): 250 x 10 x 10,000
#: = 25 MB.  json.loads holds about 6 bytes of memory for each byte it reads (a 234 MB
#: manifest took 1.3 GB), so 32 MiB is at most ~200 MB held; larger is refused unread.
MAX_MANIFEST_BYTES = 32 << 20
#: An SSH signature: a few hundred bytes.
MAX_SIGNATURE_BYTES = 64 << 10
#: A file of a test's directories: as large as a benchmark log may be.
MAX_FILE_BYTES = inputs.MAX_LOG_BYTES
#: The run directory's folder of the copies of the reference files its tests read
#: outside it (byte for byte, digested): a run directory moved or sent verifies where it
#: lands, and its sign-off reads the copy.
COPIES = "reference"
#: Problems named one by one (then a count).
PROBLEMS_SHOWN = 20
_SSH_TIMEOUT_S = 60


class ManifestError(ValueError):
    """A manifest that cannot be written: the message names the file or directory."""


@dataclass
class Integrity:
    """What the sign-off table's Integrity row says, and why it does not verify."""

    verified: bool
    text: str
    #: A manifest was found (or demanded): its failure keeps the verdict from ACCEPTED.
    present: bool = False
    problems: list[str] = field(default_factory=list)
    signer: str = ""


# --------------------------------------------------------------------------- paths


def rebaser(report: dict[str, Any], run_dir: Path | str) -> Callable[[str], str]:
    """A function mapping a path the run report recorded to where it is now: below the
    run directory as the session recorded it (the parent of its ``prefix_output`` and
    ``prefix_stage``), moved to ``run_dir`` (a run directory copied elsewhere, e.g. to
    the vendor, still shows its files); any other path unchanged."""
    info = report.get("session_info") or {}
    out, stage = info.get("prefix_output"), info.get("prefix_stage")
    recorded = None
    if isinstance(out, str) and isinstance(stage, str) and out and stage:
        parents = {os.path.dirname(os.path.abspath(out)),
                   os.path.dirname(os.path.abspath(stage))}
        recorded = parents.pop() if len(parents) == 1 else None
    actual = os.path.abspath(run_dir)

    def rebase(path: str) -> str:
        if recorded is None or recorded == actual:
            return path
        p = os.path.abspath(path)
        if p == recorded or p.startswith(recorded.rstrip("/") + "/"):
            return actual + p[len(recorded):]
        return path
    return rebase


def _name(run_dir: str, path: str) -> str:
    """``path`` relative to the run directory where it lies below it, else absolute."""
    p = os.path.abspath(path)
    return os.path.relpath(p, run_dir) if inputs.is_below(run_dir, p) else p


def _test_directories(report: dict[str, Any], run_dir: str) -> list[tuple[str, str, Any]]:
    """(directory where it is now, ``outputdir`` or ``stagedir``, test name) of each test
    directory the run report names."""
    rebase = rebaser(report, run_dir)
    return [(rebase(tc[key]), key, tc.get("name")) for tc in all_testcases(report)
            for key in ("outputdir", "stagedir") if isinstance(tc.get(key), str) and tc[key]]


def _exists(d: str) -> bool:
    """A directory, not a link to one (a link is not a directory the report reads)."""
    return os.path.isdir(d) and not os.path.islink(d)


def _directories(report: dict[str, Any], run_dir: str) -> list[str]:
    """The test directories (output, stage) the run report names that exist, relative;
    ManifestError for one outside the run directory (the manifest would not cover it)."""
    out = set()
    for d, key, name in _test_directories(report, run_dir):
        if not inputs.is_below(run_dir, d):
            raise ManifestError(f"{d}: {name}'s {key} is not below the run "
                                f"directory {run_dir}: the manifest covers the run's own "
                                "files (run ReFrame with --prefix RUN_DIR)")
        if _exists(d):
            out.add(_name(run_dir, d))
    return sorted(out)


def _uncovered(report: dict[str, Any], run_dir: str, covered: list[str]) -> list[str]:
    """Each test directory the run report names, below the run directory, that exists and
    is neither one the manifest covers nor inside one: made after it was written (a job
    script put there would be shown, never verified).  One outside the run directory is
    never read."""
    covered_set = set(covered)
    out = set()
    for d, _, _ in _test_directories(report, run_dir):
        if not inputs.is_below(run_dir, d) or not _exists(d):
            continue
        name = _name(run_dir, d)
        parts = PurePosixPath(name).parts
        if not any(str(PurePosixPath(*parts[:i])) in covered_set
                   for i in range(1, len(parts) + 1)):
            out.add(name)
    return [f"{one_line(d)}: a test directory the run report names, not covered by the "
            "manifest: added since it was written" for d in sorted(out)]


def _walk(run_dir: str, rel: str) -> list[str]:
    """The regular files below the directory ``rel`` (relative names), links not
    followed: a link is not a file the report reads."""
    found = []
    for here, dirs, files in os.walk(os.path.join(run_dir, rel)):
        dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(here, d)))
        for f in sorted(files):
            full = os.path.join(here, f)
            if os.path.isfile(full) and not os.path.islink(full):
                found.append(os.path.relpath(full, run_dir))
    return found


def _references(report: dict[str, Any]) -> set[str]:
    return {tc["reference_path"] for tc in all_testcases(report)
            if isinstance(tc.get("reference_path"), str) and tc["reference_path"]}


def _digest(reads: inputs.Reader, run_dir: str, name: str) -> str:
    """SHA-256 of a manifest entry: below the run directory as a run report's files are
    read; a reference file outside it as a reference file is (regular, capped)."""
    if os.path.isabs(name):
        return reads.sha256(name, yamlfile.MAX_BYTES, "a reference file", below=False)
    return reads.sha256(os.path.join(run_dir, name), MAX_FILE_BYTES, "a file of the run")


# --------------------------------------------------------------------------- writing


def _put(root: str, name: str, data: bytes) -> None:
    """Write ``data`` as the new file ``root/name`` (``COPIES/BASE``), through no link;
    one already there is kept when it holds the same bytes (the manifest written again),
    else refused: not ours to replace."""
    folder, base = os.path.split(name)
    try:
        dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as err:
        raise ManifestError(f"{root}: cannot open the run directory: {err.strerror}") from None
    try:
        try:
            os.mkdir(folder, 0o755, dir_fd=dir_fd)
        except FileExistsError:
            pass
        sub = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
        try:
            try:
                fd = os.open(base, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                             0o644, dir_fd=sub)
            except FileExistsError:
                there = inputs.read_below(root, os.path.join(root, name), yamlfile.MAX_BYTES,
                                          "a copy of a reference file")
                if there != data:
                    raise ManifestError(f"{os.path.join(root, name)}: already there, with other "
                                        "bytes than the reference file the run read: not "
                                        "replaced (remove it to write the manifest again)")
                return
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        finally:
            os.close(sub)
    except inputs.InputError as err:
        raise ManifestError(str(err)) from None
    except OSError as err:
        raise ManifestError(f"{os.path.join(root, name)}: cannot copy the reference file "
                            f"there: {err.strerror or err}") from None
    finally:
        os.close(dir_fd)


def _copy_references(reads: inputs.Reader, root: str,
                     references: set[str]) -> dict[str, str]:
    """Copy each reference file outside the run directory into ``COPIES/`` (byte for
    byte, the bytes read once): {the copy's name: the path the run report records}."""
    copies: dict[str, str] = {}
    for ref in sorted(references):
        if inputs.is_below(root, os.path.abspath(ref)):
            continue  # in the run directory already: listed as its other files
        try:
            data = reads.read(ref, yamlfile.MAX_BYTES, "a reference file", below=False)
        except inputs.InputError as err:
            raise ManifestError(str(err)) from None
        base = os.path.basename(ref) or "reference.yaml"
        name, n = f"{COPIES}/{base}", 2
        while name in copies:  # two files of one name, in different folders
            name, n = f"{COPIES}/{n}-{base}", n + 1
        _put(root, name, data)
        copies[name] = ref
    return copies


def build(run_dir: Path | str, run_report: Path | str, *, signer: str = "",
          extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """The manifest of the run in ``run_dir`` whose run report is ``run_report``.  Each
    reference file the tests recorded outside the run directory is copied into it first
    (``COPIES/``): the manifest digests the copy, and names the file it copies
    (``references``: the copy -> the path recorded), for information."""
    root = os.path.abspath(run_dir)
    src = os.path.abspath(run_report)
    if not inputs.is_below(root, src):
        raise ManifestError(f"{src}: the run report is not below the run directory {root}")
    reads = inputs.Reader(root)  # the run report digested from the bytes parsed
    report = read_run_report(reads, src)  # RunReportError (a ValueError) names the file
    dirs = _directories(report, root)
    for e in extra:
        if not inputs.is_below(root, os.path.join(root, e)):
            raise ManifestError(f"{e}: not below the run directory {root}: not covered")
    names = {_name(root, src), *(_name(root, os.path.join(root, e)) for e in extra)}
    names.update(f for d in dirs for f in _walk(root, d))
    copies = _copy_references(reads, root, _references(report))
    names.update(_name(root, r) for r in _references(report) if r not in copies.values())
    names.update(copies)
    files = {}
    for name in sorted(names):
        try:
            files[name] = _digest(reads, root, name)
        except inputs.InputError as err:
            raise ManifestError(str(err)) from None
    return {"format": FORMAT, "written_by": "fsaccept manifest",
            "run_report": _name(root, src), **({"signer": signer} if signer else {}),
            **({"references": copies} if copies else {}),
            "directories": dirs, "files": files}


def write(run_dir: Path | str, run_report: Path | str | None = None, *, signer: str = "",
          extra: tuple[str, ...] = ()) -> Path:
    """Write ``run_dir/manifest.json``; returns its path."""
    run_report = run_report or Path(run_dir) / "run-report.json"
    data = build(run_dir, run_report, signer=signer, extra=extra)
    path = Path(run_dir) / MANIFEST
    try:
        if path.is_symlink():
            raise ManifestError(f"{path}: a symbolic link: not written through")
        # ASCII only: a hostile file name cannot carry a line break into the file.
        path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=True) + "\n")
    except OSError as err:
        raise ManifestError(f"{path}: cannot write the manifest: {err.strerror or err}") \
            from None
    return path


def sign(manifest: Path | str, key: Path | str) -> Path:
    """Sign ``manifest`` with the SSH key ``key`` (ssh-keygen -Y sign, namespace
    fsaccept-manifest): writes ``manifest.sig``, replacing an earlier one."""
    ssh_keygen = shutil.which("ssh-keygen")
    if ssh_keygen is None:
        raise ManifestError("ssh-keygen not found (Debian: apt-get install openssh-client): "
                            "cannot sign the manifest")
    sig = Path(str(manifest) + SIGNATURE_SUFFIX)
    if os.path.lexists(sig):  # not ours to remove; ssh-keygen would ask
        raise ManifestError(f"{sig}: already there: remove it to sign the manifest again")
    try:
        done = subprocess.run([ssh_keygen, "-q", "-Y", "sign", "-f", str(key), "-n", NAMESPACE,
                               str(manifest)], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=_SSH_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ManifestError(f"{key}: cannot sign {manifest}: {err}") from None
    if done.returncode != 0 or not sig.is_file():
        why = " ".join(done.stderr.split())[:300] or f"ssh-keygen exit {done.returncode}"
        raise ManifestError(f"{key}: cannot sign {manifest}: {why}")
    return sig


# --------------------------------------------------------------------------- verifying


def _load(path: Path, reads: inputs.Reader, beside: bool) -> dict[str, Any]:
    """The manifest's content (InputError or ValueError naming it otherwise)."""
    raw = reads.read(path, MAX_MANIFEST_BYTES, "the manifest", below=beside)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{path}: not JSON ({str(err)[:100]})") from None
    files = data.get("files") if isinstance(data, dict) else None
    dirs = data.get("directories") if isinstance(data, dict) else None
    if (not isinstance(data, dict) or data.get("format") != FORMAT
            or not isinstance(files, dict) or not isinstance(dirs, list)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
            or not all(isinstance(d, str) for d in dirs)
            or not isinstance(data.get("signer", ""), str)
            or not isinstance(data.get("references", {}), dict)
            or not all(isinstance(k, str) and isinstance(v, str)
                       for k, v in data.get("references", {}).items())):
        raise ValueError(f"{path}: not an fsaccept manifest ({FORMAT!r} with files and "
                         "directories)")
    return {"raw": raw, **data}


def listed(reads: inputs.Reader, manifest: Path | str | None = None) -> dict[str, Any] | None:
    """The manifest :func:`verify` reads (beside the run report, or ``manifest``), read
    now through the same reader (the same bytes), for what the sign-off takes from it
    before it verifies it: the run's ceilings' digest, the copy of its reference file.
    None when there is none or it cannot be read (:func:`verify` says why)."""
    beside = manifest is None
    path = Path(reads.root) / MANIFEST if beside else Path(manifest)
    if beside and not os.path.lexists(path):
        return None
    try:
        return _load(path, reads, beside)
    except (inputs.InputError, ValueError):
        return None


def reference_copy(listed_manifest: dict[str, Any] | None, run_dir: Path | str,
                   recorded: str) -> str | None:
    """Where the run directory keeps its copy of the reference file the run report
    records as ``recorded`` (the manifest's ``references``), or None (an older run
    directory: the file is read where the run read it).  The copy is judged as the
    reference: its SHA-256 must be the one the tests recorded, and the manifest's."""
    for name, original in (listed_manifest or {}).get("references", {}).items():
        if (original == recorded and not os.path.isabs(name) and not _relative_problem(name)
                and PurePosixPath(name).parts[:1] == (COPIES,)):
            return os.path.join(os.path.abspath(run_dir), name)
    return None


def one_line(text: str) -> str:
    """``text`` on one line: a file name may hold a line break (or any character but
    ``/`` and NUL); it is shown escaped, never as a second line of the console."""
    return formatting.one_line(text, sep=None)


def _relative_problem(name: str) -> str:
    """Why a relative manifest entry is not a plain path below the run directory."""
    if not name or "\x00" in name:
        return "an empty or NUL-holding name"
    if ".." in PurePosixPath(name).parts:
        return "a name with '..'"
    return ""


def _file_problems(data: dict[str, Any], reads: inputs.Reader, run_dir: str,
                   references: set[str]) -> list[str]:
    """Each file of the manifest that changed, is missing, cannot be read safely, or is
    named where the manifest may not name one; each file added in a covered directory."""
    problems = []
    files: dict[str, str] = data["files"]
    for name, sha in files.items():
        shown = one_line(name)
        if os.path.isabs(name) and name not in references:
            problems.append(f"{shown}: named by the manifest, outside the run directory and "
                            "not a reference file of the run report: not read")
            continue
        why = "" if os.path.isabs(name) else _relative_problem(name)
        if why:
            problems.append(f"{shown}: {why} in the manifest: not read")
            continue
        full = name if os.path.isabs(name) else os.path.join(run_dir, name)
        if not os.path.lexists(full):
            problems.append(f"{shown} is missing (the manifest lists it)")
            continue
        try:
            now = _digest(reads, run_dir, name)
        except inputs.InputError as err:
            problems.append(one_line(str(err)))
            continue
        if now != sha.lower():
            problems.append(f"{shown} changed since the manifest was written")
    problems += [f"{one_line(name)}: a copy of a reference file the manifest names but "
                 "does not digest" for name in data.get("references", {}) if name not in files]
    for d in data["directories"]:
        if os.path.isabs(d) or _relative_problem(d):
            problems.append(f"{one_line(d)}: not a directory below the run: not read")
            continue
        if os.path.isdir(os.path.join(run_dir, d)):
            problems += [f"{one_line(f)} was added since the "
                         "manifest was written" for f in _walk(run_dir, d) if f not in files]
    return problems


def _memory_file(data: bytes) -> int:
    """A descriptor of an anonymous file in memory holding ``data`` (memfd), at its start."""
    fd = os.memfd_create("fsaccept-manifest", os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


def _ssh_keygen(args: list[str], sig: bytes, stdin: bytes,
                allowed: bytes | None = None) -> subprocess.CompletedProcess:
    """ssh-keygen with the signature (``-s``), and the allowed signers (``-f``) when given,
    read from files in memory (/dev/fd/N): the very bytes the sign-off read, once;
    nothing is written anywhere to verify it."""
    fds = [_memory_file(sig)]
    try:
        if allowed is not None:
            fds.append(_memory_file(allowed))
            args = [*args, "-f", f"/dev/fd/{fds[1]}"]
        return subprocess.run(["ssh-keygen", *args, "-s", f"/dev/fd/{fds[0]}"], input=stdin,
                              capture_output=True, pass_fds=tuple(fds),
                              timeout=_SSH_TIMEOUT_S)
    finally:
        for fd in fds:
            os.close(fd)


def _signature(data: dict[str, Any], sig_path: Path, reads: inputs.Reader, beside: bool,
               allowed: str) -> tuple[str, str]:
    """(signer principal, '') when the signature verifies, else ('', why not)."""
    if shutil.which("ssh-keygen") is None:
        return "", ("ssh-keygen not found (Debian: openssh-client): the signature cannot "
                    "be checked")
    if not os.path.lexists(sig_path):
        return "", f"the manifest is not signed (no {sig_path.name}; --allowed-signers given)"
    try:
        sig = reads.read(sig_path, MAX_SIGNATURE_BYTES, "a signature", below=beside)
        signers = reads.read(allowed, MAX_SIGNATURE_BYTES * 16, "an allowed-signers file",
                             below=False)
    except inputs.InputError as err:
        return "", one_line(str(err))
    try:
        principal = data.get("signer", "")
        if not principal:  # the principals the allowed-signers file gives this key
            found = _ssh_keygen(["-Y", "find-principals"], sig, b"", signers)
            names = found.stdout.decode("utf-8", "replace").split()
            if found.returncode != 0 or not names:
                return "", (f"bad signature: {sig_path.name}'s key is not in the "
                            f"allowed signers ({allowed})")
            principal = names[0]
        done = _ssh_keygen(["-Y", "verify", "-I", principal, "-n", NAMESPACE], sig,
                           data["raw"], signers)
    except (OSError, subprocess.TimeoutExpired) as err:
        return "", f"the signature cannot be checked: ssh-keygen: {err}"
    if done.returncode != 0:
        why = " ".join(done.stderr.decode("utf-8", "replace").split())[:200]
        return "", (f"bad signature: {sig_path.name} does not verify the manifest as signed "
                    f"by {principal!r} with the allowed signers {allowed}"
                    + (f" ({why})" if why else ""))
    return one_line(principal), ""


def verify(reads: inputs.Reader, run_report: Path | str, report: dict[str, Any],
           manifest: Path | str | None = None,
           allowed_signers: Path | str | None = None) -> Integrity:
    """Verify the manifest beside ``run_report`` (or ``manifest``): every digest, the
    files added in the directories it covers, each test directory the run report names
    covered, and with ``allowed_signers`` its signature.  ``report`` is the run report as
    parsed from the bytes ``reads`` (rooted at the run report's directory) read: every
    digest is of the bytes ``reads`` read or reads now, once (a file the report showed is
    digested as it was shown)."""
    run_dir = reads.root  # a run report elsewhere is not one it lists: not verified
    beside = manifest is None
    path = Path(run_dir) / MANIFEST if beside else Path(manifest)
    demanded = not beside or allowed_signers is not None
    if beside and not os.path.lexists(path):
        return Integrity(False, "not verified: no manifest"
                         + (" (--allowed-signers given)" if demanded else ""), demanded,
                         [f"no manifest beside the run report ({path})"] if demanded else [])
    try:
        data = _load(path, reads, beside)
    except (inputs.InputError, ValueError) as err:
        return _failed([one_line(str(err))])
    own = _name(run_dir, str(run_report))
    if own not in data["files"]:
        return _failed([f"{path}: does not list the run report {own}"])
    problems = _file_problems(data, reads, run_dir, _references(report))
    problems += _uncovered(report, run_dir, data["directories"])
    if problems:
        return _failed(problems)
    count = f"{len(data['files']):,} files"
    if allowed_signers is None:
        signed = os.path.lexists(str(path) + SIGNATURE_SUFFIX)
        return Integrity(True, f"verified ({path.name}, {count}; "
                         + ("signed, but the signature not checked: give --allowed-signers "
                            "FILE)" if signed else "not signed)"), True)
    signer, why = _signature(data, Path(str(path) + SIGNATURE_SUFFIX), reads, beside,
                             str(allowed_signers))
    if why:
        return _failed([why])
    return Integrity(True, f"verified, signed by {signer} ({path.name}, {count})", True,
                     signer=signer)


def _failed(problems: list[str]) -> Integrity:
    problems = [one_line(p) for p in problems]
    first = problems[0] + (f" (and {len(problems) - 1:,} more)" if len(problems) > 1 else "")
    shown = problems[:PROBLEMS_SHOWN]
    if len(problems) > PROBLEMS_SHOWN:
        shown.append(f"(and {len(problems) - PROBLEMS_SHOWN:,} more files)")
    return Integrity(False, f"not verified: {first}", True, shown)


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:

    ap = argparse.ArgumentParser(
        prog="fsaccept manifest",
        description="write or verify a run directory's manifest of SHA-256 digests "
                    f"({MANIFEST}; signed with ssh-keygen -Y sign -n {NAMESPACE})")
    sub = ap.add_subparsers(dest="action", required=True)
    w = sub.add_parser("write", help=f"write RUN_DIR/{MANIFEST}")
    w.add_argument("run_dir", metavar="RUN_DIR")
    w.add_argument("--run-report", metavar="FILE",
                   help="the run report (default: RUN_DIR/run-report.json)")
    w.add_argument("--include", metavar="FILE", action="append", default=[],
                   help="a further file of the run directory to cover (e.g. ceilings.yaml)")
    w.add_argument("--sign-key", metavar="KEY", help="sign it with this SSH private key "
                   f"(ssh-keygen -Y sign -n {NAMESPACE}): writes {MANIFEST}{SIGNATURE_SUFFIX}")
    w.add_argument("--signer", metavar="PRINCIPAL", default="",
                   help="the principal the signature is verified as (in the manifest)")
    v = sub.add_parser("verify", help="verify a run report's manifest")
    v.add_argument("run_report", metavar="RUN_REPORT")
    v.add_argument("--manifest", metavar="FILE", help=f"default: {MANIFEST} beside RUN_REPORT")
    v.add_argument("--allowed-signers", metavar="FILE",
                   help="verify the signature (ssh-keygen's allowed signers format)")
    args = ap.parse_args(argv)
    try:
        if args.action == "write":
            run_report = args.run_report or os.path.join(args.run_dir, "run-report.json")
            path = write(args.run_dir, run_report, signer=args.signer,
                         extra=tuple(args.include))
            print(f"manifest: {path}")
            if args.sign_key:
                print(f"manifest: {sign(path, args.sign_key)}")
            return 0
        reads = inputs.Reader(os.path.dirname(os.path.abspath(args.run_report)))
        integrity = verify(reads, args.run_report, read_run_report(reads, args.run_report),
                           args.manifest, args.allowed_signers)
    except (ManifestError, RunReportError) as err:
        print(formatting.prefixed_lines("fsaccept manifest: ", err), file=sys.stderr)
        return 2
    for problem in integrity.problems:
        print(f"  {problem}")
    print(f"integrity: {integrity.text}")
    return 0 if integrity.verified else 1
