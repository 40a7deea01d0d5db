/* A slow client, made on purpose (LD_PRELOAD), for the slow-client tests.
 *
 * In IOR processes running on the node named by FSACCEPT_TEST_SLOW_NODE (compared with
 * Slurm's SLURMD_NODENAME), every write() to a file below a ".../fsaccept/..." directory
 * first sleeps FSACCEPT_TEST_SLOW_DELAY_MS (default 100) milliseconds, until the sleeps
 * add up to FSACCEPT_TEST_SLOW_TOTAL_S seconds (default 3); later writes run at full
 * speed, so that wear-out ends soon after the stonewall.  Every other process (and
 * every other node) is untouched.  This makes "one node is slow" a fact the test
 * controls rather than the machine's load: that node moves at most total/delay
 * transfers before a stonewall of total seconds or less, while the others move
 * hundreds.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int enabled;
static long delay_ms = 100;
static double budget_s = 3.0;
static ssize_t (*real_write)(int, const void *, size_t);

__attribute__((constructor)) static void slow_node_init(void)
{
    const char *slow = getenv("FSACCEPT_TEST_SLOW_NODE");
    const char *node = getenv("SLURMD_NODENAME");
    real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (!slow || !node || strcmp(slow, node) != 0)
        return;
    if (strcmp(program_invocation_short_name, "ior") != 0)
        return;
    if (getenv("FSACCEPT_TEST_SLOW_DELAY_MS"))
        delay_ms = atol(getenv("FSACCEPT_TEST_SLOW_DELAY_MS"));
    if (getenv("FSACCEPT_TEST_SLOW_TOTAL_S"))
        budget_s = atof(getenv("FSACCEPT_TEST_SLOW_TOTAL_S"));
    enabled = 1;
}

static int is_test_data(int fd)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    return strstr(path, "/fsaccept/") != NULL;
}

ssize_t write(int fd, const void *buf, size_t count)
{
    if (enabled && budget_s > 0 && is_test_data(fd)) {
        int saved = errno;
        struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        budget_s -= delay_ms / 1000.0;
        errno = saved;
    }
    return real_write(fd, buf, count);
}
