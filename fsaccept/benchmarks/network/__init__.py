"""The network check: iperf3 from each client node to the file system's servers."""
