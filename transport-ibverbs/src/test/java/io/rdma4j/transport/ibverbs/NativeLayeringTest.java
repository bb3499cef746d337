package io.rdma4j.transport.ibverbs;

import io.rdma4j.testing.NativeLayering;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * STYLE "Native bindings", point 1: only {@code io.rdma4j.transport.ibverbs.ffi} uses {@code Linker},
 * {@code SymbolLookup}, {@code FunctionDescriptor} or {@code MethodHandle} (see {@link NativeLayering}).
 */
class NativeLayeringTest {

    private static final String FFI = "io/rdma4j/transport/ibverbs/ffi/";

    @Test
    void classesOutsideFfi_referenceNoNativeBindingType() {
        Map<String, Set<String>> references = NativeLayering.classReferences(VerbsTransportProvider.class);

        assertEquals(Map.of(), NativeLayering.offenders(references, FFI));
        assertTrue(references.getOrDefault(FFI + "LibIbverbs.class", Set.of()).contains("java/lang/foreign/SymbolLookup"),
                "the scan must see the ffi layer's own references");
    }
}
