import hashlib
import re
from pathlib import Path

import pytest
import yaml

from fsaccept.benchmarks import registry
from fsaccept.benchmarks.ior.command import ior_tests, parameters
from fsaccept.suite import reference as suite_reference
from fsaccept.suite.reference import (REFERENCE_DIR, ReferenceError, format_size, load_reference,
                                     parse_size)


def write(tmp_path, data, name="sys.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


@pytest.fixture
def local_data():
    return yaml.safe_load((REFERENCE_DIR / "local.yaml").read_text())


@pytest.mark.parametrize("name", sorted(p.name for p in REFERENCE_DIR.glob("*.yaml")))
def test_every_shipped_reference_file_is_valid(name):
    ref = load_reference(REFERENCE_DIR / name)
    # Named after its system, or a variant of one (local-gluster-replica: the same
    # system's replicated volume, for degraded mode).
    stem = name.removesuffix(".yaml")
    assert stem in ref.systems or any(stem.startswith(s + "-") for s in ref.systems)
    assert ref.system == ref.systems[0]


def test_example_lustre_carries_the_published_figures():
    ref = load_reference(REFERENCE_DIR / "example-lustre.yaml")
    figures = {k: (t.threshold.value, t.threshold.unit) for k, t in ior_tests(ref).items()
               if t.threshold}  # the integrity check has none: any bad transfer fails
    assert figures == {
        "ior_write_bandwidth": (3427179.21, "MiB/s"),
        "ior_read_bandwidth": (3818284.19, "MiB/s"),
        "ior_random_write_iops": (24807129.18, "IOPS"),
        "ior_random_read_iops": (35098607.79, "IOPS"),
        # Illustrative (another system's published shared-file run), marked so in the file.
        "ior_shared_write": (344016, "MiB/s"),
        "ior_shared_read": (614329, "MiB/s"),
    }
    assert ior_tests(ref)["ior_write_bandwidth"].ranks_per_node == 4
    assert ior_tests(ref)["ior_random_read_iops"].ranks_per_node == 32


def test_sizes_are_binary_and_typed(local_data, tmp_path):
    t = ior_tests(load_reference(write(tmp_path, local_data)))["ior_random_read_iops"]
    assert (t.transfer_size, t.generation_transfer_size) == (4096, 4 * 2**20)


@pytest.mark.parametrize("text, nbytes", [("4096", 4096), (4096, 4096), ("4KiB", 4096),
                                          ("1MiB", 2**20), ("16GiB", 16 * 2**30), ("2TiB", 2**41)])
def test_parse_size(text, nbytes):
    assert parse_size(text) == nbytes
    assert parse_size(format_size(nbytes)) == nbytes


@pytest.mark.parametrize("text", ["1MB", "1m", "0", "-1KiB", "1.5GiB", ""])
def test_parse_size_refuses_ambiguous_units(text):
    with pytest.raises(ValueError, match="not a binary size"):
        parse_size(text)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["tests"]["ior_write_bandwidth"].update(node_fraction=1.5),
     "tests.ior_write_bandwidth.node_fraction: 1.5 is greater than the maximum of 1"),
    (lambda d: d["tests"]["ior_write_bandwidth"].update(node_fraction=0),
     "tests.ior_write_bandwidth.node_fraction: 0 is less than or equal to the minimum of 0"),
    (lambda d: d["tests"]["ior_write_bandwidth"]["threshold"].update(value=-5),
     "tests.ior_write_bandwidth.threshold.value: -5 is less than or equal to the minimum of 0"),
    (lambda d: d["tests"]["ior_write_bandwidth"]["threshold"].update(unit="MB/s"),
     "tests.ior_write_bandwidth.threshold.unit: 'MB/s' is not allowed here: use 'MiB/s'"),
    (lambda d: d["tests"]["ior_write_bandwidth"].update(transfer_size="1MB"),
     "tests.ior_write_bandwidth.transfer_size: '1MB' is not a binary size"),
    (lambda d: d["tests"]["ior_write_bandwidth"].update(colour="red"),
     "tests.ior_write_bandwidth: unknown key(s) 'colour'; allowed: block_size, data_pattern, deadline_s, "
     "direct_io, judge, max_cov, min_cache_ratio, node_fraction, outlier_fraction, ranks_per_node, read_other_node, "
     "repetitions, segments, threshold, transfer_size"),
    # A bad value of a key IOR's entries share: that error alone, no "unknown key(s)" of
    # none beside it.
    (lambda d: d["tests"]["ior_write_bandwidth"].update(repetitions=0),
     "tests.ior_write_bandwidth.repetitions: 0 is less than the minimum of 1"),
    (lambda d: d["tests"]["ior_write_bandwidth"].update(max_cov=1.5),
     "tests.ior_write_bandwidth.max_cov: 1.5 is greater than the maximum of 1"),
    (lambda d: d["tests"]["ior_write_bandwidth"].update(judge="median"),
     "tests.ior_write_bandwidth.judge: 'median' is not one of ['mean', 'min']"),
    # The keys allowed are the catalogue's (declared once): read from it, never listed here.
    (lambda d: d["tests"].update(ior_bogus={}),
     "tests: unknown key(s) 'ior_bogus'; allowed: " + ", ".join(
         sorted(k for b in registry.BENCHMARKS.values() for k in b.reference_keys
                if not k.startswith("^"))
         + sorted(k.strip("^$").replace("[a-z0-9_]+", "*")
                  for b in registry.BENCHMARKS.values() for k in b.reference_keys
                  if k.startswith("^")))),
    (lambda d: d["tests"]["ior_read_bandwidth"].pop("generation_deadline_s"),
     "tests.ior_read_bandwidth: 'generation_deadline_s' is a required property"),
    (lambda d: d["tests"]["ior_write_bandwidth"].update(deadline_s=2.5),
     "tests.ior_write_bandwidth.deadline_s: 2.5 is not of type 'integer'"),
    (lambda d: d.pop("target"), "(top level): 'target' is a required property"),
])
def test_schema_errors_name_the_file_and_the_key(local_data, tmp_path, edit, message):
    edit(local_data)
    path = write(tmp_path, local_data)
    with pytest.raises(ReferenceError) as err:
        load_reference(path)
    assert f"{path}: {message}" in str(err.value)


def test_every_error_is_reported_not_just_the_first(local_data, tmp_path):
    local_data["tests"]["ior_write_bandwidth"]["node_fraction"] = 2
    local_data["tests"]["ior_read_bandwidth"]["ranks_per_node"] = 0
    with pytest.raises(ReferenceError) as err:
        load_reference(write(tmp_path, local_data))
    assert len(str(err.value).splitlines()) == 2


def test_random_tests_need_block_larger_than_transfer(local_data, tmp_path):
    local_data["tests"]["ior_random_write_iops"]["block_size"] = "4KiB"
    with pytest.raises(ReferenceError, match=r"tests.ior_random_write_iops.block_size: random "
                                             r"offsets need block_size > transfer_size"):
        load_reference(write(tmp_path, local_data))


def test_block_must_be_a_multiple_of_transfer(local_data, tmp_path):
    local_data["tests"]["ior_write_bandwidth"]["block_size"] = "1536KiB"
    with pytest.raises(ReferenceError, match="1536KiB is not a multiple of transfer_size 1MiB"):
        load_reference(write(tmp_path, local_data))


def test_yaml_syntax_error_names_the_file(tmp_path):
    path = write(tmp_path, "system: x\ntests: [unclosed\n")
    with pytest.raises(ReferenceError, match=f"{path}: not valid YAML"):
        load_reference(path)


def test_missing_file_names_the_file(tmp_path):
    with pytest.raises(ReferenceError, match=f"{tmp_path}/nope.yaml: cannot read reference file"):
        load_reference(tmp_path / "nope.yaml")


def test_missing_test_names_the_key_and_the_check(local_data, tmp_path):
    del local_data["tests"]["ior_write_bandwidth"]
    del local_data["nightly"]["tests"]["ior_write_bandwidth"]  # else refused (below)
    ref = load_reference(write(tmp_path, local_data))
    with pytest.raises(ReferenceError, match=r"tests.ior_write_bandwidth: missing \(needed by "
                                             r"IORWriteBandwidth\); the file has: "):
        parameters(ref, "ior_write_bandwidth", needed_by="IORWriteBandwidth")


def test_threshold_becomes_a_lower_bound_reframe_reference(local_data, tmp_path):
    ref = load_reference(write(tmp_path, local_data))
    assert ref.thresholds("ior_write_bandwidth")[""].as_reframe_reference() == \
        (1, -0.1, None, "MiB/s")


# -- hostile files: each refused with FILE: key or line: message, never a traceback

def _local_text():
    return (REFERENCE_DIR / "local.yaml").read_text()


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("    node_fraction: 0.9          # of 4 nodes",
                         "    node_fraction: 0.9\n    node_fraction: 0.01 # of 4 nodes", 1),
     r"tests.ior_write_bandwidth.node_fraction: duplicate key \(line \d+; first on line \d+\)"),
    (lambda t: t.replace("    segments: 4096              # caps", "    segments: 4096.0  # caps"),
     r"tests.ior_write_bandwidth.segments: 4096.0 is not a whole number: write 4096"),
    (lambda t: t.replace("threshold: {value: 1, unit: MiB/s", "threshold: {value: .nan, unit: "
                         "MiB/s", 1), r"tests.ior_write_bandwidth.threshold.value: nan is not a "
                                      "finite number"),
    (lambda t: t.replace("node_fraction: 0.9          # of 4", "node_fraction: .inf # of 4", 1),
     r"node_fraction: inf is not a finite number"),
    (lambda t: t.replace("  ior_write_bandwidth:", "  1:", 1),
     r"tests: key 1 is a int, not a name"),
    (lambda t: t.replace("block_size: 1MiB", "block_size: 2048TiB", 1),
     r"is not a sensible size"),
    # YAML 1.1 would silently read these as 8, 16 and 90.
    (lambda t: t.replace("    segments: 4096              # caps", "    segments: 010  # caps"),
     r"line \d+: 010 is read by YAML as 8: write the number in decimal"),
    (lambda t: t.replace("    segments: 4096              # caps", "    segments: 0x10 # caps"),
     r"line \d+: 0x10 is read by YAML as 16"),
    (lambda t: t.replace("    segments: 4096              # caps", "    segments: 1:30 # caps"),
     r"line \d+: 1:30 is read by YAML as 90"),
])
def test_hostile_reference_files_are_refused_naming_file_and_key(tmp_path, edit, message):
    path = tmp_path / "local.yaml"
    text = edit(_local_text())
    assert text != _local_text()
    path.write_text(text)
    with pytest.raises(ReferenceError, match=f"{path}: .*{message}"):
        load_reference(path)


def test_billion_laughs_is_refused_at_once(tmp_path):
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{c}: &{c} [{', '.join(['*' + p] * 12)}]"
              for p, c in zip("abcdefgh", "bcdefghi")]  # 12**9 x's once expanded
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReferenceError, match=rf"{path}: line \d+: more than 20 YAML aliases"):
        load_reference(path)
    # Past the alias budget, refused while reading, whatever they expand to.
    path.write_text("a: &a 1\nb: [" + ", ".join(["*a"] * 21) + "]\n")
    with pytest.raises(ReferenceError, match=rf"{path}: line 2: more than 20 YAML aliases"):
        load_reference(path)


@pytest.mark.parametrize("content, message", [
    (b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary file"),
    (b"system: \xff\xfe local\n", "not UTF-8 text"),
    (b"", "(top level)"),
])
def test_binary_empty_and_non_utf8_files_are_refused(tmp_path, content, message):
    path = tmp_path / "ref.yaml"
    path.write_bytes(content)
    with pytest.raises(ReferenceError, match=re.escape(f"{path}: ") + ".*" + re.escape(message)):
        load_reference(path)


def test_node_rounding_defaults_up_and_example_lustre_rounds_down_as_published(tmp_path):
    assert load_reference(REFERENCE_DIR / "local.yaml").node_rounding == "up"
    assert load_reference(REFERENCE_DIR / "example-lustre.yaml").node_rounding == "down"
    text = (REFERENCE_DIR / "local.yaml").read_text() + "node_rounding: nearest\n"
    path = tmp_path / "r.yaml"
    path.write_text(text)
    with pytest.raises(ReferenceError, match=rf"{path}: node_rounding: 'nearest' is not one of"):
        load_reference(path)


@pytest.mark.parametrize("text, message", [
    ("system: x\ntarget: &t {path: /x, self: *t}\n", "target.self: a YAML alias"),
    ("system: x\ntests: &a [1, *a]\n", r"tests\[1\]: a YAML alias"),
])
def test_a_recursive_alias_is_refused_not_a_recursion_error(tmp_path, capsys, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ReferenceError, match=rf"{path}: {message} \(\*name\) inside the value "
                                             "it names"):
        load_reference(path)
    from fsaccept.cli import main
    assert main(["reference", str(path)]) == 2
    assert f"{path}: " in capsys.readouterr().err


def test_yaml_merge_keys_are_read_as_yaml_defines_them(tmp_path):
    from fsaccept.core import yamlfile
    text = _local_text().replace("  ior_write_bandwidth:\n", "  ior_write_bandwidth: &w\n", 1)
    shared = ("    node_fraction: 0.9\n    ranks_per_node: 1\n    transfer_size: 1MiB\n"
              "    block_size: 1MiB\n")
    text = text.replace("  ior_read_bandwidth:\n" + shared, "  ior_read_bandwidth:\n    <<: *w\n")
    assert "<<: *w" in text and "&w" in text
    path = write(tmp_path, text)
    # The keys beside << override the merged ones (segments, deadline_s here).
    assert yamlfile.load(path) == yamlfile.load(REFERENCE_DIR / "local.yaml")
    load_reference(path)
    # Merged keys are held to the same rules as any other.
    for bad, message in [("t:\n  <<: {1: x}\n", "t: key 1 is a int, not a name"),
                         ("t:\n  <<: 3\n", "not valid YAML: .*expected a mapping")]:
        with pytest.raises(ReferenceError, match=f"{write(tmp_path, bad)}: {message}"):
            load_reference(tmp_path / "sys.yaml")


# -- `fsaccept reference FILE` refuses what the run refuses before any job: the same checks

def _edit(text, old, new):
    assert old in text, old
    return text.replace(old, new, 1)


@pytest.mark.parametrize("edit, message", [
    # The run's target guard (fsaccept.core.guards.check_path_text).
    (lambda t: _edit(t, "  path: /var/tmp\n", "  path: var/tmp\n"),
     "target.path: 'var/tmp' is not an absolute path"),
    (lambda t: _edit(t, "  path: /var/tmp\n", '  path: "/var/tmp\\nx"\n'),
     r"target.path: '/var/tmp\\nx' holds control characters \('\\n'\)"),
    # A character one of the file's benchmarks splits paths on (the registry's
    # unsafe_path_chars): refused here as every run refuses it.
    (lambda t: _edit(t, "  path: /var/tmp\n", "  path: /var/tmp/a@b\n"),
     r"target.path: '/var/tmp/a@b' holds '@': IOR reads '@' in -o as a separator between "
     r"several files \(FILENAME_DELIMITER\) \(tests.ior_write_bandwidth\); choose"),
    (lambda t: _edit(t, "  path: /var/tmp\n", "  path: /var/tmp/a:b\n"),
     r"target.path: '/var/tmp/a:b' holds ':': fio reads ':' in directory= as a separator "
     r"between several directories \(tests.fio_"),
    # A benchmark's rule between an entry and the target (the registry's target_rules).
    (lambda t: _edit(t, "  ior_shared_write:\n", "  ior_shared_write:\n"
                                                   "    stripe: {count: 4}\n"),
     r"tests.ior_shared_write.stripe: striping is a Lustre setting \(lfs setstripe\) "
     "and the target is ext4: remove it"),
    # The fio check's set-up (fsaccept.benchmarks.fio.command: parameters, thresholds).
    (lambda t: _edit(t, "randread_4k_direct_iops: {value: 1,",
                     "randread_4k_direct_iopz: {value: 1,"),
     r"tests.fio_randread_direct.thresholds.randread_4k_direct_iopz: not a figure of this "
     "test; it reports: randread_4k_direct_iops"),
    (lambda t: _edit(t, "    file_size: 128MiB           # far less", "    # far less"),
     "tests.fio_randread_buffered.file_size: required for a randread_buffered test"),
    (lambda t: _edit(t, "seq_read_1m_direct_bw: {value: 1, unit: MiB/s",
                     "seq_read_1m_direct_bw: {value: 1, unit: IOPS"),
     r"tests.fio_seq_read.thresholds.seq_read_1m_direct_bw.unit: 'IOPS', but "),
    (lambda t: _edit(t, "  fio_seq_read:\n", "  fio_seq_reed:\n"),
     "tests: unknown key\\(s\\) 'fio_seq_reed'; allowed: checkpoint_restore, "),
    # A test key no check reads (the mdtest checks read mdtest_easy and mdtest_hard).
    (lambda t: _edit(t, "  mdtest_easy:\n", "  mdtest_eazy:\n"),
     r"tests: unknown key\(s\) 'mdtest_eazy'; allowed: .*mdtest_easy, mdtest_hard"),
    # The mdtest check's set-up (fsaccept.benchmarks.mdtest.command.parameters).
    (lambda t: _edit(t, "    read_bytes: 3901\n", "    read_bytes: 4000\n"),
     "tests.mdtest_hard.read_bytes: 4000 is more than write_bytes 3901"),
    # nightly.tests: what `fsaccept nightly reference` (the nightly run) refuses.
    (lambda t: _edit(t, "    fio_randread_direct: {runtime_s: 2}",
                     "    fio_randread_direkt: {runtime_s: 2}"),
     r"nightly.tests.fio_randread_direkt: no such test under tests: \(the file has: "),
    (lambda t: _edit(t, "fio_seq_write: {runtime_s: 2, file_size: 64MiB}",
                     "fio_seq_write: {runtime_s: 2, file_size: 64MB}"),
     r"nightly.tests.fio_seq_write.file_size: '64MB' is not a binary size"),
    (lambda t: _edit(t, "fio_seq_write: {runtime_s: 2, file_size: 64MiB}",
                     "fio_seq_write: {runtime_s: 2, file_size: 3000}"),
     r"nightly.tests: the test entries with the nightly values are not valid: "
     r"tests.fio_seq_write.file_size: 3000 is not a multiple of block_size 1MiB"),
    (lambda t: _edit(t, "    ior_data_integrity: {}", "    ior_data_integrity: {segments: 0}"),
     r"nightly.tests: .* not valid: tests.ior_data_integrity.segments: 0 is less than"),
    # YAML 1.1's base 60, as a float too.
    (lambda t: _edit(t, "  tolerance: 0.2 ", "  tolerance: 1:30.5 "),
     r"line \d+: 1:30.5 is read by YAML as 90.5 \(base 60\): write the number in decimal"),
])
def test_reference_command_refuses_what_the_run_refuses(tmp_path, capsys, edit, message):
    from fsaccept.cli import main
    text = edit(_local_text())
    path = write(tmp_path, text, "local.yaml")
    assert main(["reference", str(path)]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and "valid" not in cap.out
    lines = cap.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}: "), cap.err
    assert re.search(message, lines[0]), lines[0]


def test_the_target_text_rule_is_the_guards_own(tmp_path):
    # One rule, two callers: the reference check and the guard before any job.
    from fsaccept.core import guards
    for bad in ("var/tmp", "/var/tmp\nx"):
        with pytest.raises(guards.GuardError) as by_guard:
            guards.check_target(Path(bad), "ext4", Path("r.yaml"))
        path = write(tmp_path, _local_text().replace("  path: /var/tmp\n",
                                                     f"  path: {bad!r}\n".replace("'", '"')))
        with pytest.raises(ReferenceError) as by_reference:
            load_reference(path)
        assert str(by_guard.value).split(": ", 1)[1] == \
            str(by_reference.value).split("target.path: ", 1)[1]


def test_fio_keys_are_the_checks_keys():
    # Each fio test reads tests.fio_<kind> (its record in the catalogue): the entry rules
    # know a test's kind from its key.
    from fsaccept.benchmarks.fio.command import kind_of
    from fsaccept.benchmarks.fio.spec import TESTS
    assert TESTS and all(kind_of(t.key) == t.attrs["kind"] for t in TESTS)


@pytest.mark.parametrize("name", sorted(p.name for p in REFERENCE_DIR.glob("*.yaml")))
def test_reference_command_says_valid_for_every_shipped_file(name, capsys):
    from fsaccept.cli import main
    assert main(["reference", str(REFERENCE_DIR / name)]) == 0
    assert capsys.readouterr().out == f"{REFERENCE_DIR / name}: valid\n"
    first = load_reference(REFERENCE_DIR / name).targets[0]  # several: the first's
    assert main(["reference", str(REFERENCE_DIR / name), "--get", f"{first.where}.path"]) == 0
    assert capsys.readouterr().out.startswith("/")


def test_the_same_bytes_are_validated_once_and_each_caller_gets_its_own_copy(
        local_data, tmp_path, monkeypatch):
    path = tmp_path / "ref.yaml"
    path.write_text(yaml.safe_dump(local_data, sort_keys=False))
    validated = []
    real = suite_reference.validation_errors
    monkeypatch.setattr(suite_reference, "validation_errors",
                        lambda data: validated.append(1) or real(data))
    first = load_reference(path)
    once = len(validated)
    second = load_reference(path)
    assert once and len(validated) == once
    assert first.sha256 == second.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    first.entries["ior_write_bandwidth"]["segments"] = -1  # a caller's edit stays its own
    assert load_reference(path).entries == second.entries
    assert second.entries["ior_write_bandwidth"]["segments"] != -1
    # Edited: other bytes, validated again (and refused when no longer valid).
    local_data["tests"]["ior_write_bandwidth"]["transfer_size"] = "3MiB"
    path.write_text(yaml.safe_dump(local_data, sort_keys=False))
    with pytest.raises(ReferenceError, match="ior_write_bandwidth"):
        load_reference(path)
    assert len(validated) > once


def test_a_bad_shared_key_of_an_ior_entry_is_not_also_an_unknown_key(local_data, tmp_path):
    """IOR's entries share keys (``common``, allOf): one refused there left the entry's
    unevaluatedProperties error beside it, naming no key ("unknown key(s) ; allowed")."""
    local_data["tests"]["ior_write_bandwidth"]["repetitions"] = 0
    with pytest.raises(ReferenceError) as err:
        load_reference(write(tmp_path, local_data))
    assert "unknown key(s)" not in str(err.value), str(err.value)
