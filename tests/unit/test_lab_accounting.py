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
