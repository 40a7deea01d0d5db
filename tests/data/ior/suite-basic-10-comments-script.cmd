mpirun --oversubscribe -np 2 ior -f /tmp/hior/ior-4.0.0/testing/test_comments.ior -o /tmp/hior/run/ior
exit=0
