/* progress: a line on the terminal for a wait that lasts ("loading qwen-7b
 * ... 3 s"), so that a command that blocks for seconds does not look hung.
 * Shown only when stderr is a terminal and the wait passes one second;
 * erased when it ends, leaving the command's own answer alone. */
#ifndef VRAM_CLI_PROGRESS_H
#define VRAM_CLI_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>

struct progress {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool running, done, shown;
    char what[96];
};

/* Starts counting for what ("suspending pid 4242"); nothing is drawn
 * before a second has passed. */
void progress_start(struct progress *p, const char *what);

/* The wait is over: erases the line if one was drawn. */
void progress_stop(struct progress *p);

#endif
