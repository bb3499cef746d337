/**
 * The binding to {@code libibverbs.so.1} (rdma-core, {@code <infiniband/verbs.h>}) through the FFM
 * API, kept apart from any transport logic: the only package that imports {@code Linker},
 * {@code SymbolLookup} or {@code MethodHandle}. Struct layouts ({@code IbvLayouts}), constants
 * ({@link io.rdma4j.transport.ibverbs.ffi.Ibv}) and downcall handles ({@code IbvFunctions}) are written by
 * hand from the header and checked against it by a test that compiles a C probe with gcc.
 *
 * <p>The public API, one owning class per native object:
 * <pre>
 *   VerbsContext.deviceNames() / open(name)      ibv_get_device_list, ibv_open_device
 *     queryDevice(), queryPort(p), queryGid(p,i)  ibv_query_device, ibv_query_port, ibv_query_gid
 *     allocateProtectionDomain()                  ibv_alloc_pd
 *       register(segment, access)  -> MemoryRegion      ibv_reg_mr
 *       createReliableConnectedQueuePair(init) -> QueuePair   ibv_create_qp
 *         modifyToInit / modifyToReadyToReceive / modifyToReadyToSend / modifyToError / state()
 *         postSend(SendWorkRequests, n), postReceive(ReceiveWorkRequests, n)
 *     createCompletionChannel()                   ibv_create_comp_channel
 *     createCompletionQueue(entries, channel)     ibv_create_cq
 *       poll(WorkCompletions), requestNotification(..)
 * </pre>
 *
 * <p>The classes, by role:
 * <ul>
 *   <li>Owning classes, one per native object: {@code VerbsContext} (a device), {@code ProtectionDomain},
 *       {@code MemoryRegion}, {@code QueuePair}, {@code CompletionQueue}, {@code CompletionChannel};
 *       {@code Resources} tracks a parent's open children so its close frees them; {@code Wakeup} (an
 *       {@code eventfd}) wakes a thread parked on a completion channel.</li>
 *   <li>Values read from or written to the library: {@code DeviceAttributes}, {@code PortAttributes},
 *       {@code Gid}, {@code QueuePairState}, {@code QueuePairInit}, {@code ReadyToReceive},
 *       {@code ReadyToSend}.</li>
 *   <li>Preallocated native arrays of the data path: {@code WorkRequestArray} (the shared part of)
 *       {@code SendWorkRequests} and {@code ReceiveWorkRequests}; {@code WorkCompletions}.</li>
 *   <li>The binding itself: {@code LibIbverbs} (lazy load and the device probe), {@code IbvFunctions}
 *       (downcall handles), {@code IbvLayouts} (struct layouts), {@code Ibv} (constants), {@code Calls}
 *       (checking a verb's result, destroying once), {@code IbverbsException} (a failed verb).
 *       Binding a symbol, {@code errno} capture and {@code errno} texts come from the shared module
 *       {@code io.rdma4j.unix} ({@link io.rdma4j.unix.Downcalls}, {@link io.rdma4j.unix.Errno}).</li>
 * </ul>
 *
 * <p><b>Inline verbs.</b> {@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_poll_cq} and
 * {@code ibv_req_notify_cq} have no symbol: the header implements them inline as calls through
 * {@code context->ops}. {@link io.rdma4j.transport.ibverbs.ffi.VerbsContext} reads those four pointers once
 * when it opens the device, and the data path calls them through unbound downcall handles.
 *
 * <p><b>Hot path.</b> Posting and polling allocate no Java objects: work requests and completions
 * live in preallocated native arrays ({@link io.rdma4j.transport.ibverbs.ffi.SendWorkRequests},
 * {@link io.rdma4j.transport.ibverbs.ffi.ReceiveWorkRequests}, {@link io.rdma4j.transport.ibverbs.ffi.WorkCompletions})
 * written and read in place, and carry 64-bit work-request ids, never objects.
 *
 * <p><b>Memory.</b> Objects the library allocates (contexts, domains, regions, queues) are freed
 * exactly once by their owner's idempotent {@code close()}; a parent's close frees the children
 * still open. Per-call scratch memory comes from a confined arena closed before the call returns;
 * work-request and completion arrays own a shared arena. Registered memory stays owned by the
 * caller.
 *
 * <p><b>Errors.</b> A failing verb throws {@link io.rdma4j.transport.ibverbs.ffi.IbverbsException} naming
 * the C function, the errno and its text; {@code errno} is captured by the linker at the call, never
 * read later. The device probe ({@link io.rdma4j.transport.ibverbs.ffi.LibIbverbs#probe()}) never throws.
 *
 * <p>Loading is lazy: nothing native happens until the probe or a device is first used.
 * Running it needs native access: {@code --enable-native-access=io.rdma4j.transport.ibverbs,io.rdma4j.unix}
 * on the module path, {@code --enable-native-access=ALL-UNNAMED} on the class path.
 */
package io.rdma4j.transport.ibverbs.ffi;
