/* IOR's writes under the test's control (LD_PRELOAD), so that a test's timing is a
 * fact it sets rather than the machine's speed or load.  Only IOR processes, and only
 * their write()s to files below a ".../fsaccept/..." directory, are touched.
 *
 * A slow node (the slow-client tests): on the node named by FSACCEPT_TEST_SLOW_NODE
 * (compared with Slurm's SLURMD_NODENAME), every write first sleeps
 * FSACCEPT_TEST_SLOW_DELAY_MS (default 100) milliseconds, until the sleeps add up to
 * FSACCEPT_TEST_SLOW_TOTAL_S seconds (default 3); later writes run at full speed, so
 * that wear-out ends soon after the stonewall.  That node moves at most total/delay
 * transfers before a stonewall of total seconds or less, while the others move
 * hundreds.
 *
 * Held writes (the storage-fault tests): with FSACCEPT_TEST_HOLD_FILE set, every IOR
 * process (every node) makes its first write, then waits before each later one until
 * that file exists (at most FSACCEPT_TEST_HOLD_MAX_S seconds, default 300).  A test
 * injects its fault once a write has landed, then creates the file: every rank's next
 * write meets the fault, however fast or slow the host.
 *
 * A slow job (the repetitions tests): with FSACCEPT_TEST_SLOW_JOB set to a path, the
 * first Slurm job whose IOR claims that path (its SLURM_JOB_ID written there, made
 * atomically by link()) is slow on every node, as a slow node is above; the other jobs
 * run at full speed.  FSACCEPT_TEST_SLOW_JOB=every makes every job slow.  One repetition
 * of several, or every one, is then slower than the others by a delay the test sets.
 *
 * A late rank 0 (the exit-status tests): with FSACCEPT_TEST_LATE_EXIT_S set, IOR's
 * rank 0 (Slurm's SLURM_PROCID) sleeps that long as it exits, after MPI has finalized
 * and before exit() flushes its buffered stdout (a destructor runs first): the other
 * ranks have exited by then, as on a loaded host where rank 0 is the last.
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

static int slow_enabled;
static long delay_ms = 100;
static double budget_s = 3.0;
static const char *hold_file;
static double hold_max_s = 300.0;
static long writes_done;
static double late_exit_s;
static ssize_t (*real_write)(int, const void *, size_t);

/* Whether this process's Slurm job is the slow one: "every", or the job whose id the
 * file at path holds; the first job to come makes that file (a temporary file of its
 * own, then link(): the path appears whole or not at all, and only one job wins). */
static int is_the_slow_job(const char *path)
{
    const char *job = getenv("SLURM_JOB_ID");
    if (strcmp(path, "every") == 0)
        return 1;
    if (!job || !*job)
        return 0;
    char tmp[PATH_MAX], held[64] = "";
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (f) {
        fprintf(f, "%s\n", job);
        fclose(f);
        link(tmp, path);  /* EEXIST: another job (or rank) came first */
        unlink(tmp);
    }
    f = fopen(path, "r");
    if (!f)
        return 0;
    if (!fgets(held, sizeof held, f))
        held[0] = '\0';
    fclose(f);
    held[strcspn(held, "\n")] = '\0';
    return strcmp(held, job) == 0;
}

__attribute__((constructor)) static void ior_writes_init(void)
{
    real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (strcmp(program_invocation_short_name, "ior") != 0)
        return;
    const char *late = getenv("FSACCEPT_TEST_LATE_EXIT_S");
    const char *procid = getenv("SLURM_PROCID");
    if (late && *late && procid && strcmp(procid, "0") == 0)
        late_exit_s = atof(late);
    hold_file = getenv("FSACCEPT_TEST_HOLD_FILE");
    if (hold_file && !*hold_file)
        hold_file = NULL;
    if (getenv("FSACCEPT_TEST_HOLD_MAX_S"))
        hold_max_s = atof(getenv("FSACCEPT_TEST_HOLD_MAX_S"));
    const char *slow = getenv("FSACCEPT_TEST_SLOW_NODE");
    const char *node = getenv("SLURMD_NODENAME");
    const char *slow_job = getenv("FSACCEPT_TEST_SLOW_JOB");
    if (slow_job && *slow_job) {
        if (!is_the_slow_job(slow_job))
            return;
    } else if (!slow || !node || strcmp(slow, node) != 0) {
        return;
    }
    if (getenv("FSACCEPT_TEST_SLOW_DELAY_MS"))
        delay_ms = atol(getenv("FSACCEPT_TEST_SLOW_DELAY_MS"));
    if (getenv("FSACCEPT_TEST_SLOW_TOTAL_S"))
        budget_s = atof(getenv("FSACCEPT_TEST_SLOW_TOTAL_S"));
    slow_enabled = 1;
}

static void sleep_ms(long ms);

__attribute__((destructor)) static void ior_writes_exit(void)
{
    if (late_exit_s > 0)
        sleep_ms((long)(late_exit_s * 1000));
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

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

ssize_t write(int fd, const void *buf, size_t count)
{
    if ((slow_enabled && budget_s > 0) || hold_file) {
        int saved = errno;
        if (is_test_data(fd)) {
            if (slow_enabled && budget_s > 0) {
                sleep_ms(delay_ms);
                budget_s -= delay_ms / 1000.0;
            }
            if (hold_file && writes_done++ > 0) {
                for (double waited = 0; waited < hold_max_s && access(hold_file, F_OK) != 0;
                     waited += 0.05)
                    sleep_ms(50);
                hold_file = NULL;  /* released: every later write runs at once */
            }
        }
        errno = saved;
    }
    return real_write(fd, buf, count);
}
