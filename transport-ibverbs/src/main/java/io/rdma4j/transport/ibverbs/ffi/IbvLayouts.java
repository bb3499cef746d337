package io.rdma4j.transport.ibverbs.ffi;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The struct layouts of {@code <infiniband/verbs.h>} (rdma-core 44, x86-64 LP64) that the bindings
 * read or write, with member names spelled as in C. Members are laid out with C's natural
 * alignment by {@link #struct}; opaque members (pthread types) are byte blocks of the glibc size.
 * Unions the bindings never read are reduced to the member they use, named as in C.
 *
 * <p>{@code IbvLayoutsTest} compiles a C program against the real header and compares every named
 * member's offset and size, and every struct's size, with these layouts: {@link #ALL} lists what
 * it checks.
 */
final class IbvLayouts {

    private IbvLayouts() {
    }

    private static final ValueLayout U8 = JAVA_BYTE;
    private static final ValueLayout U16 = JAVA_SHORT;
    private static final ValueLayout U32 = JAVA_INT;
    private static final ValueLayout U64 = JAVA_LONG;

    /** glibc x86-64: {@code sizeof(pthread_mutex_t)} = 40, {@code sizeof(pthread_cond_t)} = 48, both 8-aligned. */
    private static MemoryLayout mutex() {
        return MemoryLayout.sequenceLayout(5, JAVA_LONG).withName("mutex");
    }

    private static MemoryLayout cond() {
        return MemoryLayout.sequenceLayout(6, JAVA_LONG).withName("cond");
    }

    /**
     * {@code union ibv_gid}: 16 raw bytes. The {@code global} view is never read, but it makes the
     * union 8-aligned, which moves the end of {@code struct ibv_qp_attr} (144 bytes, not 140).
     */
    static final UnionLayout IBV_GID = MemoryLayout.unionLayout(
            MemoryLayout.sequenceLayout(16, U8).withName("raw"),
            struct("global", U64.withName("subnet_prefix"), U64.withName("interface_id"))).withName("ibv_gid");

    /** {@code struct ibv_device_attr}, filled by {@code ibv_query_device}. */
    static final StructLayout IBV_DEVICE_ATTR = struct("ibv_device_attr",
            MemoryLayout.sequenceLayout(64, U8).withName("fw_ver"),
            U64.withName("node_guid"), U64.withName("sys_image_guid"),
            U64.withName("max_mr_size"), U64.withName("page_size_cap"),
            U32.withName("vendor_id"), U32.withName("vendor_part_id"), U32.withName("hw_ver"),
            U32.withName("max_qp"), U32.withName("max_qp_wr"), U32.withName("device_cap_flags"),
            U32.withName("max_sge"), U32.withName("max_sge_rd"), U32.withName("max_cq"),
            U32.withName("max_cqe"), U32.withName("max_mr"), U32.withName("max_pd"),
            U32.withName("max_qp_rd_atom"), U32.withName("max_ee_rd_atom"), U32.withName("max_res_rd_atom"),
            U32.withName("max_qp_init_rd_atom"), U32.withName("max_ee_init_rd_atom"), U32.withName("atomic_cap"),
            U32.withName("max_ee"), U32.withName("max_rdd"), U32.withName("max_mw"),
            U32.withName("max_raw_ipv6_qp"), U32.withName("max_raw_ethy_qp"), U32.withName("max_mcast_grp"),
            U32.withName("max_mcast_qp_attach"), U32.withName("max_total_mcast_qp_attach"), U32.withName("max_ah"),
            U32.withName("max_fmr"), U32.withName("max_map_per_fmr"), U32.withName("max_srq"),
            U32.withName("max_srq_wr"), U32.withName("max_srq_sge"), U16.withName("max_pkeys"),
            U8.withName("local_ca_ack_delay"), U8.withName("phys_port_cnt"));

    /**
     * {@code struct ibv_port_attr}. The exported {@code ibv_query_port} fills its older prefix
     * (everything before {@code port_cap_flags2}); the buffer is zeroed first, as the header's
     * inline wrapper does.
     */
    static final StructLayout IBV_PORT_ATTR = struct("ibv_port_attr",
            U32.withName("state"), U32.withName("max_mtu"), U32.withName("active_mtu"),
            U32.withName("gid_tbl_len"), U32.withName("port_cap_flags"), U32.withName("max_msg_sz"),
            U32.withName("bad_pkey_cntr"), U32.withName("qkey_viol_cntr"), U16.withName("pkey_tbl_len"),
            U16.withName("lid"), U16.withName("sm_lid"), U8.withName("lmc"), U8.withName("max_vl_num"),
            U8.withName("sm_sl"), U8.withName("subnet_timeout"), U8.withName("init_type_reply"),
            U8.withName("active_width"), U8.withName("active_speed"), U8.withName("phys_state"),
            U8.withName("link_layer"), U8.withName("flags"), U16.withName("port_cap_flags2"));

    /**
     * {@code struct ibv_context_ops}: the legacy function table. Since rdma-core 16 providers fill
     * it through {@code verbs_set_ops}; {@code ibv_post_send}, {@code ibv_post_recv},
     * {@code ibv_poll_cq} and {@code ibv_req_notify_cq} are static inline in {@code verbs.h} and
     * call through it, so the bindings do the same ({@link OpsTable}).
     */
    static final StructLayout IBV_CONTEXT_OPS = struct("ibv_context_ops", pointers(
            "_compat_query_device", "_compat_query_port", "_compat_alloc_pd", "_compat_dealloc_pd",
            "_compat_reg_mr", "_compat_rereg_mr", "_compat_dereg_mr", "alloc_mw", "bind_mw", "dealloc_mw",
            "_compat_create_cq", "poll_cq", "req_notify_cq", "_compat_cq_event", "_compat_resize_cq",
            "_compat_destroy_cq", "_compat_create_srq", "_compat_modify_srq", "_compat_query_srq",
            "_compat_destroy_srq", "post_srq_recv", "_compat_create_qp", "_compat_query_qp",
            "_compat_modify_qp", "_compat_destroy_qp", "post_send", "post_recv", "_compat_create_ah",
            "_compat_destroy_ah", "_compat_attach_mcast", "_compat_detach_mcast", "_compat_async_event"));

    /** {@code struct ibv_context}, returned by {@code ibv_open_device}. */
    static final StructLayout IBV_CONTEXT = struct("ibv_context",
            ADDRESS.withName("device"), IBV_CONTEXT_OPS.withName("ops"), U32.withName("cmd_fd"),
            U32.withName("async_fd"), U32.withName("num_comp_vectors"), mutex(), ADDRESS.withName("abi_compat"));

    /** {@code struct ibv_pd}. */
    static final StructLayout IBV_PD = struct("ibv_pd", ADDRESS.withName("context"), U32.withName("handle"));

    /** {@code struct ibv_mr}, returned by {@code ibv_reg_mr}. */
    static final StructLayout IBV_MR = struct("ibv_mr",
            ADDRESS.withName("context"), ADDRESS.withName("pd"), ADDRESS.withName("addr"), U64.withName("length"),
            U32.withName("handle"), U32.withName("lkey"), U32.withName("rkey"));

    /** {@code struct ibv_comp_channel}, returned by {@code ibv_create_comp_channel}. */
    static final StructLayout IBV_COMP_CHANNEL = struct("ibv_comp_channel",
            ADDRESS.withName("context"), U32.withName("fd"), U32.withName("refcnt"));

    /** {@code struct ibv_cq}, returned by {@code ibv_create_cq}. */
    static final StructLayout IBV_CQ = struct("ibv_cq",
            ADDRESS.withName("context"), ADDRESS.withName("channel"), ADDRESS.withName("cq_context"),
            U32.withName("handle"), U32.withName("cqe"), mutex(), cond(),
            U32.withName("comp_events_completed"), U32.withName("async_events_completed"));

    /** {@code struct ibv_qp}, returned by {@code ibv_create_qp}. */
    static final StructLayout IBV_QP = struct("ibv_qp",
            ADDRESS.withName("context"), ADDRESS.withName("qp_context"), ADDRESS.withName("pd"),
            ADDRESS.withName("send_cq"), ADDRESS.withName("recv_cq"), ADDRESS.withName("srq"),
            U32.withName("handle"), U32.withName("qp_num"), U32.withName("state"), U32.withName("qp_type"),
            mutex(), cond(), U32.withName("events_completed"));

    /** {@code struct ibv_qp_cap}. */
    static final StructLayout IBV_QP_CAP = struct("ibv_qp_cap",
            U32.withName("max_send_wr"), U32.withName("max_recv_wr"), U32.withName("max_send_sge"),
            U32.withName("max_recv_sge"), U32.withName("max_inline_data"));

    /** {@code struct ibv_qp_init_attr}, the argument of {@code ibv_create_qp}. */
    static final StructLayout IBV_QP_INIT_ATTR = struct("ibv_qp_init_attr",
            ADDRESS.withName("qp_context"), ADDRESS.withName("send_cq"), ADDRESS.withName("recv_cq"),
            ADDRESS.withName("srq"), IBV_QP_CAP.withName("cap"), U32.withName("qp_type"), U32.withName("sq_sig_all"));

    /** {@code struct ibv_global_route}. */
    static final StructLayout IBV_GLOBAL_ROUTE = struct("ibv_global_route",
            IBV_GID.withName("dgid"), U32.withName("flow_label"), U8.withName("sgid_index"),
            U8.withName("hop_limit"), U8.withName("traffic_class"));

    /** {@code struct ibv_ah_attr}: the address vector of a connected queue pair. */
    static final StructLayout IBV_AH_ATTR = struct("ibv_ah_attr",
            IBV_GLOBAL_ROUTE.withName("grh"), U16.withName("dlid"), U8.withName("sl"), U8.withName("src_path_bits"),
            U8.withName("static_rate"), U8.withName("is_global"), U8.withName("port_num"));

    /** {@code struct ibv_qp_attr}, the argument of {@code ibv_modify_qp} and {@code ibv_query_qp}. */
    static final StructLayout IBV_QP_ATTR = struct("ibv_qp_attr",
            U32.withName("qp_state"), U32.withName("cur_qp_state"), U32.withName("path_mtu"),
            U32.withName("path_mig_state"), U32.withName("qkey"), U32.withName("rq_psn"), U32.withName("sq_psn"),
            U32.withName("dest_qp_num"), U32.withName("qp_access_flags"), IBV_QP_CAP.withName("cap"),
            IBV_AH_ATTR.withName("ah_attr"), IBV_AH_ATTR.withName("alt_ah_attr"), U16.withName("pkey_index"),
            U16.withName("alt_pkey_index"), U8.withName("en_sqd_async_notify"), U8.withName("sq_draining"),
            U8.withName("max_rd_atomic"), U8.withName("max_dest_rd_atomic"), U8.withName("min_rnr_timer"),
            U8.withName("port_num"), U8.withName("timeout"), U8.withName("retry_cnt"), U8.withName("rnr_retry"),
            U8.withName("alt_port_num"), U8.withName("alt_timeout"), U32.withName("rate_limit"));

    /** {@code struct ibv_sge}: one scatter/gather entry. */
    static final StructLayout IBV_SGE = struct("ibv_sge",
            U64.withName("addr"), U32.withName("length"), U32.withName("lkey"));

    /** {@code struct ibv_mw_bind_info}: only sized here (part of the send work request's last union). */
    private static final StructLayout IBV_MW_BIND_INFO = struct("ibv_mw_bind_info",
            ADDRESS.withName("mr"), U64.withName("addr"), U64.withName("length"), U32.withName("mw_access_flags"));

    /**
     * {@code struct ibv_send_wr}. The {@code wr} union keeps its {@code rdma} and {@code atomic}
     * views (the latter only gives the union its size); the anonymous unions keep
     * {@code imm_data} and {@code bind_mw}, the largest member of the last one.
     */
    static final StructLayout IBV_SEND_WR = struct("ibv_send_wr",
            U64.withName("wr_id"), ADDRESS.withName("next"), ADDRESS.withName("sg_list"), U32.withName("num_sge"),
            U32.withName("opcode"), U32.withName("send_flags"), U32.withName("imm_data"),
            MemoryLayout.unionLayout(
                    struct("rdma", U64.withName("remote_addr"), U32.withName("rkey")),
                    struct("atomic", U64.withName("remote_addr"), U64.withName("compare_add"),
                            U64.withName("swap"), U32.withName("rkey"))).withName("wr"),
            U32.withName("qp_type"),
            struct("bind_mw", ADDRESS.withName("mw"), U32.withName("rkey"), IBV_MW_BIND_INFO.withName("bind_info")));

    /** {@code struct ibv_recv_wr}. */
    static final StructLayout IBV_RECV_WR = struct("ibv_recv_wr",
            U64.withName("wr_id"), ADDRESS.withName("next"), ADDRESS.withName("sg_list"), U32.withName("num_sge"));

    /** {@code struct ibv_wc}: one completion, filled by {@code ibv_poll_cq}. */
    static final StructLayout IBV_WC = struct("ibv_wc",
            U64.withName("wr_id"), U32.withName("status"), U32.withName("opcode"), U32.withName("vendor_err"),
            U32.withName("byte_len"), U32.withName("imm_data"), U32.withName("qp_num"), U32.withName("src_qp"),
            U32.withName("wc_flags"), U16.withName("pkey_index"), U16.withName("slid"), U8.withName("sl"),
            U8.withName("dlid_path_bits"));

    /**
     * Every layout above under its C type, for the layout check: "struct ibv_wc" maps to
     * {@link #IBV_WC}. Nested structs named after a C member ({@code rdma}, {@code bind_mw}) are
     * checked through their parent.
     */
    static final Map<String, GroupLayout> ALL = all();

    private static Map<String, GroupLayout> all() {
        Map<String, GroupLayout> all = new LinkedHashMap<>();
        all.put("union ibv_gid", IBV_GID);
        for (StructLayout s : List.of(IBV_DEVICE_ATTR, IBV_PORT_ATTR, IBV_CONTEXT_OPS, IBV_CONTEXT, IBV_PD, IBV_MR,
                IBV_COMP_CHANNEL, IBV_CQ, IBV_QP, IBV_QP_CAP, IBV_QP_INIT_ATTR, IBV_GLOBAL_ROUTE, IBV_AH_ATTR,
                IBV_QP_ATTR, IBV_SGE, IBV_MW_BIND_INFO, IBV_SEND_WR, IBV_RECV_WR, IBV_WC)) {
            all.put("struct " + s.name().orElseThrow(), s);
        }
        return Map.copyOf(all);
    }

    /**
     * The byte offset of a member, e.g. {@code offset(IBV_QP_ATTR, "ah_attr", "grh", "sgid_index")}.
     *
     * @throws IllegalArgumentException if the path names no member
     */
    static long offset(MemoryLayout layout, String... path) {
        MemoryLayout.PathElement[] elements = new MemoryLayout.PathElement[path.length];
        for (int i = 0; i < path.length; i++) {
            elements[i] = groupElement(path[i]);
        }
        return layout.byteOffset(elements);
    }

    /** A C struct: members in order, each at its natural alignment, the size rounded up to the largest. */
    static StructLayout struct(String name, MemoryLayout... members) {
        List<MemoryLayout> laidOut = new ArrayList<>();
        long offset = 0;
        long maxAlignment = 1;
        for (MemoryLayout member : members) {
            long alignment = member.byteAlignment();
            long padding = (alignment - offset % alignment) % alignment;
            if (padding > 0) {
                laidOut.add(MemoryLayout.paddingLayout(padding));
                offset += padding;
            }
            laidOut.add(member);
            offset += member.byteSize();
            maxAlignment = Math.max(maxAlignment, alignment);
        }
        long tail = (maxAlignment - offset % maxAlignment) % maxAlignment;
        if (tail > 0) {
            laidOut.add(MemoryLayout.paddingLayout(tail));
        }
        return MemoryLayout.structLayout(laidOut.toArray(MemoryLayout[]::new)).withName(name);
    }

    private static MemoryLayout[] pointers(String... names) {
        MemoryLayout[] layouts = new MemoryLayout[names.length];
        for (int i = 0; i < names.length; i++) {
            layouts[i] = ADDRESS.withName(names[i]);
        }
        return layouts;
    }
}
