import pytest

from fsaccept.benchmarks.ior.command import ior_options, ior_size, ior_tests, planned_bytes
from fsaccept.core.reference import REFERENCE_DIR, load_reference


@pytest.fixture(scope="module")
def lustre():
    return ior_tests(load_reference(REFERENCE_DIR / "example-lustre.yaml"))


def test_write_bandwidth_is_the_published_command(lustre):
    opts = ior_options("write_bandwidth", lustre["ior_write_bandwidth"], "/fs/t/testfile")
    assert " ".join(opts) == ("-w -a POSIX -F -e -g -k -v -C -t 1m -b 1m -s 100000 -D 45 "
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
    assert w.startswith("-w -a POSIX -F -e -g -k -v -z -C -t 4k -b 16g -s 1 -D 45")
    p = lustre["ior_random_read_iops"]
    gen = " ".join(ior_options("random_read_generation", p, "/f"))
    assert "-t 4m -b 16g" in gen and "-D" not in gen and "-z" not in gen
    read = " ".join(ior_options("random_read_iops", p, "/f"))
    assert read.startswith("-r -a POSIX -F -e -g -k -v -z -C -t 4k -b 16g -s 1 -D 45")


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
