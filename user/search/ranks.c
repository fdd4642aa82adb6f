// SPDX-License-Identifier: GPL-2.0
/*
 * A search across senders, under MPI: `mpiexec -n N xdpreplay search ... --
 * gen ...`. Rank 0 runs the search; for each trial it broadcasts the load,
 * the first sequence number and a start time, every rank runs its shard of
 * the trial (--shard RANK/N), and the results are gathered to rank 0. MPI is
 * the launcher, the broadcast and the reduction: no cluster manager of ours.
 * The waits poll with a 1 ms sleep: MPICH's blocking calls spin a core, and
 * on a small host that core is the server's or a sender's. Structures go as
 * bytes: the ranks run one build on one architecture.
 *
 * Without MPI (built without it, or not started by an MPI launcher) there is
 * one rank and nothing here is called but ranks_init.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "search/search.h"
#include "util/log.h"

int xr_rank, xr_nranks = 1;

#ifdef XR_MPI
#include <mpi.h>

static bool mpi_on;

/* started by an MPI launcher (MPICH's hydra, Open MPI's mpirun) */
static bool launched_by_mpi(void)
{
	return getenv("PMI_RANK") || getenv("PMI_SIZE") || getenv("OMPI_COMM_WORLD_SIZE");
}

int ranks_init(int *argc, char ***argv)
{
	if (!launched_by_mpi())
		return 0;
	if (MPI_Init(argc, argv) != MPI_SUCCESS) {
		pr_warn("search: MPI_Init failed\n");
		return -EIO;
	}
	mpi_on = true;
	MPI_Comm_rank(MPI_COMM_WORLD, &xr_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &xr_nranks);
	return 0;
}

static int wait_polling(MPI_Request *req)
{
	struct timespec ms = { .tv_nsec = 1000000 };
	int done = 0;

	for (;;) {
		if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -EIO;
		if (done)
			return 0;
		nanosleep(&ms, NULL);
	}
}

int ranks_bcast(struct rank_trial *t)
{
	MPI_Request req;

	if (!mpi_on)
		return 0;
	if (MPI_Ibcast(t, sizeof(*t), MPI_BYTE, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return -EIO;
	return wait_polling(&req);
}

int ranks_gather(const struct rank_result *mine, struct rank_result *all)
{
	MPI_Request req;

	if (!mpi_on) {
		*all = *mine;
		return 0;
	}
	if (MPI_Igather(mine, sizeof(*mine), MPI_BYTE, all, sizeof(*mine), MPI_BYTE, 0,
			MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		return -EIO;
	return wait_polling(&req);
}

void ranks_finish(void)
{
	if (mpi_on)
		MPI_Finalize();
	mpi_on = false;
}

#else

int ranks_init(int *argc, char ***argv)
{
	if (getenv("PMI_RANK") || getenv("OMPI_COMM_WORLD_SIZE"))
		pr_warn("warning: started by an MPI launcher, but this xdpreplay was built without "
			"MPI: each rank runs a search of its own\n");
	return 0;
}

int ranks_bcast(struct rank_trial *t)
{
	return 0;
}

int ranks_gather(const struct rank_result *mine, struct rank_result *all)
{
	*all = *mine;
	return 0;
}

void ranks_finish(void)
{
}

#endif
