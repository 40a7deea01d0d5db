/* Launch sanity for fsaccept: every rank prints where it runs, then rank 0
 * prints the MPI_Allreduce sum of all ranks (expected n*(n-1)/2). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, len;
    long mine, sum = 0;
    char host[MPI_MAX_PROCESSOR_NAME];
    const char *node = getenv("SLURMD_NODENAME");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    printf("rank %d of %d on node %s host %s\n", rank, size, node ? node : "-", host);
    fflush(stdout);
    mine = rank;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("allreduce sum %ld expected %ld\n", sum, (long)size * (size - 1) / 2);
    MPI_Finalize();
    return 0;
}
