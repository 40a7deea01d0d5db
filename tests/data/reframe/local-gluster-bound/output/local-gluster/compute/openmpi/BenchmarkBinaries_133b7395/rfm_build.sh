#!/bin/bash

_onerror()
{
    exitcode=$?
    echo "-reframe: command \`$BASH_COMMAND' failed (exit code: $exitcode)"
    exit $exitcode
}

trap _onerror ERR

. /usr/share/lmod/lmod/init/bash
module load ior/4.0.0
module load fio/3.37
export OMPI_MCA_btl=self,tcp
export OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_oob_tcp_if_include=lo
export PMIX_MCA_gds=hash
for b in ior mdtest md-workbench fio io500; do echo "$b module:$(command -v $b || echo missing)"; done > provenance.txt
