"""IOR: file-per-process POSIX bandwidth and IOPS phases."""
