/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A private directory on tmpfs for fuzz targets whose code under test reads
 * files (a disk would make the files the cost of every run), removed at exit.
 */
#ifndef __XR_FUZZ_TMPDIR_H
#define __XR_FUZZ_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

static char *fuzz_dir_made;

static int fuzz_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void fuzz_dir_cleanup(void)
{
	if (fuzz_dir_made)
		nftw(fuzz_dir_made, fuzz_rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* template: "/dev/shm/NAME.XXXXXX", filled in; aborts when it cannot be made */
static void fuzz_dir_make(char *template)
{
	if (!mkdtemp(template))
		abort();
	fuzz_dir_made = template;
	atexit(fuzz_dir_cleanup);
}

#endif
