/* fsaccept's cross-node semantics check (docs/user/semantics.md).
 *
 * Every case has its writer and its reader on different ranks: with block
 * distribution and one rank per node, rank r and rank r+1 are on different
 * nodes.  MPI only coordinates (barriers, signals) and gathers the results:
 * every file operation is plain POSIX on DIR.  Rank 0 prints one line per case:
 *
 *   fsaccept-semantics CASE writer=N reader=N value=V unit=U ok=1|0|unsupported detail=...
 *
 * (the namespace cases' value is a rate, and a field wrong=K before unit= counts
 * the entries the reader did not list or stat as the writer made them).
 *
 * Every wait is bounded (-b seconds: a case that never converges reports the
 * bound and ok=0), and alarm(-a seconds) ends a run that hangs, saying where.
 * Each bounded wait's test carries a comment "bounded-wait: CASE..." naming the
 * cases that wait there, one wait each (the visibility trials' "bounded-wait per
 * trial"): the harness's alarm counts them (tests/unit/test_semantics_waits.py).
 *
 * Usage: fsaccept_semantics -d DIR [-t TRIALS] [-k RECORDS] [-r RENAMES]
 *                           [-n FILES] [-m TREE_ENTRIES] [-b BOUND_S] [-a ALARM_S]
 *                           [-s SQUASH_UID] [-u ACL_UID]
 *        fsaccept_semantics -L DIR
 *
 * The last two cases are contract features: root-squash (a file root creates on one
 * node is owned, seen from another, by the anonymous uid -s) and acl-deny (a POSIX
 * ACL entry user:U:--- set on one node denies uid U, -u, on another, and an entry
 * user:U:r-- grants U what the file's mode does not).  Each needs root: run
 * otherwise, it prints ok=unsupported and says why.
 *
 * -L lists DIR once as the namespace cases' reader does (the same function),
 * without MPI, and prints its count and rate: bench/namespace_listing.py times it
 * beside find.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define VERSION "5"
#define TAG "fsaccept-semantics"
#define NAME_LEN 64
#define DETAIL_LEN 240
#define RECORD 64
#define RATE "entries/s"
/* Entries of a namespace tree per directory: entry i holds entries FANOUT*i+1.. */
#define FANOUT 10

typedef struct {
    double value; /* seconds, a count of violations, or entries/s */
    double p50;   /* visibility: the median trial (else -1) */
    int ok;       /* 1 pass, 0 fail, 2 not supported */
    int writer, reader; /* ranks (-1: every rank) */
    char detail[DETAIL_LEN];
    long wrong;   /* namespace cases: entries not listed or stat'ed as made */
} result_t;

static int rank, size;
static const char *dir;
static int trials = 20, records = 100, renames = 200;
static long ns_files = 1000, ns_tree = 500;
static double bound_s = 10.0;
/* root-squash: the uid root's files must be owned by; acl-deny: the uid denied. */
static long squash_uid = 65534, acl_uid = 65534;
static char (*names)[NAME_LEN];
static volatile const char *current = "start";

/* errno's symbolic name (strerrorname_np needs glibc 2.32).  An errno without a name
 * here is written to one of 8 buffers in turn, so that a detail naming several (acl-deny
 * names up to 6 in one snprintf) shows each, not the last one several times. */
static const char *errname(int e)
{
    static char others[8][16];
    static unsigned next;
    char *other = others[next++ % 8];
    switch (e) {
    case ENOENT: return "ENOENT";
    case ESTALE: return "ESTALE";
    case EAGAIN: return "EAGAIN";
    case EACCES: return "EACCES";
    case ENOTSUP: return "ENOTSUP";
    case EEXIST: return "EEXIST";
    case EIO: return "EIO";
    case EBADF: return "EBADF";
    case EPERM: return "EPERM";
    case EINVAL: return "EINVAL";
    case ENODATA: return "ENODATA";
    case ENOLCK: return "ENOLCK";
    case ENOTDIR: return "ENOTDIR";
    default: snprintf(other, sizeof others[0], "errno%d", e); return other;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pause_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The collectives poll for 2 ms, then sleep 0.2 ms between polls.  Open MPI spins in a
 * blocking call, and a rank waits at a collective while another one waits out a case's
 * bound (up to bound_s): on the lab, whose emulated nodes share 2 cores, the waiting
 * ranks took the CPU the others needed (257 CPU-seconds of one CI run).  A case's time
 * is measured inside the case, never across a collective; wait_for (the reader's start
 * signal) stays blocking. */
static void settle(MPI_Request *req)
{
    struct timespec nap = {0, 200000L};
    double start = now();
    int done = 0;
    while (MPI_Test(req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        if (now() - start > 0.002)
            nanosleep(&nap, NULL);
}

static void barrier(void)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    settle(&req);
}

static void bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    MPI_Request req;
    MPI_Ibcast(buf, count, type, root, comm, &req);
    settle(&req);
}

static void allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm)
{
    MPI_Request req;
    MPI_Iallreduce(send, recv, count, type, op, comm, &req);
    settle(&req);
}

static void on_alarm(int sig)
{
    char line[256];
    int n = snprintf(line, sizeof line, TAG " abort rank=%d case=%s reason=alarm\n",
                     rank, (const char *)current);
    (void)sig;
    if (write(STDOUT_FILENO, line, (size_t)n) < 0) { /* nothing more to do */ }
    _exit(3);
}

static void path_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

/* Write the whole buffer to a new version of path (truncated), then close. */
static int write_file(const char *path, const char *buf, size_t len, int flags)
{
    int fd = open(path, O_WRONLY | O_CREAT | flags, 0644);
    if (fd < 0)
        return -errno;
    ssize_t done = write(fd, buf, len);
    int err = done == (ssize_t)len ? 0 : (done < 0 ? -errno : -EIO);
    if (close(fd) != 0 && !err)
        err = -errno;
    return err;
}

/* Read up to len bytes of path from a fresh open; the count read, or -errno. */
static ssize_t read_file(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    ssize_t got = 0, n;
    while ((size_t)got < len && (n = read(fd, buf + got, len - (size_t)got)) > 0)
        got += n;
    if (n < 0)
        got = -errno;
    close(fd);
    return got;
}

static void signal_rank(int to) { int x = 1; MPI_Send(&x, 1, MPI_INT, to, 7, MPI_COMM_WORLD); }
static void wait_for(int from) { int x; MPI_Recv(&x, 1, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }

static void print(const char *name, const result_t *r, const char *unit)
{
    if (rank != 0)
        return;
    const char *w = r->writer < 0 ? "all" : names[r->writer];
    const char *rd = r->reader < 0 ? "all" : names[r->reader];
    const char *ok = r->ok == 2 ? "unsupported" : (r->ok ? "1" : "0");
    if (r->p50 >= 0)
        printf(TAG " %s writer=%s reader=%s value=%.9f p50=%.9f unit=%s ok=%s detail=%s\n",
               name, w, rd, r->value, r->p50, unit, ok, r->detail);
    else if (!strcmp(unit, RATE))
        printf(TAG " %s writer=%s reader=%s value=%.3f wrong=%ld unit=%s ok=%s detail=%s\n",
               name, w, rd, r->value, r->wrong, unit, ok, r->detail);
    else
        printf(TAG " %s writer=%s reader=%s value=%.*f unit=%s ok=%s detail=%s\n",
               name, w, rd, strcmp(unit, "s") ? 0 : 9, r->value, unit, ok, r->detail);
    fflush(stdout);
}

/* The result as the rank that observed it has it, on every rank. */
static void share(result_t *r, int from)
{
    bcast(r, sizeof *r, MPI_BYTE, from, MPI_COMM_WORLD);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Close-to-open: the writer of trial t is rank t % size, its reader the next rank.
 * Every rank read the old content first, so a stale cache would answer. */
static void visibility(void)
{
    char path[4096], want[RECORD], got[RECORD];
    double *delays = calloc((size_t)trials, sizeof *delays);
    result_t r = {0, 0, 1, 0, 1, "", 0};
    int worst = 0, failed = 0;
    current = "visibility";
    path_of(path, sizeof path, "visibility");
    memset(want, 'v', sizeof want);
    if (rank == 0)
        write_file(path, want, sizeof want, O_TRUNC);
    barrier();
    read_file(path, got, sizeof got);
    barrier();
    for (int t = 0; t < trials; t++) {
        int w = t % size, rd = (t + 1) % size;
        double delay = 0;
        snprintf(want, sizeof want, "trial %06d writer %06d", t, w);
        memset(want + strlen(want), '.', sizeof want - strlen(want));
        if (rank == w) {
            write_file(path, want, sizeof want, O_TRUNC);
            signal_rank(rd);
        } else if (rank == rd) {
            wait_for(w);
            double start = now();
            for (;;) {
                int right = read_file(path, got, sizeof got) == (ssize_t)sizeof got
                            && memcmp(got, want, sizeof got) == 0;
                delay = now() - start; /* until the right content has been read */
                if (right)
                    break;
                if (delay > bound_s) { delay = -delay; break; } /* bounded-wait per trial: visibility */
                pause_ms(1);
            }
        }
        bcast(&delay, 1, MPI_DOUBLE, rd, MPI_COMM_WORLD);
        if (delay < 0) { failed++; delay = -delay; }
        delays[t] = delay;
        if (delay >= delays[worst]) worst = t;
        /* Every rank reads the new content before the next trial: cached now. */
        read_file(path, got, sizeof got);
        barrier();
    }
    r.writer = worst % size;
    r.reader = (worst + 1) % size;
    r.value = delays[worst];
    qsort(delays, (size_t)trials, sizeof *delays, cmp_double);
    r.p50 = delays[trials / 2];
    r.ok = !failed;
    snprintf(r.detail, sizeof r.detail, "trials=%d not_seen_within_bound=%d bound_s=%g",
             trials, failed, bound_s);
    print("visibility", &r, "s");
    free(delays);
}

/* Seconds until stat(path) on the reader gives size want (bounded; -bound if never). */
static double until_size(const char *path, off_t want, off_t *seen)
{
    struct stat st;
    double start = now(), t;
    for (;;) {
        int right = stat(path, &st) == 0 && (*seen = st.st_size) == want;
        t = now() - start; /* until the right size has been seen */
        if (right)
            return t;
        if (t > bound_s) /* bounded-wait: attr-append attr-truncate */
            return -t;
        pause_ms(1);
    }
}

/* Attribute coherency: rank 0 appends, then truncates; rank 1 polls stat. */
static void attributes(void)
{
    char path[4096], block[4096];
    struct stat st;
    off_t seen = -1;
    current = "attributes";
    path_of(path, sizeof path, "attributes");
    memset(block, 'a', sizeof block);
    if (rank == 0)
        write_file(path, block, 100, O_TRUNC);
    barrier();
    stat(path, &st); /* every rank holds the attributes now */
    barrier();
    const char *names_[2] = {"attr-append", "attr-truncate"};
    off_t sizes[2] = {100 + (off_t)sizeof block, 10};
    for (int step = 0; step < 2; step++) {
        result_t r = {0, -1, 1, 0, 1, "", 0};
        double t = 0;
        current = names_[step];
        if (rank == 0) {
            int err = step == 0 ? write_file(path, block, sizeof block, O_APPEND)
                                : (truncate(path, sizes[1]) ? -errno : 0);
            if (err)
                fprintf(stderr, TAG ": %s on %s: %s\n", names_[step], path, strerror(-err));
            signal_rank(1);
        } else if (rank == 1) {
            wait_for(0);
            t = until_size(path, sizes[step], &seen);
            r.ok = t >= 0;
            r.value = t < 0 ? -t : t;
            snprintf(r.detail, sizeof r.detail, "size_expected=%lld size_seen=%lld bound_s=%g",
                     (long long)sizes[step], (long long)seen, bound_s);
        }
        share(&r, 1);
        print(names_[step], &r, "s");
        barrier();
    }
}

/* Locks: rank 0 holds the lock; rank 1 must be refused (a non-blocking try), then
 * get it once rank 0 has released it (within the bound). */
static void locks(int use_fcntl)
{
    char path[4096];
    result_t r = {0, -1, 1, 0, 1, "", 0};
    const char *name = use_fcntl ? "fcntl-lock" : "flock";
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    current = name;
    path_of(path, sizeof path, use_fcntl ? "fcntl-lock" : "flock");
    if (rank == 0)
        write_file(path, "lock", 4, O_TRUNC);
    barrier();
    int fd = (rank <= 1) ? open(path, O_RDWR) : -1;
    if (rank == 0) {
        int got = use_fcntl ? fcntl(fd, F_SETLK, &fl) : flock(fd, LOCK_EX | LOCK_NB);
        if (got != 0)
            fprintf(stderr, TAG ": %s: the holder cannot lock %s: %s\n", name, path,
                    strerror(errno));
        signal_rank(1);
        wait_for(1);
        if (use_fcntl) { fl.l_type = F_UNLCK; fcntl(fd, F_SETLK, &fl); }
        else flock(fd, LOCK_UN);
        signal_rank(1);
    } else if (rank == 1) {
        wait_for(0);
        int got = use_fcntl ? fcntl(fd, F_SETLK, &fl) : flock(fd, LOCK_EX | LOCK_NB);
        int err = got ? errno : 0;
        /* flock: EWOULDBLOCK; F_SETLK: EAGAIN or EACCES (POSIX allows both). */
        int refused = got != 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EACCES);
        if (got == 0) {
            if (use_fcntl) { fl.l_type = F_UNLCK; fcntl(fd, F_SETLK, &fl); fl.l_type = F_WRLCK; }
            else flock(fd, LOCK_UN);
        }
        signal_rank(0);
        wait_for(0);
        double start = now(), t = 0;
        int acquired = 0;
        while (!acquired && (t = now() - start) <= bound_s) { /* bounded-wait: flock fcntl-lock */
            acquired = (use_fcntl ? fcntl(fd, F_SETLK, &fl) : flock(fd, LOCK_EX | LOCK_NB)) == 0;
            if (!acquired)
                pause_ms(1);
        }
        r.value = !refused + !acquired;
        r.ok = r.value == 0;
        snprintf(r.detail, sizeof r.detail, "second_holder=%s errno=%s released_seen_s=%s%.6f",
                 refused ? "refused" : "granted", got ? errname(err) : "none",
                 acquired ? "" : ">", t);
    }
    if (fd >= 0)
        close(fd);
    share(&r, 1);
    print(name, &r, "violations");
    barrier();
}

/* A lock whose holder is killed: rank 0 forks a child that takes the flock, rank 1 is
 * refused it, then rank 0 kills the child (SIGKILL); rank 1 measures how long until its
 * own non-blocking try is granted (within the bound).  The test fixture
 * FSACCEPT_TEST_LOCK_HOLDER=stop stops the holder (SIGSTOP) instead, as a hung process
 * that never lets go: the lock is never released, and the case fails at the bound. */
static void lock_killed(void)
{
    char path[4096];
    result_t r = {0, -1, 1, 0, 1, "", 0};
    current = "lock-killed";
    path_of(path, sizeof path, "lock-killed");
    if (rank == 0)
        write_file(path, "lock", 4, O_TRUNC);
    barrier();
    if (rank == 0) {
        const char *fixture = getenv("FSACCEPT_TEST_LOCK_HOLDER");
        int stop = fixture && !strcmp(fixture, "stop");
        int p[2];
        char held = '0';
        if (pipe(p) != 0) {
            fprintf(stderr, TAG ": lock-killed: pipe: %s\n", strerror(errno));
            p[0] = p[1] = -1;
        }
        pid_t child = p[0] >= 0 ? fork() : -1;
        if (child == 0) {
            int fd = open(path, O_RDWR);
            char ok = (fd >= 0 && flock(fd, LOCK_EX) == 0) ? '1' : '0';
            if (write(p[1], &ok, 1) != 1)
                _exit(1);
            for (;;)
                pause();
        }
        if (child > 0 && read(p[0], &held, 1) != 1)
            held = '0';
        if (p[0] >= 0) { close(p[0]); close(p[1]); }
        if (held != '1')
            fprintf(stderr, TAG ": lock-killed: the holder could not lock %s\n", path);
        signal_rank(1);
        wait_for(1);
        if (child > 0) {
            kill(child, stop ? SIGSTOP : SIGKILL);
            if (!stop)
                waitpid(child, NULL, 0);
        }
        signal_rank(1);
        wait_for(1);
        if (child > 0 && stop) {
            kill(child, SIGKILL);
            waitpid(child, NULL, 0);
        }
    } else if (rank == 1) {
        wait_for(0);
        int fd = open(path, O_RDWR);
        int got = flock(fd, LOCK_EX | LOCK_NB);
        int err = got ? errno : 0;
        int refused = got != 0 && (err == EAGAIN || err == EWOULDBLOCK);
        if (got == 0)
            flock(fd, LOCK_UN);
        signal_rank(0);
        wait_for(0);
        double start = now(), t = 0;
        int acquired = 0;
        while (!acquired && (t = now() - start) <= bound_s) { /* bounded-wait: lock-killed */
            acquired = flock(fd, LOCK_EX | LOCK_NB) == 0;
            if (!acquired)
                pause_ms(1);
        }
        if (acquired)
            flock(fd, LOCK_UN);
        signal_rank(0);
        r.ok = refused && acquired;
        /* Not refused at first: nothing was held to release; never granted: held. */
        r.value = (refused && acquired) ? t : bound_s;
        snprintf(r.detail, sizeof r.detail,
                 "second_holder_before=%s errno=%s released_seen_s=%s%.6f",
                 refused ? "refused" : "granted", got ? errname(err) : "none",
                 acquired ? "" : ">", t);
        if (fd >= 0)
            close(fd);
    }
    share(&r, 1);
    print("lock-killed", &r, "s");
    barrier();
}

/* O_APPEND from every rank: RECORD-byte records "rank R seq S", then rank 0 reads. */
static void appends(void)
{
    char path[4096], rec[RECORD];
    result_t r = {0, -1, 1, -1, 0, "", 0};
    current = "append";
    path_of(path, sizeof path, "append");
    if (rank == 0)
        write_file(path, "", 0, O_TRUNC);
    barrier();
    int fd = open(path, O_WRONLY | O_APPEND);
    int short_writes = 0;
    for (int s = 0; s < records; s++) {
        memset(rec, 'a' + rank % 26, sizeof rec);
        int n = snprintf(rec, sizeof rec, "rank %06d seq %08d ", rank, s);
        rec[n] = 'a' + rank % 26;
        rec[sizeof rec - 1] = '\n';
        if (write(fd, rec, sizeof rec) != (ssize_t)sizeof rec)
            short_writes++;
    }
    close(fd);
    allreduce(MPI_IN_PLACE, &short_writes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        long total = (long)size * records, lost = 0, torn = 0, twice = 0, got = 0;
        unsigned char *seen = calloc((size_t)total, 1);
        int in = open(path, O_RDONLY);
        ssize_t n;
        while ((n = read(in, rec, sizeof rec)) > 0) {
            int rk, sq, len = 0;
            got++;
            if (n != (ssize_t)sizeof rec
                || sscanf(rec, "rank %6d seq %8d %n", &rk, &sq, &len) != 2
                || rk < 0 || rk >= size || sq < 0 || sq >= records || rec[RECORD - 1] != '\n') {
                torn++;
                continue;
            }
            for (int i = len; i < RECORD - 1; i++)
                if (rec[i] != 'a' + rk % 26) { torn++; goto next; }
            if (seen[(long)rk * records + sq]++)
                twice++;
        next:;
        }
        close(in);
        for (long i = 0; i < total; i++)
            lost += !seen[i];
        free(seen);
        r.value = lost + torn + twice + short_writes;
        r.ok = r.value == 0;
        snprintf(r.detail, sizeof r.detail,
                 "records_written=%ld records_read=%ld lost=%ld torn=%ld twice=%ld short_writes=%d",
                 total, got, lost, torn, twice, short_writes);
    }
    share(&r, 0);
    print("append", &r, "violations");
    barrier();
}

/* rename over an existing name: rank 0 renames new versions over it, rank 1 reads it
 * again and again: never ENOENT, never a mix of two versions. */
static void renaming(void)
{
    char path[4096], tmp[4096], buf[4096], got[4096];
    result_t r = {0, -1, 1, 0, 1, "", 0};
    current = "rename";
    path_of(path, sizeof path, "rename");
    if (rank == 0) {
        memset(buf, 'A', sizeof buf);
        write_file(path, buf, sizeof buf, O_TRUNC);
    }
    barrier();
    if (rank == 0) {
        double start = now();
        for (int v = 1; v <= renames && now() - start <= bound_s; v++) { /* bounded-wait: rename */
            snprintf(tmp, sizeof tmp, "%s/rename.tmp.%d", dir, v);
            memset(buf, 'A' + v % 26, sizeof buf);
            write_file(tmp, buf, sizeof buf, O_TRUNC);
            if (rename(tmp, path) != 0)
                fprintf(stderr, TAG ": rename %s: %s\n", tmp, strerror(errno));
        }
        signal_rank(1);
    } else if (rank == 1) {
        long reads = 0, enoent = 0, mixed = 0, other = 0;
        int done = 0, flag = 0, last = 0, first_other = 0;
        MPI_Request req;
        int x;
        MPI_Irecv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &req);
        while (!last) {
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            last = done; /* one more read after the writer has finished */
            done = done || flag;
            ssize_t n = read_file(path, got, sizeof got);
            reads++;
            if (n == -ENOENT) { enoent++; continue; }
            if (n < 0) {
                if (!other++)
                    first_other = (int)-n;
                continue;
            }
            int uniform = n == (ssize_t)sizeof got;
            for (ssize_t i = 1; uniform && i < n; i++)
                uniform = got[i] == got[0];
            mixed += !uniform;
        }
        r.value = enoent + mixed + other;
        r.ok = r.value == 0;
        snprintf(r.detail, sizeof r.detail,
                 "reads=%ld enoent=%ld mixed=%ld other_errors=%ld first_other_error=%s",
                 reads, enoent, mixed, other, first_other ? errname(first_other) : "none");
    }
    share(&r, 1);
    print("rename", &r, "violations");
    barrier();
}

/* Unlink while open: rank 1 opens, rank 0 unlinks, rank 1 still reads it all. */
static void unlink_open(void)
{
    char path[4096], buf[8192], got[8192];
    result_t r = {0, -1, 1, 0, 1, "", 0};
    current = "unlink-open";
    path_of(path, sizeof path, "unlink-open");
    memset(buf, 'u', sizeof buf);
    if (rank == 0)
        write_file(path, buf, sizeof buf, O_TRUNC);
    barrier();
    if (rank == 1) {
        int fd = open(path, O_RDONLY), err = fd < 0 ? errno : 0;
        signal_rank(0);
        wait_for(0);
        ssize_t got_n = 0, n = 0;
        while (fd >= 0 && (size_t)got_n < sizeof got
               && (n = read(fd, got + got_n, sizeof got - (size_t)got_n)) > 0)
            got_n += n;
        if (n < 0) err = errno;
        if (fd >= 0) close(fd);
        r.value = !(got_n == (ssize_t)sizeof got && memcmp(got, buf, sizeof got) == 0);
        r.ok = r.value == 0;
        snprintf(r.detail, sizeof r.detail, "bytes_expected=%zu bytes_read=%zd errno=%s",
                 sizeof got, got_n, err ? errname(err) : "none");
    } else if (rank == 0) {
        wait_for(1);
        if (unlink(path) != 0)
            fprintf(stderr, TAG ": unlink %s: %s\n", path, strerror(errno));
        signal_rank(1);
    }
    share(&r, 1);
    print("unlink-open", &r, "violations");
    barrier();
}

/* O_EXCL create and mkdir races: every rank at once, TRIALS rounds: one winner each. */
static void races(int use_mkdir)
{
    char path[4096];
    result_t r = {0, -1, 1, -1, -1, "", 0};
    const char *name = use_mkdir ? "mkdir-race" : "excl-race";
    int bad_rounds = 0, odd_errors = 0, worst = 1, first_odd = 0;
    current = name;
    for (int t = 0; t < trials; t++) {
        snprintf(path, sizeof path, "%s/%s.%d", dir, name, t);
        barrier();
        int won, err;
        if (use_mkdir) {
            won = mkdir(path, 0755) == 0;
        } else {
            int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
            won = fd >= 0;
            if (won) close(fd);
        }
        err = won ? 0 : errno;
        int odd = !won && err != EEXIST;
        int winners = won, odd_err = odd ? err : 0;
        allreduce(MPI_IN_PLACE, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        allreduce(MPI_IN_PLACE, &odd, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        allreduce(MPI_IN_PLACE, &odd_err, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        odd_errors += odd;
        if (!first_odd)
            first_odd = odd_err; /* the loser's errno other than EEXIST, the first round */
        if (winners != 1) {
            bad_rounds++;
            if (winners != 1 && (worst == 1 || winners > worst)) worst = winners;
        }
    }
    r.value = bad_rounds;
    r.ok = bad_rounds == 0 && odd_errors == 0;
    r.value += odd_errors;
    snprintf(r.detail, sizeof r.detail,
             "rounds=%d ranks=%d rounds_without_one_winner=%d most_winners=%d other_errors=%d "
             "first_other_error=%s", trials, size, bad_rounds, worst, odd_errors,
             first_odd ? errname(first_odd) : "none");
    print(name, &r, "violations");
}

/* Hard link count, symbolic link target and a user xattr set on rank 0, seen on rank 1. */
static void links(void)
{
    char file[4096], hard[4096], sym[4096], target[256], got[256];
    const char *value = "fsaccept-xattr-value";
    int xerr = 0;
    current = "links";
    path_of(file, sizeof file, "links");
    path_of(hard, sizeof hard, "links.hard");
    path_of(sym, sizeof sym, "links.sym");
    snprintf(target, sizeof target, "links-target-%d", (int)getpid());
    if (rank == 0) {
        write_file(file, "links", 5, O_TRUNC);
        bcast(target, sizeof target, MPI_CHAR, 0, MPI_COMM_WORLD);
    } else {
        bcast(target, sizeof target, MPI_CHAR, 0, MPI_COMM_WORLD);
    }
    barrier();
    struct stat st;
    stat(file, &st); /* cached with one link */
    barrier();
    if (rank == 0) {
        if (link(file, hard) != 0) fprintf(stderr, TAG ": link: %s\n", strerror(errno));
        if (symlink(target, sym) != 0) fprintf(stderr, TAG ": symlink: %s\n", strerror(errno));
        if (setxattr(file, "user.fsaccept", value, strlen(value), 0) != 0) xerr = errno;
    }
    bcast(&xerr, 1, MPI_INT, 0, MPI_COMM_WORLD);
    const char *cases[3] = {"hardlink", "symlink", "xattr"};
    for (int c = 0; c < 3; c++) {
        result_t r = {0, -1, 1, 0, 1, "", 0};
        current = cases[c];
        if (rank == 1) {
            double start = now(), t;
            int seen = 0, rerr = 0;
            long nlink = -1;
            ssize_t n = -1;
            while (!seen && (t = now() - start) <= bound_s) { /* bounded-wait: hardlink symlink xattr */
                if (c == 0) {
                    seen = stat(file, &st) == 0 && (nlink = (long)st.st_nlink) == 2;
                } else if (c == 1) {
                    n = readlink(sym, got, sizeof got - 1);
                    seen = n == (ssize_t)strlen(target) && memcmp(got, target, (size_t)n) == 0;
                } else {
                    if (xerr) break;
                    n = getxattr(file, "user.fsaccept", got, sizeof got - 1);
                    rerr = n < 0 ? errno : 0;
                    if (rerr == ENOTSUP) break;
                    seen = n == (ssize_t)strlen(value) && memcmp(got, value, (size_t)n) == 0;
                }
                if (!seen) pause_ms(1);
            }
            t = now() - start;
            r.ok = seen;
            r.value = seen ? t : (t > bound_s ? t : 0);
            if (c == 0)
                snprintf(r.detail, sizeof r.detail, "nlink_expected=2 nlink_seen=%ld bound_s=%g",
                         nlink, bound_s);
            else if (c == 1)
                snprintf(r.detail, sizeof r.detail, "target_expected=%s seen=%s bound_s=%g",
                         target, seen ? "same" : "other", bound_s);
            else if (xerr || rerr == ENOTSUP) {
                r.ok = 2;
                snprintf(r.detail, sizeof r.detail, "user.fsaccept %s on the %s: %s",
                         xerr ? "setxattr" : "getxattr", xerr ? "writer" : "reader",
                         errname(xerr ? xerr : rerr));
            } else
                snprintf(r.detail, sizeof r.detail, "name=user.fsaccept seen=%s errno=%s bound_s=%g",
                         seen ? "same" : "other", rerr ? errname(rerr) : "none", bound_s);
        }
        share(&r, 1);
        print(cases[c], &r, "s");
    }
    barrier();
}

/* ---------------------------------------------------------------- namespace scale */

typedef struct {
    long entries; /* every name but . and .. */
    long errors;  /* names that could not be stat'ed, directories not opened or read */
} walk_t;

/* List the directory open at fd as the namespace cases' reader does: readdir, and an
 * fstatat (not following symbolic links) of every entry; a directory is walked in turn.
 * Closes fd.  -L runs this very function (bench/namespace_listing.py). */
static void walk(int fd, walk_t *w)
{
    DIR *d = fdopendir(fd);
    struct dirent *e;
    struct stat st;
    if (!d) {
        w->errors++;
        close(fd);
        return;
    }
    for (;;) {
        errno = 0;
        if (!(e = readdir(d))) {
            if (errno)
                w->errors++;
            break;
        }
        const char *n = e->d_name;
        if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
            continue;
        w->entries++;
        if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            w->errors++;
        } else if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (sub < 0)
                w->errors++;
            else
                walk(sub, w);
        }
    }
    closedir(d);
}

/* Seconds to walk path; its count in *w. */
static double timed_walk(const char *path, walk_t *w)
{
    double start = now();
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        w->errors++;
    else
        walk(fd, w);
    return now() - start;
}

/* The namespace tree's entry i (1..ns_tree) is e<i>, in entry (i-1)/FANOUT's directory
 * (0: the top); it is a directory when it holds entries itself, else an empty file.
 * Creates (remove=0) or removes (remove=1) the entries under entry i at path; the
 * count of failures. */
static long tree(const char *path, long i, int remove)
{
    char child[4096 + 32];
    long failed = 0;
    for (long c = FANOUT * i + 1; c <= FANOUT * i + FANOUT && c <= ns_tree; c++) {
        snprintf(child, sizeof child, "%s/e%ld", path, c);
        int is_dir = FANOUT * c + 1 <= ns_tree;
        if (remove) {
            if (is_dir)
                failed += tree(child, c, 1);
            failed += (is_dir ? rmdir(child) : unlink(child)) != 0;
        } else if (is_dir) {
            failed += mkdir(child, 0755) != 0;
            failed += tree(child, c, 0);
        } else {
            failed += write_file(child, "", 0, O_EXCL) != 0;
        }
    }
    return failed;
}

/* The flat directory's N empty files f<i>: created or removed; the count of failures. */
static long flat(const char *path, int remove)
{
    char file[4096 + 32];
    long failed = 0;
    for (long i = 0; i < ns_files; i++) {
        snprintf(file, sizeof file, "%s/f%ld", path, i);
        failed += (remove ? unlink(file) : write_file(file, "", 0, O_EXCL)) != 0;
    }
    return failed;
}

/* Namespace scale: rank 0 creates a directory of ns_files empty files (namespace-list)
 * or a tree of ns_tree entries (namespace-walk); then rank 1, on another node, walks it
 * with readdir and an fstatat of every entry.  The count must be exact (wrong: the
 * entries missing, extra or not stat'ed); the figure is its rate.  Rank 0 removes what
 * it made; both its times are in the detail. */
static void namespace_case(int is_tree)
{
    const char *name = is_tree ? "namespace-walk" : "namespace-list";
    long want = is_tree ? ns_tree : ns_files, made_wrong = 0, removed_wrong = 0;
    char path[4096];
    result_t r = {0, -1, 1, 0, 1, "", 0};
    double create_s = 0, remove_s = 0, start;
    current = name;
    path_of(path, sizeof path, name);
    if (rank == 0) {
        start = now();
        if (mkdir(path, 0755) != 0)
            made_wrong = want + 1;
        else
            made_wrong = is_tree ? tree(path, 0, 0) : flat(path, 0);
        create_s = now() - start;
        if (made_wrong)
            fprintf(stderr, TAG ": %s: %ld of %ld entries not created in %s\n", name,
                    made_wrong, want, path);
    }
    barrier();
    if (rank == 1) {
        walk_t w = {0, 0};
        double t = timed_walk(path, &w);
        r.wrong = labs(want - w.entries) + w.errors;
        r.ok = r.wrong == 0;
        r.value = t > 0 ? (double)w.entries / t : 0;
        snprintf(r.detail, sizeof r.detail,
                 "entries_expected=%ld entries_seen=%ld errors=%ld list_s=%.6f",
                 want, w.entries, w.errors, t);
    }
    share(&r, 1);
    if (rank == 0) {
        start = now();
        removed_wrong = is_tree ? tree(path, 0, 1) : flat(path, 1);
        removed_wrong += rmdir(path) != 0;
        remove_s = now() - start;
        if (removed_wrong)
            fprintf(stderr, TAG ": %s: %ld entries of %s not removed\n", name,
                    removed_wrong, path);
        size_t used = strlen(r.detail);
        snprintf(r.detail + used, sizeof r.detail - used,
                 " create_s=%.6f create_errors=%ld remove_s=%.6f remove_errors=%ld",
                 create_s, made_wrong, remove_s, removed_wrong);
    }
    print(name, &r, RATE);
    barrier();
}

/* ---------------------------------------------------------------- contract features */

/* Root squash: rank 0, as root, creates a file; rank 1 stats it: its owner must be the
 * anonymous uid (-s).  A writer that is not root has nothing to squash: unsupported. */
static void root_squash(void)
{
    char path[4096];
    result_t r = {0, -1, 1, 0, 1, "", 0};
    int w[2] = {(int)geteuid(), 0}; /* the writer's euid, and its create error */
    current = "root-squash";
    path_of(path, sizeof path, "root-squash");
    if (rank == 0 && w[0] == 0)
        w[1] = -write_file(path, "root", 4, O_TRUNC);
    bcast(w, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 1) {
        struct stat st;
        int err = w[1];
        long owner = -1;
        if (w[0] == 0 && !err) {
            double start = now();
            for (;;) { /* the new name may take a moment to show here */
                err = stat(path, &st) == 0 ? 0 : errno;
                if (!err || err != ENOENT || now() - start > bound_s) /* bounded-wait: root-squash */
                    break;
                pause_ms(1);
            }
            if (!err)
                owner = (long)st.st_uid;
        }
        r.ok = w[0] != 0 ? 2 : owner == squash_uid;
        r.value = r.ok == 0;
        char seen[24] = "none";
        if (owner >= 0)
            snprintf(seen, sizeof seen, "%ld", owner);
        snprintf(r.detail, sizeof r.detail, "owner=%s expected=%ld writer_euid=%d errno=%s%s",
                 seen, squash_uid, w[0], err ? errname(err) : "none",
                 w[0] != 0 ? " the writer is not root: nothing to squash" : "");
    }
    share(&r, 1);
    print("root-squash", &r, "violations");
    barrier();
}

/* The kernel's POSIX ACL xattr format (linux/posix_acl_xattr.h, linux/posix_acl.h):
 * a little-endian version 2, then entries {u16 tag, u16 perm, u32 id}, by tag. */
#define ACL_XATTR "system.posix_acl_access"
enum { ACL_V2 = 2, TAG_USER_OBJ = 0x01, TAG_USER = 0x02, TAG_GROUP_OBJ = 0x04,
       TAG_MASK = 0x10, TAG_OTHER = 0x20, PERM_R = 4, PERM_RW = 6 };

static size_t acl_entry(unsigned char *p, unsigned tag, unsigned perm, uint32_t id)
{
    uint16_t t = htole16((uint16_t)tag), m = htole16((uint16_t)perm);
    uint32_t i = htole32(id);
    memcpy(p, &t, 2);
    memcpy(p + 2, &m, 2);
    memcpy(p + 4, &i, 4);
    return 8;
}

/* A file of this mode whatever the umask: 0666, every uid may read it by its mode;
 * 0600, only its owner. */
static int create_mode(const char *path, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0)
        return errno;
    int err = fchmod(fd, mode) != 0 ? errno : 0;
    if (write(fd, "acl\n", 4) != 4 && !err)
        err = errno ? errno : EIO;
    if (close(fd) != 0 && !err)
        err = errno;
    return err;
}

/* In a child that becomes uid U (no groups, gid U): 0 or the errno of becoming U, of
 * opening the denied file, the control and the granted file. */
static void open_as(const char *denied, const char *control, const char *granted,
                    int out[4])
{
    int fds[2];
    out[0] = out[1] = out[2] = out[3] = 0;
    if (pipe(fds) != 0) { out[0] = errno; return; }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        out[0] = errno;
    } else if (pid == 0) { /* the child: no MPI here */
        int res[4] = {0, 0, 0, 0}, fd;
        uid_t u = (uid_t)acl_uid;
        if (setgroups(0, NULL) != 0 || setresgid((gid_t)u, (gid_t)u, (gid_t)u) != 0
            || setresuid(u, u, u) != 0 || geteuid() != u) {
            res[0] = errno ? errno : EPERM;
        } else {
            if ((fd = open(denied, O_RDONLY)) >= 0) close(fd); else res[1] = errno;
            if ((fd = open(control, O_RDONLY)) >= 0) close(fd); else res[2] = errno;
            if ((fd = open(granted, O_RDONLY)) >= 0) close(fd); else res[3] = errno;
        }
        if (write(fds[1], res, sizeof res) < 0) { /* the parent reads nothing */ }
        _exit(0);
    } else {
        int status;
        close(fds[1]);
        fds[1] = -1;
        if (read(fds[0], out, 4 * sizeof *out) != (ssize_t)(4 * sizeof *out))
            out[0] = ECHILD;
        waitpid(pid, &status, 0);
    }
    close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
}

/* An access ACL: user::rw-, user:U:<perm>, group::<group>, mask::<mask>, other::<other>. */
static size_t acl_of(unsigned char acl[4 + 5 * 8], unsigned perm, unsigned group,
                     unsigned mask, unsigned other)
{
    uint32_t version = htole32(ACL_V2);
    size_t n = 4;
    memcpy(acl, &version, 4);
    n += acl_entry(acl + n, TAG_USER_OBJ, PERM_RW, (uint32_t)-1);
    n += acl_entry(acl + n, TAG_USER, perm, (uint32_t)acl_uid);
    n += acl_entry(acl + n, TAG_GROUP_OBJ, group, (uint32_t)-1);
    n += acl_entry(acl + n, TAG_MASK, mask, (uint32_t)-1);
    n += acl_entry(acl + n, TAG_OTHER, other, (uint32_t)-1);
    return n;
}

/* POSIX ACLs: rank 0 creates three files.  On the first, of mode 0666, it sets the
 * access ACL user::rw- user:U:--- group::rw- mask::rw- other::rw- (-u U); the second,
 * of mode 0666 too, has no ACL (the control); on the third, of mode 0600, it sets
 * user::rw- user:U:r-- group::--- mask::r-- other::---.  Rank 1 forks a child that
 * becomes uid U and opens the three for reading.  The first must be refused with
 * EACCES (the deny); the second must open, or the refusal proves nothing (a directory
 * U cannot search); the third must open (the grant: a client that checks only the
 * mode bits, as a GlusterFS client mounted without acl does, refuses it).  A file
 * system that refuses the ACL with ENOTSUP, or a reader that cannot become U (not
 * root): unsupported. */
static void acl_deny(void)
{
    char denied[4096], control[4096], granted[4096];
    result_t r = {0, -1, 1, 0, 1, "", 0};
    int w[3] = {0, 0, -1}; /* the writer's create error, setxattr error, file owner */
    current = "acl-deny";
    path_of(denied, sizeof denied, "acl-deny");
    path_of(control, sizeof control, "acl-control");
    path_of(granted, sizeof granted, "acl-grant");
    if (rank == 0) {
        unsigned char deny[4 + 5 * 8], grant[4 + 5 * 8];
        size_t nd = acl_of(deny, 0, PERM_RW, PERM_RW, PERM_RW);
        size_t ng = acl_of(grant, PERM_R, 0, PERM_R, 0);
        struct stat st;
        w[0] = create_mode(denied, 0666);
        if (!w[0])
            w[0] = create_mode(control, 0666);
        if (!w[0])
            w[0] = create_mode(granted, 0600);
        if (!w[0] && setxattr(denied, ACL_XATTR, deny, nd, 0) != 0)
            w[1] = errno;
        if (!w[0] && !w[1] && setxattr(granted, ACL_XATTR, grant, ng, 0) != 0)
            w[1] = errno;
        if (!w[0] && stat(denied, &st) == 0)
            w[2] = (int)st.st_uid;
    }
    bcast(w, 3, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 1) {
        int got[4] = {0, 0, 0, 0};
        char owner[24] = "none";
        if (w[2] >= 0)
            snprintf(owner, sizeof owner, "%d", w[2]);
        if (!w[0] && !w[1])
            open_as(denied, control, granted, got);
        if (w[1] == ENOTSUP || got[0] == EPERM) {
            r.ok = 2; /* the file system has no ACLs, or the reader cannot become U */
        } else {
            r.value = w[0] || w[1] || got[0]
                          ? 1 : (got[1] != EACCES) + (got[2] != 0) + (got[3] != 0);
            r.ok = r.value == 0;
        }
        const char *opened[3];
        for (int i = 0; i < 3; i++)
            opened[i] = w[0] || w[1] || got[0] ? "none" : got[1 + i] ? errname(got[1 + i])
                                                                     : "granted";
        snprintf(r.detail, sizeof r.detail,
                 "uid=%ld owner=%s create=%s setxattr=%s become=%s denied_open=%s "
                 "control_open=%s granted_open=%s", acl_uid, owner,
                 w[0] ? errname(w[0]) : "none", w[1] ? errname(w[1]) : "none",
                 got[0] ? errname(got[0]) : "none", opened[0], opened[1], opened[2]);
    }
    share(&r, 1);
    print("acl-deny", &r, "violations");
    barrier();
}

/* -L DIR: the reader's listing alone, once, without MPI: 0 when every entry was
 * stat'ed, 1 when some could not be, 2 when DIR is no directory. */
static int list_only(const char *path)
{
    walk_t w = {0, 0};
    struct stat st;
    int err = stat(path, &st) != 0 ? errno : (!S_ISDIR(st.st_mode) ? ENOTDIR : 0);
    if (err) {
        printf(TAG " error dir=%s errno=%s detail=not a directory to list\n", path,
               errname(err));
        return 2;
    }
    double t = timed_walk(path, &w);
    printf(TAG " listing entries=%ld errors=%ld seconds=%.9f rate=%.3f dir=%s\n",
           w.entries, w.errors, t, t > 0 ? (double)w.entries / t : 0.0, path);
    return w.errors ? 1 : 0;
}

int main(int argc, char **argv)
{
    int alarm_s = 600, opt;
    char me[NAME_LEN] = "", host[MPI_MAX_PROCESSOR_NAME];
    if (argc == 3 && !strcmp(argv[1], "-L"))
        return list_only(argv[2]);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "d:t:k:r:n:m:b:a:s:u:")) != -1) {
        switch (opt) {
        case 'd': dir = optarg; break;
        case 't': trials = atoi(optarg); break;
        case 'k': records = atoi(optarg); break;
        case 'r': renames = atoi(optarg); break;
        case 'n': ns_files = atol(optarg); break;
        case 'm': ns_tree = atol(optarg); break;
        case 'b': bound_s = atof(optarg); break;
        case 'a': alarm_s = atoi(optarg); break;
        case 's': squash_uid = atol(optarg); break;
        case 'u': acl_uid = atol(optarg); break;
        default: dir = NULL; optind = argc; break;
        }
    }
    if (!dir || trials < 1 || records < 1 || renames < 1 || ns_files < 1 || ns_tree < 1
        || !(bound_s > 0) || alarm_s < 1 || squash_uid < 1 || squash_uid > 4294967294L
        || acl_uid < 1 || acl_uid > 4294967294L || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: fsaccept_semantics -d DIR [-t TRIALS] [-k RECORDS] "
                    "[-r RENAMES] [-n FILES] [-m TREE_ENTRIES] [-b BOUND_S] [-a ALARM_S] "
                    "[-s SQUASH_UID] [-u ACL_UID] (uids 1..4294967294), on at least 2 ranks; "
                    "or -L DIR\n");
        MPI_Finalize();
        return 2;
    }
    struct stat dst;
    int dir_err = stat(dir, &dst) != 0 ? errno : (!S_ISDIR(dst.st_mode) ? ENOTDIR
                                                  : (access(dir, W_OK | X_OK) ? errno : 0));
    allreduce(MPI_IN_PLACE, &dir_err, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (dir_err) {
        if (rank == 0)
            printf(TAG " error dir=%s errno=%s detail=not a directory every rank can write\n",
                   dir, errname(dir_err));
        MPI_Finalize();
        return 2;
    }
    signal(SIGALRM, on_alarm);
    alarm((unsigned)alarm_s);
    const char *node = getenv("SLURMD_NODENAME");
    int len;
    MPI_Get_processor_name(host, &len);
    snprintf(me, sizeof me, "%.63s", node && *node ? node : host);
    for (char *c = me; *c; c++)
        if (*c == ' ' || *c == '=') *c = '_';
    names = calloc((size_t)size, sizeof *names);
    MPI_Allgather(me, NAME_LEN, MPI_CHAR, names, NAME_LEN, MPI_CHAR, MPI_COMM_WORLD);
    if (rank == 0) {
        printf(TAG " version " VERSION " ranks %d trials %d records %d renames %d files %ld "
               "tree_entries %ld bound_s %g alarm_s %d squash_uid %ld acl_uid %ld dir %s\n",
               size, trials, records, renames, ns_files, ns_tree, bound_s, alarm_s,
               squash_uid, acl_uid, dir);
        for (int i = 0; i < size; i++)
            printf(TAG " rank %d node %s\n", i, names[i]);
        fflush(stdout);
    }
    visibility();
    attributes();
    locks(0);
    locks(1);
    lock_killed();
    appends();
    renaming();
    unlink_open();
    races(0);
    races(1);
    links();
    namespace_case(0);
    namespace_case(1);
    root_squash();
    acl_deny();
    if (rank == 0)
        printf(TAG " end\n");
    MPI_Finalize();
    return 0;
}
