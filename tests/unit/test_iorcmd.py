import dataclasses

import pytest

from fsaccept.benchmarks.ior.command import ior_options, ior_size, ior_tests, planned_bytes
from fsaccept.suite.reference import REFERENCE_DIR, load_reference


@pytest.fixture(scope="module")
def lustre():
    return ior_tests(load_reference(REFERENCE_DIR / "example-lustre.yaml"))


def test_write_bandwidth_is_the_published_command(lustre):
    opts = ior_options("write_bandwidth", lustre["ior_write_bandwidth"], "/fs/t/testfile")
    assert " ".join(opts) == ("-w -a POSIX -F -e -g -k -v -l random -C -t 1m -b 1m -s 100000 -D 45 "
                              "-O stoneWallingWearOut=1 -o /fs/t/testfile")


def test_read_generation_and_read_share_the_status_file(lustre):
    p = lustre["ior_read_bandwidth"]
    gen = ior_options("read_generation", p, "/fs/t/f", status_file="/fs/t/sw")
    read = ior_options("read_bandwidth", p, "/fs/t/f", status_file="/fs/t/sw")
    assert gen[:2] == ["-w", "-a"] and read[:2] == ["-r", "-a"]
    assert "-D 90 -O stoneWallingWearOut=1 -O stoneWallingStatusFile=/fs/t/sw" in " ".join(gen)
    assert "-D 30 -O stoneWallingStatusFile=/fs/t/sw" in " ".join(read)
    assert "stoneWallingWearOut" not in " ".join(read)


def test_random_phases(lustre):
    w = " ".join(ior_options("random_write_iops", lustre["ior_random_write_iops"], "/f"))
    assert w.startswith("-w -a POSIX -F -e -g -k -v -z -l random -C -t 4k -b 16g -s 1 -D 45")
    p = lustre["ior_random_read_iops"]
    gen = " ".join(ior_options("random_read_generation", p, "/f"))
    assert "-t 4m -b 16g" in gen and "-D" not in gen and "-z" not in gen
    read = " ".join(ior_options("random_read_iops", p, "/f"))
    assert read.startswith("-r -a POSIX -F -e -g -k -v -z -l random -C -t 4k -b 16g -s 1 -D 45")


def test_direct_io_adds_odirect():
    p = ior_tests(load_reference(REFERENCE_DIR / "local.yaml"))["ior_write_bandwidth"]
    assert "--posix.odirect" in ior_options("write_bandwidth", p, "/f")


@pytest.mark.parametrize("nbytes, text", [(4096, "4k"), (2**20, "1m"), (16 * 2**30, "16g"),
                                          (2**40, "1t"), (1000, "1000")])
def test_ior_size(nbytes, text):
    assert ior_size(nbytes) == text


def test_planned_bytes(lustre):
    assert planned_bytes(lustre["ior_write_bandwidth"], ranks=8) == 8 * 2**20 * 100000


def test_integrity_phases_write_a_seeded_pattern_and_verify_it_on_another_node():
    p = ior_tests(load_reference(REFERENCE_DIR / "local.yaml"))["ior_data_integrity"]
    write = ior_options("integrity_write", p, "/t/testfile", seed=1234)
    read = ior_options("integrity_read", p, "/t/testfile", seed=1234)
    assert write[:1] == ["-w"] and "-R" not in write and "-D" not in write
    assert read[:1] == ["-r"] and "-R" in read and "-C" in read and "-D" not in read
    for opts in (write, read):
        assert opts[opts.index("-G") + 1] == "1234"
        assert opts[opts.index("-b") + 1] == "16m" and opts[opts.index("-s") + 1] == "2"


# ------------------------------------------------------------- shared file (N-to-1)

def shared(api="MPIIO", collective=False, **extra):
    from fsaccept.benchmarks.ior.command import TestParameters
    return TestParameters(name="ior_shared_write", node_fraction=0.9, ranks_per_node=4,
                          transfer_size=extra.pop("t", 8 * 2**20),
                          block_size=extra.pop("b", 8 * 2**20), segments=1000, deadline_s=45,
                          api=api, collective=collective, **extra)


def flags(argv):
    """Flags and their values as a set of words, with IOR 4.0.0's long name of the
    published -H (show MPI hints)."""
    return {"-H" if a == "--mpiio.showHints" else a for a in argv}


def test_shared_file_write_is_the_published_collective_mpiio_command():
    # Published: ior -w -a MPIIO -c -C -g -b 8m -t 8m -k -H -v -s <n>
    published = "-w -a MPIIO -c -C -g -b 8m -t 8m -k -H -v -s 1000".split()
    ours = ior_options("shared_write", shared(collective=True), "/t/testfile")
    assert set(published) <= flags(ours)
    # What fsaccept adds, the same in every bandwidth phase: fsync, its stonewall and
    # wear-out, the file; and no -F (one file for all ranks).
    assert flags(ours) - set(published) == {"-e", "-D", "45", "-O", "stoneWallingWearOut=1",
                                           "-o", "/t/testfile", "-l", "random"}
    assert "-F" not in ours


def test_shared_file_independent_mpiio_is_the_other_published_command():
    # Published: -a MPIIO -g -t 1M -b 8G (independent I/O: no -c).
    ours = ior_options("shared_write", shared(t=2**20, b=8 * 2**30), "/t/f")
    assert set("-a MPIIO -g -t 1m -b 8g".split()) <= set(ours)
    assert "-c" not in ours and "-F" not in ours


def test_shared_read_reads_what_its_dataset_wrote_and_posix_stays_file_per_process():
    read = ior_options("shared_read", shared(), "/t/f", status_file="/t/s")
    gen = ior_options("shared_read_generation",
                      dataclasses.replace(shared(), generation_deadline_s=60), "/t/f",
                      status_file="/t/s")
    assert "stoneWallingStatusFile=/t/s" in read and "stoneWallingStatusFile=/t/s" in gen
    assert gen[gen.index("-D") + 1] == "60" and "-C" in read
    posix = ior_options("write_bandwidth", shared(api="POSIX"), "/t/f")
    assert posix[:4] == ["-w", "-a", "POSIX", "-F"] and "--mpiio.showHints" not in posix


def test_hints_become_ior_hint_variables_and_striping_lfs_setstripe():
    from fsaccept.benchmarks.ior.command import hint_variables, stripe_commands
    p = shared(hints={"romio_cb_write": "disable", "romio_cb_read": "disable"},
               stripe={"count": -1, "size": 8 * 2**20})
    assert hint_variables(p) == {"IOR_HINT__MPI__romio_cb_write": "disable",
                                 "IOR_HINT__MPI__romio_cb_read": "disable"}
    assert stripe_commands(p, "$fsaccept_data") == [
        'lfs setstripe -c -1 -S 8388608 "$fsaccept_data"']
    assert stripe_commands(shared(), "/d") == []


@pytest.mark.parametrize("entry, message", [
    ({"api": "MPIIO", "direct_io": True}, "direct_io: O_DIRECT is IOR's POSIX option"),
    ({"collective": True}, "collective: collective I/O needs api: MPIIO"),
    ({"hints": {"romio_cb_write": "disable"}}, "hints: MPI-IO hints need api: MPIIO"),
    ({"api": "MPIIO", "hints": {"romio_cb_write\n": "disable"}},
     "hints: 'romio_cb_write\\n' is not a hint name"),
    ({"api": "MPIIO", "hints": {"romio_cb_write": "disable\ntouch x"}},
     "hints.romio_cb_write: control characters"),
])
def test_shared_settings_that_cannot_work_are_refused(entry, message):
    from fsaccept.benchmarks.ior.command import entry_errors
    base = {"transfer_size": "1MiB", "block_size": "1MiB"}
    assert entry_errors("tests.ior_shared_write", {**base, **entry})[0].startswith(
        f"tests.ior_shared_write.{message}")


# ------------------------------------------------------------- data pattern (issue 23)

def test_every_phase_writes_and_verifies_irreducible_data_unless_the_entry_asks():
    p = ior_tests(load_reference(REFERENCE_DIR / "local.yaml"))["ior_data_integrity"]
    for phase in ("integrity_write", "integrity_read"):
        opts = ior_options(phase, p, "/t/f", seed=7)
        assert opts[opts.index("-l") + 1] == "random"  # -R verifies the pattern written
    asked = dataclasses.replace(p, data_pattern="timestamp")
    opts = ior_options("integrity_write", asked, "/t/f", seed=7)
    assert opts[opts.index("-l") + 1] == "timestamp"


def test_only_the_random_pattern_is_irreducible():
    from fsaccept.benchmarks.ior.command import DATA_PATTERNS, pattern_reducible
    assert [p for p in DATA_PATTERNS if not pattern_reducible(p)] == ["random"]
