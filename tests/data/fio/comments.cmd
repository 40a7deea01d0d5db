fio comments.fio --output-format=json --output=comments.json   # in /tmp/hfio/jf (Debian's /usr/bin/fio 3.33); exit 0, nothing on stdout/stderr
# fio --showcmd comments.fio printed:
fio --directory=/tmp/hfio/d --ioengine=psync --direct=0 --iodepth=1 --numjobs=1 --fallocate=none --bs=4k --time_based=0 --runtime=30 --name=sized --rw=read --size=256k --name=timed --rw=randread --size=256k --runtime=2 --time_based 
