"""fio: client-side bandwidth, IOPS, latency and metadata jobs, one per node."""
