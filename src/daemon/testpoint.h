/* testpoint: moments at which a test may have the daemon die, to show that
 * a crash there leaves nothing the next daemon cannot recover (a model's
 * start: issue 28, item 7). VRAM_TEST_DIE_AT=NAME in the daemon's
 * environment makes it SIGKILL itself on reaching the point NAME; unset (as
 * it always is outside the tests), a point does nothing. */
#ifndef VRAM_DAEMON_TESTPOINT_H
#define VRAM_DAEMON_TESTPOINT_H

/* The points: the model's process forked, not recorded yet; recorded, not
 * released to run its command yet; released. */
#define TESTPOINT_FORKED   "start-forked"
#define TESTPOINT_RECORDED "start-recorded"
#define TESTPOINT_RELEASED "start-released"

void testpoint(const char *name);

#endif
