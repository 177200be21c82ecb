/*
 * unsupported.c - the communicating MPI calls the emulator does not model.
 *
 * Each stops the run with one line naming it ("MPI_Comm_spawn is not
 * emulated") instead of letting it run unseen by the virtual clocks, which
 * would give a silently wrong prediction.  This file does not include mpi.h:
 * the functions never return, so their parameters do not matter, and one
 * macro covers every signature.
 */
#define EMU_API __attribute__((visibility("default")))

void tb__emu_unsupported(const char *name) __attribute__((noreturn));

#define TB_EMU_UNSUPPORTED(X)                                                                  \
    X(MPI_Comm_spawn) X(MPI_Comm_spawn_multiple) X(MPI_Comm_accept) X(MPI_Comm_connect)        \
    X(MPI_Comm_join) X(MPI_Cart_create) X(MPI_Cart_sub) X(MPI_Graph_create)                    \
    X(MPI_Dist_graph_create) X(MPI_Dist_graph_create_adjacent) X(MPI_Comm_create_group)        \
    X(MPI_Comm_idup) X(MPI_Send_init) X(MPI_Ssend_init) X(MPI_Bsend_init) X(MPI_Rsend_init)    \
    X(MPI_Recv_init) X(MPI_Start) X(MPI_Startall) X(MPI_Ibcast) X(MPI_Ireduce)                 \
    X(MPI_Iallreduce) X(MPI_Igather) X(MPI_Igatherv) X(MPI_Iscatter) X(MPI_Iscatterv)          \
    X(MPI_Iallgather) X(MPI_Iallgatherv) X(MPI_Ialltoall) X(MPI_Ialltoallv) X(MPI_Alltoallw)   \
    X(MPI_Ialltoallw) X(MPI_Reduce_scatter) X(MPI_Reduce_scatter_block) X(MPI_Ireduce_scatter) \
    X(MPI_Ireduce_scatter_block) X(MPI_Scan) X(MPI_Exscan) X(MPI_Iscan) X(MPI_Iexscan)         \
    X(MPI_Win_create) X(MPI_Win_allocate) X(MPI_Win_allocate_shared) X(MPI_Win_create_dynamic) \
    X(MPI_Put) X(MPI_Get) X(MPI_Accumulate) X(MPI_Get_accumulate) X(MPI_Fetch_and_op)          \
    X(MPI_Compare_and_swap) X(MPI_Rput) X(MPI_Rget) X(MPI_Raccumulate) X(MPI_Rget_accumulate)  \
    X(MPI_Neighbor_allgather) X(MPI_Neighbor_allgatherv) X(MPI_Neighbor_alltoall)              \
    X(MPI_Neighbor_alltoallv) X(MPI_Neighbor_alltoallw) X(MPI_Ineighbor_allgather)             \
    X(MPI_Ineighbor_allgatherv) X(MPI_Ineighbor_alltoall) X(MPI_Ineighbor_alltoallv)           \
    X(MPI_Ineighbor_alltoallw) X(MPI_File_open) X(MPI_Sendrecv_init) X(MPI_Isendrecv)          \
    X(MPI_Isendrecv_replace) X(MPI_Imrecv)

#define TB_EMU_DEFINE(name)                                                                    \
    EMU_API void name(void);                                                                   \
    void name(void) { tb__emu_unsupported(#name); }
TB_EMU_UNSUPPORTED(TB_EMU_DEFINE)
