package io.rdma4j.transport.ibverbs.ffi;

/**
 * What {@code ibv_query_port} reports about one port ({@code struct ibv_port_attr}). Immutable.
 *
 * @param state          {@code IBV_PORT_*}; {@link Ibv#IBV_PORT_ACTIVE} carries traffic
 * @param maxMtu         {@code IBV_MTU_*}
 * @param activeMtu      {@code IBV_MTU_*}: the path MTU to use on this port
 * @param gidTableLength entries in the GID table
 * @param maxMessageSize largest message, bytes
 * @param lid            the port's LID (0 on Ethernet)
 * @param activeWidth    {@code active_width} bitmask
 * @param activeSpeed    {@code active_speed} bitmask
 * @param physicalState  {@code phys_state}
 * @param linkLayer      {@link Ibv#IBV_LINK_LAYER_INFINIBAND} or {@link Ibv#IBV_LINK_LAYER_ETHERNET} (RoCE)
 */
public record PortAttributes(int state, int maxMtu, int activeMtu, int gidTableLength, long maxMessageSize, int lid,
                             int activeWidth, int activeSpeed, int physicalState, int linkLayer) {

    /**
     * Whether the port can carry traffic.
     *
     * @return {@code state == IBV_PORT_ACTIVE}
     */
    public boolean isActive() {
        return state == Ibv.IBV_PORT_ACTIVE;
    }
}
