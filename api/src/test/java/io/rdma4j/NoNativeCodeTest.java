package io.rdma4j;

import io.rdma4j.testing.NativeLayering;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The manager is plain Java: no class of api binds native code (the transports do that, in their ffi packages). */
class NoNativeCodeTest {

    @Test
    void noClassOfTheManager_referencesANativeBindingType() {
        Map<String, Set<String>> references = NativeLayering.classReferences(RdmaManager.class);

        assertEquals(Map.of(), NativeLayering.offenders(references, "no ffi package in api"));
        assertTrue(references.containsKey("io/rdma4j/RdmaManager.class"), "the scan must see the manager's classes");
    }
}
