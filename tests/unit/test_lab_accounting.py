"""The emulated cluster's accounting (lab/accounting.py): what it writes is pure."""

from pathlib import Path

import pytest

from lab import accounting as acct

LAYOUT = acct.AccountingLayout(Path("/s/accounting"), Path("/s/cluster"), 17000, "fsaccept")


def test_mariadb_listens_on_loopback_on_its_own_port_socket_and_files():
    lines = acct.render_my_cnf(LAYOUT).splitlines()
    for expected in ["[mariadbd]", "datadir=/s/accounting/mysql", "port=17101",
                     "socket=/s/accounting/run/mysqld.sock", "bind-address=127.0.0.1",
                     "pid-file=/s/accounting/run/mysqld.pid", "skip-name-resolve"]:
        assert expected in lines


def test_slurmdbd_stores_in_that_database_by_tcp_with_the_password():
    lines = acct.render_slurmdbd_conf(LAYOUT, "s3cret").splitlines()
    for expected in ["DbdPort=17100", "StorageType=accounting_storage/mysql",
                     "StorageHost=127.0.0.1", "StoragePort=17101", "StorageUser=slurm",
                     "StoragePass=s3cret", "StorageLoc=slurm_acct_db",
                     "PidFile=/s/accounting/run/slurmdbd.pid", "AuthType=auth/munge"]:
        assert expected in lines


def test_slurmdbd_conf_is_beside_slurm_conf():
    # slurmdbd reads slurmdbd.conf from the directory of $SLURM_CONF.
    assert LAYOUT.dbd_conf == Path("/s/cluster/slurmdbd.conf")


def test_the_site_set_up_is_idempotent_sacctmgr_commands():
    commands = acct.sacctmgr_setup("fsaccept", "root")
    assert all(argv[:3] == ["sacctmgr", "-i", "add"] for argv in commands)
    assert ["sacctmgr", "-i", "add", "user", "root", "account=acceptance",
            "defaultaccount=acceptance", "cluster=fsaccept"] in commands


@pytest.mark.parametrize("text, last", [
    ("", 0), ("12\n240\n7\n", 240), ("30_1\n31+0\n", 31), ("junk\n5\n", 5)])
def test_the_last_job_id_is_the_highest_the_database_holds(text, last):
    assert acct.parse_last_job_id(text) == last


def test_first_job_id_is_at_least_one():
    assert "FirstJobId=1" in acct.slurm_conf_lines(LAYOUT, 0)


def test_mariadb_uses_no_native_aio_whose_limits_are_the_hosts():
    assert "innodb_use_native_aio=OFF" in acct.render_my_cnf(LAYOUT).splitlines()


def test_the_error_lines_of_a_log_say_why_install_db_failed():
    log = ("2026-12-02 1 0 [Note] InnoDB: Using io_uring\n"
           "2026-12-02 1 0 [ERROR] InnoDB: io_uring_queue_init() failed with ENOMEM\n"
           "2026-12-02 1 0 [ERROR] Plugin 'InnoDB' init function returned error.\n")
    assert acct.error_lines(log) == [
        "2026-12-02 1 0 [ERROR] InnoDB: io_uring_queue_init() failed with ENOMEM",
        "2026-12-02 1 0 [ERROR] Plugin 'InnoDB' init function returned error."]
    assert acct.error_lines("") == []
    assert len(acct.error_lines("[ERROR] x\n" * 50)) == 8


def _fake_install_db(tmp_path, fails):
    """A ``mariadb-install-db`` that fails its first ``fails`` calls as MariaDB does:
    an [ERROR] line in the log, only where to look on stderr."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "mariadb-install-db"
    script.write_text(f"""#!/bin/sh
calls=$(cat {tmp_path}/calls 2>/dev/null || echo 0); calls=$((calls + 1))
echo $calls > {tmp_path}/calls
mkdir -p {tmp_path}/state/mysql
if [ $calls -le {fails} ]; then
  echo "0 [ERROR] InnoDB: try $calls failed" >> {tmp_path}/state/log/mariadbd.log
  echo "Installation of system tables failed!  Examine the logs" >&2; exit 1
fi
mkdir {tmp_path}/state/mysql/mysql
""")
    script.chmod(0o755)
    (tmp_path / "state" / "log").mkdir(parents=True)
    layout = acct.AccountingLayout(tmp_path / "state", tmp_path / "conf", 17000, "fsaccept")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "TMPDIR": str(tmp_path)}
    return acct.Accounting(layout, env), layout


def test_install_db_failing_once_is_tried_again_and_said(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    accounting, layout = _fake_install_db(tmp_path, fails=1)
    notes = accounting._install_db()
    assert notes == ["mariadb-install-db failed once (0 [ERROR] InnoDB: try 1 failed), "
                     "tried again"]
    assert (layout.datadir / "mysql").is_dir()
    assert "try 1 failed" in (layout.state_dir / "log" / "install-db-failed.log").read_text()


def test_install_db_failing_twice_names_the_log_s_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    accounting, _ = _fake_install_db(tmp_path, fails=2)
    with pytest.raises(acct.AccountingError, match=r"failed \(exit 1\).*try 2 failed"):
        accounting._install_db()
