package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Downcall handles for the exported functions of {@code libibverbs.so.1} (rdma-core 44,
 * {@code <infiniband/verbs.h>}) and the few libc functions the bindings need, plus unbound
 * handles for the four verbs that the header implements inline through
 * {@code struct ibv_context_ops} ({@link #POLL_CQ}, {@link #POST_SEND}, {@link #POST_RECV},
 * {@link #REQ_NOTIFY_CQ}: the caller passes the function pointer read from the context).
 *
 * <p>Functions that report failure as NULL or -1 plus {@code errno} are bound with
 * {@link Downcalls#CAPTURE_ERRNO}: the first argument of their handle is the capture segment
 * ({@link Downcalls#CAPTURE_STATE}), read with {@link Downcalls#errno}. Functions that return an errno value
 * directly are bound plainly.
 *
 * <p>Class initialisation loads the library; callers reach this class only after
 * {@link LibIbverbs#probe()} found it loadable ({@link #requireLibrary}).
 */
@SuppressWarnings("restricted")     // the restricted FFM calls of the bindings live here
final class IbvFunctions {

    private IbvFunctions() {
    }

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBRARY = SymbolLookup.libraryLookup(LibIbverbs.LIBRARY_NAME, Arena.global());

    // struct ibv_device **ibv_get_device_list(int *num_devices);
    static final MethodHandle GET_DEVICE_LIST = withErrno("ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS));
    // void ibv_free_device_list(struct ibv_device **list);
    static final MethodHandle FREE_DEVICE_LIST = plain("ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
    // const char *ibv_get_device_name(struct ibv_device *device);
    static final MethodHandle GET_DEVICE_NAME = plain("ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS));
    // struct ibv_context *ibv_open_device(struct ibv_device *device);
    static final MethodHandle OPEN_DEVICE = withErrno("ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS));
    // int ibv_close_device(struct ibv_context *context);
    static final MethodHandle CLOSE_DEVICE = withErrno("ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    // int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr);
    static final MethodHandle QUERY_DEVICE = withErrno("ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    // int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct _compat_ibv_port_attr *port_attr);
    static final MethodHandle QUERY_PORT = withErrno("ibv_query_port",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS));
    // int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid);
    static final MethodHandle QUERY_GID = withErrno("ibv_query_gid",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS));
    // struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);
    static final MethodHandle ALLOC_PD = withErrno("ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS));
    // int ibv_dealloc_pd(struct ibv_pd *pd);
    static final MethodHandle DEALLOC_PD = withErrno("ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    // struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
    // (the header's ibv_reg_mr macro only diverts to ibv_reg_mr_iova2 for IBV_ACCESS_OPTIONAL_RANGE flags)
    static final MethodHandle REG_MR = withErrno("ibv_reg_mr",
            FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
    // int ibv_dereg_mr(struct ibv_mr *mr);
    static final MethodHandle DEREG_MR = withErrno("ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    // struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context);
    static final MethodHandle CREATE_COMP_CHANNEL = withErrno("ibv_create_comp_channel", FunctionDescriptor.of(ADDRESS, ADDRESS));
    // int ibv_destroy_comp_channel(struct ibv_comp_channel *channel);
    static final MethodHandle DESTROY_COMP_CHANNEL = withErrno("ibv_destroy_comp_channel",
            FunctionDescriptor.of(JAVA_INT, ADDRESS));
    // struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
    //                              struct ibv_comp_channel *channel, int comp_vector);
    static final MethodHandle CREATE_CQ = withErrno("ibv_create_cq",
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    // int ibv_destroy_cq(struct ibv_cq *cq);
    static final MethodHandle DESTROY_CQ = withErrno("ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    // int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context);
    static final MethodHandle GET_CQ_EVENT = withErrno("ibv_get_cq_event",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    // void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);
    static final MethodHandle ACK_CQ_EVENTS = plain("ibv_ack_cq_events", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
    // struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr);
    static final MethodHandle CREATE_QP = withErrno("ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    // int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
    static final MethodHandle MODIFY_QP = withErrno("ibv_modify_qp",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    // int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, struct ibv_qp_init_attr *init_attr);
    static final MethodHandle QUERY_QP = withErrno("ibv_query_qp",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
    // int ibv_destroy_qp(struct ibv_qp *qp);
    static final MethodHandle DESTROY_QP = withErrno("ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    // const char *ibv_wc_status_str(enum ibv_wc_status status);
    static final MethodHandle WC_STATUS_STR = plain("ibv_wc_status_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));

    // The inline verbs, called through struct ibv_context_ops like the header does; the handle's
    // first argument is the function pointer. poll_cq and req_notify_cq only touch user-space
    // queues and never block, so they skip the thread-state transition (critical); post_send and
    // post_recv may ring a doorbell through a system call (rxe does), so they do not.
    // int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);  returns < 0 on error
    static final MethodHandle POLL_CQ = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), Linker.Option.critical(false));
    // int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);  returns an errno value
    static final MethodHandle REQ_NOTIFY_CQ = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), Linker.Option.critical(false));
    // int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);  returns an errno value
    static final MethodHandle POST_SEND = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    // int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);  returns an errno value
    static final MethodHandle POST_RECV = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));

    // libc: int poll(struct pollfd *fds, nfds_t nfds, int timeout);
    static final MethodHandle POLL = libcErrno("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    // libc: int eventfd(unsigned int initval, int flags);
    static final MethodHandle EVENTFD = libcErrno("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    // libc: ssize_t write(int fd, const void *buf, size_t count);
    static final MethodHandle WRITE = libcErrno("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    // libc: ssize_t read(int fd, void *buf, size_t count);
    static final MethodHandle READ = libcErrno("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    // libc: int close(int fd);
    static final MethodHandle CLOSE = libcErrno("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    /**
     * Makes sure the library can be loaded before this class is initialised.
     *
     * @throws IbverbsException naming the reason when {@link LibIbverbs#probe()} could not load it
     */
    static void requireLibrary(String function) {
        if (LibIbverbs.probe() instanceof LibIbverbs.Probe.Unavailable(String reason)
                && !reason.startsWith(LibIbverbs.NO_DEVICE_PREFIX)) {
            throw new IbverbsException(function, 0, "ibverbs unavailable: " + reason);
        }
    }

    private static MethodHandle plain(String name, FunctionDescriptor descriptor) {
        return Downcalls.bind(LIBRARY, LibIbverbs.LIBRARY_NAME, name, descriptor);
    }

    private static MethodHandle withErrno(String name, FunctionDescriptor descriptor) {
        return Downcalls.bind(LIBRARY, LibIbverbs.LIBRARY_NAME, name, descriptor, Downcalls.CAPTURE_ERRNO);
    }

    private static MethodHandle libcErrno(String name, FunctionDescriptor descriptor) {
        return Downcalls.libc(name, descriptor, Downcalls.CAPTURE_ERRNO);
    }
}
