package io.rdma4j.transport.shm;

import io.rdma4j.testing.NativeLayering;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * STYLE "Native bindings", point 1: only {@code io.rdma4j.transport.shm.ffi} uses {@code Linker},
 * {@code SymbolLookup}, {@code FunctionDescriptor} or {@code MethodHandle} (see {@link NativeLayering}).
 */
class NativeLayeringTest {

    private static final String FFI = "io/rdma4j/transport/shm/ffi/";

    @Test
    void classesOutsideFfi_referenceNoNativeBindingType() {
        Map<String, Set<String>> references = NativeLayering.classReferences(HostIdentity.class);

        assertEquals(Map.of(), NativeLayering.offenders(references, FFI));
        assertTrue(references.getOrDefault(FFI + "Libc$MemFd.class", Set.of()).contains("java/lang/foreign/FunctionDescriptor"),
                "the scan must see the ffi layer's own references");
    }
}
