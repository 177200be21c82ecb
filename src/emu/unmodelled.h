/*
 * unmodelled.h - what the emulator knows of the MPI functions it does not
 * model (internal; no mpi.h: names only).
 *
 * Every MPI function a program calls under `tenbin emu` is one of:
 *   - modelled: libtenbin-emu.so defines it (the virtual clocks see it);
 *   - not emulated: listed in TB_EMU_UNSUPPORTED; libtenbin-emu.so defines
 *     it too, and stops the run with one line at its first call
 *     (pmpi/unsupported.c), never letting it run unseen;
 *   - local: it does not communicate (datatypes, groups, attributes,
 *     queries, ...) and runs in the real MPI as it is (tb_emu_local_name);
 *   - unknown: none of these.  `tenbin emu --check` reports it, since it
 *     would run unseen by the virtual clocks.
 */
#ifndef TB_EMU_UNMODELLED_H
#define TB_EMU_UNMODELLED_H

#include <string.h>

/* Names that the MPI underneath may not define are listed too: a program
 * built against an MPI that has them stops at them instead of running them
 * unseen. */
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
    X(MPI_Win_allocate_shared) X(MPI_Win_create_dynamic) X(MPI_Win_post) X(MPI_Win_start)      \
    X(MPI_Win_complete) X(MPI_Win_wait) X(MPI_Win_test) X(MPI_Get_accumulate) X(MPI_Fetch_and_op) \
    X(MPI_Compare_and_swap) X(MPI_Rput) X(MPI_Rget) X(MPI_Raccumulate) X(MPI_Rget_accumulate)  \
    X(MPI_Neighbor_allgather) X(MPI_Neighbor_allgatherv) X(MPI_Neighbor_alltoall)              \
    X(MPI_Neighbor_alltoallv) X(MPI_Neighbor_alltoallw) X(MPI_Ineighbor_allgather)             \
    X(MPI_Ineighbor_allgatherv) X(MPI_Ineighbor_alltoall) X(MPI_Ineighbor_alltoallv)           \
    X(MPI_Ineighbor_alltoallw) X(MPI_File_open) X(MPI_Sendrecv_init) X(MPI_Isendrecv)          \
    X(MPI_Isendrecv_replace) X(MPI_Imrecv) TB_EMU_UNSUPPORTED_MPI4(X)

/* MPI-4's large-count (_c), persistent collective (_init), partitioned and
 * session functions that communicate or make communicators (MPICH 4 defines
 * them; Open MPI 4.1 does not). */
#define TB_EMU_UNSUPPORTED_MPI4(X)                                                                 \
    X(MPI_Accumulate_c) X(MPI_Allgather_c) X(MPI_Allgather_init) X(MPI_Allgather_init_c)           \
    X(MPI_Allgatherv_c) X(MPI_Allgatherv_init) X(MPI_Allgatherv_init_c) X(MPI_Allreduce_c)         \
    X(MPI_Allreduce_init) X(MPI_Allreduce_init_c) X(MPI_Alltoall_c) X(MPI_Alltoall_init)           \
    X(MPI_Alltoall_init_c) X(MPI_Alltoallv_c) X(MPI_Alltoallv_init) X(MPI_Alltoallv_init_c)        \
    X(MPI_Alltoallw_c) X(MPI_Alltoallw_init) X(MPI_Alltoallw_init_c) X(MPI_Barrier_init)           \
    X(MPI_Bcast_c) X(MPI_Bcast_init) X(MPI_Bcast_init_c) X(MPI_Bsend_c) X(MPI_Bsend_init_c)        \
    X(MPI_Comm_create_from_group) X(MPI_Comm_idup_with_info) X(MPI_Exscan_c) X(MPI_Exscan_init)    \
    X(MPI_Exscan_init_c) X(MPI_Gather_c) X(MPI_Gather_init) X(MPI_Gather_init_c)                   \
    X(MPI_Gatherv_c) X(MPI_Gatherv_init) X(MPI_Gatherv_init_c) X(MPI_Get_accumulate_c)             \
    X(MPI_Get_c) X(MPI_Iallgather_c) X(MPI_Iallgatherv_c) X(MPI_Iallreduce_c) X(MPI_Ialltoall_c)   \
    X(MPI_Ialltoallv_c) X(MPI_Ialltoallw_c) X(MPI_Ibcast_c) X(MPI_Ibsend_c) X(MPI_Iexscan_c)       \
    X(MPI_Igather_c) X(MPI_Igatherv_c) X(MPI_Imrecv_c) X(MPI_Ineighbor_allgather_c)                \
    X(MPI_Ineighbor_allgatherv_c) X(MPI_Ineighbor_alltoall_c) X(MPI_Ineighbor_alltoallv_c)         \
    X(MPI_Ineighbor_alltoallw_c) X(MPI_Intercomm_create_from_groups) X(MPI_Irecv_c)                \
    X(MPI_Ireduce_c) X(MPI_Ireduce_scatter_block_c) X(MPI_Ireduce_scatter_c) X(MPI_Irsend_c)       \
    X(MPI_Iscan_c) X(MPI_Iscatter_c) X(MPI_Iscatterv_c) X(MPI_Isend_c) X(MPI_Isendrecv_c)          \
    X(MPI_Isendrecv_replace_c) X(MPI_Issend_c) X(MPI_Mrecv_c) X(MPI_Neighbor_allgather_c)          \
    X(MPI_Neighbor_allgather_init) X(MPI_Neighbor_allgather_init_c) X(MPI_Neighbor_allgatherv_c)   \
    X(MPI_Neighbor_allgatherv_init) X(MPI_Neighbor_allgatherv_init_c) X(MPI_Neighbor_alltoall_c)   \
    X(MPI_Neighbor_alltoall_init) X(MPI_Neighbor_alltoall_init_c) X(MPI_Neighbor_alltoallv_c)      \
    X(MPI_Neighbor_alltoallv_init) X(MPI_Neighbor_alltoallv_init_c) X(MPI_Neighbor_alltoallw_c)    \
    X(MPI_Neighbor_alltoallw_init) X(MPI_Neighbor_alltoallw_init_c) X(MPI_Parrived)                \
    X(MPI_Pready) X(MPI_Pready_list) X(MPI_Pready_range) X(MPI_Precv_init) X(MPI_Psend_init)       \
    X(MPI_Put_c) X(MPI_Raccumulate_c) X(MPI_Recv_c) X(MPI_Recv_init_c) X(MPI_Reduce_c)             \
    X(MPI_Reduce_init) X(MPI_Reduce_init_c) X(MPI_Reduce_scatter_block_c)                          \
    X(MPI_Reduce_scatter_block_init) X(MPI_Reduce_scatter_block_init_c) X(MPI_Reduce_scatter_c)    \
    X(MPI_Reduce_scatter_init) X(MPI_Reduce_scatter_init_c) X(MPI_Rget_accumulate_c)               \
    X(MPI_Rget_c) X(MPI_Rput_c) X(MPI_Rsend_c) X(MPI_Rsend_init_c) X(MPI_Scan_c)                   \
    X(MPI_Scan_init) X(MPI_Scan_init_c) X(MPI_Scatter_c) X(MPI_Scatter_init)                       \
    X(MPI_Scatter_init_c) X(MPI_Scatterv_c) X(MPI_Scatterv_init) X(MPI_Scatterv_init_c)            \
    X(MPI_Send_c) X(MPI_Send_init_c) X(MPI_Sendrecv_c) X(MPI_Sendrecv_replace_c)                   \
    X(MPI_Session_finalize) X(MPI_Session_init) X(MPI_Ssend_c) X(MPI_Ssend_init_c)

/* Names that do not communicate: prefixes and suffixes (MPI_Win_* and
 * MPI_File_* other than those above act on a window or a file, which only a
 * function that is not emulated makes). */
static const char *const tb_emu_local_prefix[] = {
    "MPI_Type_",  "MPI_Group_",  "MPI_Info_",     "MPI_Op_",      "MPI_Errhandler_",
    "MPI_T_",     "MPI_Status_", "MPI_Pack",      "MPI_Unpack",   "MPI_Keyval_",
    "MPI_Attr_",  "MPI_Add_error_", "MPI_Error_", "MPI_Cart",     "MPI_Graph",
    "MPI_Win_",   "MPI_File_",   "MPI_Aint_",     "MPI_Dist_graph_neighbors", "MPI_Grequest_",
    "MPI_Get_address", "MPI_Get_count", "MPI_Get_elements", "MPI_Get_version",
    "MPI_Get_library_version", "MPI_Get_processor_name", "MPI_Get_hw_resource_info",
    "MPI_Session_get_", "MPI_Request_c2f", "MPI_Request_f2c", "MPI_Message_c2f",
    "MPI_Message_f2c", "MPI_Comm_c2f", "MPI_Comm_f2c",
};
static const char *const tb_emu_local_suffix[] = {
    "_get_name", "_set_name",   "_get_attr",   "_set_attr",        "_delete_attr",
    "_create_keyval", "_free_keyval", "_get_errhandler", "_set_errhandler",
    "_create_errhandler", "_call_errhandler", "_get_info", "_set_info", "_c2f", "_f2c",
    "_DUP_FN", "_NULL_COPY_FN", "_NULL_DELETE_FN", "_F90", "_FN_NULL",
};
static const char *const tb_emu_local_name[] = {
    "MPI_Comm_size", "MPI_Comm_rank", "MPI_Comm_remote_size", "MPI_Comm_remote_group",
    "MPI_Comm_group", "MPI_Comm_compare", "MPI_Comm_test_inter", "MPI_Comm_get_parent",
    "MPI_Initialized", "MPI_Finalized", "MPI_Is_thread_main", "MPI_Wtick", "MPI_Dims_create",
    "MPI_Topo_test", "MPI_Alloc_mem", "MPI_Free_mem", "MPI_Buffer_attach",
    "MPI_Buffer_detach", "MPI_Address", "MPI_Pcontrol", "MPI_Reduce_local",
    "MPI_Test_cancelled", "MPI_Register_datarep", "MPI_Open_port", "MPI_Close_port",
    "MPI_Publish_name", "MPI_Lookup_name", "MPI_Unpublish_name", "MPI_DUP_FN",
    "MPI_F_STATUS_IGNORE", "MPI_F_STATUSES_IGNORE",
};

/* 1 if MPI function `name` (its C name; a large-count variant, NAME_c, as
 * NAME) does not communicate. */
static inline int tb_emu_is_local(const char *name)
{
    size_t n = strlen(name);
    if (n > 2 && n < 128 && strcmp(name + n - 2, "_c") == 0) {
        char base[128];
        memcpy(base, name, n - 2);
        base[n - 2] = 0;
        return tb_emu_is_local(base);
    }
    for (size_t i = 0; i < sizeof tb_emu_local_prefix / sizeof *tb_emu_local_prefix; i++)
        if (strncmp(name, tb_emu_local_prefix[i], strlen(tb_emu_local_prefix[i])) == 0)
            return 1;
    for (size_t i = 0; i < sizeof tb_emu_local_suffix / sizeof *tb_emu_local_suffix; i++) {
        size_t k = strlen(tb_emu_local_suffix[i]);
        if (n > k && strcmp(name + n - k, tb_emu_local_suffix[i]) == 0)
            return 1;
    }
    for (size_t i = 0; i < sizeof tb_emu_local_name / sizeof *tb_emu_local_name; i++)
        if (strcmp(name, tb_emu_local_name[i]) == 0)
            return 1;
    return 0;
}

#endif
