package io.rdma4j.transport.ibverbs.ffi;

/**
 * What {@code ibv_query_device} reports about a device ({@code struct ibv_device_attr}; the
 * fields a transport sizes itself by). Immutable.
 *
 * @param firmwareVersion   {@code fw_ver}
 * @param nodeGuid          {@code node_guid}, as stored (network byte order)
 * @param maxMrSize         largest registrable region, bytes
 * @param vendorId          IEEE vendor id (0x02c9 Mellanox, 0 for rxe)
 * @param vendorPartId      vendor part id
 * @param hardwareVersion   {@code hw_ver}
 * @param maxQp             queue pairs
 * @param maxQpWr           work requests per queue
 * @param maxSge            scatter/gather entries per work request
 * @param maxCq             completion queues
 * @param maxCqe            entries per completion queue
 * @param maxMr             memory regions
 * @param maxPd             protection domains
 * @param maxQpRdAtom       outstanding RDMA READs/atomics a queue pair can be the target of
 * @param maxQpInitRdAtom   outstanding RDMA READs/atomics a queue pair can initiate
 * @param physicalPortCount ports, numbered from 1
 */
public record DeviceAttributes(String firmwareVersion, long nodeGuid, long maxMrSize, int vendorId, int vendorPartId,
                               int hardwareVersion, int maxQp, int maxQpWr, int maxSge, int maxCq, int maxCqe,
                               int maxMr, int maxPd, int maxQpRdAtom, int maxQpInitRdAtom, int physicalPortCount) {
}
