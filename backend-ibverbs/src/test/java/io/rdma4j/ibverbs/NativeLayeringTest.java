package io.rdma4j.ibverbs;

import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * STYLE "Native bindings", point 1: only {@code io.rdma4j.ibverbs.ffi} uses {@code Linker},
 * {@code SymbolLookup}, {@code FunctionDescriptor} or {@code MethodHandle}. Checked on the
 * compiled classes' constant pools (class references only, so lambdas and records, whose
 * bootstrap descriptors mention {@code MethodHandle}, do not count).
 */
class NativeLayeringTest {

    private static final Set<String> NATIVE_TYPES = Set.of(
            "java/lang/foreign/Linker", "java/lang/foreign/Linker$Option", "java/lang/foreign/SymbolLookup",
            "java/lang/foreign/FunctionDescriptor", "java/lang/invoke/MethodHandle");

    private static final String FFI = "io/rdma4j/ibverbs/ffi/";

    @Test
    void classesOutsideFfi_referenceNoNativeBindingType() throws IOException, URISyntaxException {
        Map<String, Set<String>> offenders = new TreeMap<>();

        Map<String, Set<String>> references = classReferences();

        references.forEach((clazz, refs) -> {
            Set<String> hits = new HashSet<>(refs);
            hits.retainAll(NATIVE_TYPES);
            if (!clazz.startsWith(FFI) && !hits.isEmpty()) {
                offenders.put(clazz, hits);
            }
        });
        assertEquals(Map.of(), offenders);
        assertTrue(references.getOrDefault(FFI + "LibIbverbs.class", Set.of()).contains("java/lang/foreign/SymbolLookup"),
                "the scan must see the ffi layer's own references");
    }

    private static Map<String, Set<String>> classReferences() throws IOException, URISyntaxException {
        Path root = Path.of(IbverbsTransportProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Map<String, Set<String>> result = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                try (InputStream in = Files.newInputStream(file)) {
                    result.put(root.relativize(file).toString().replace('\\', '/'), classConstants(in));
                }
            }
        }
        return result;
    }

    /** The names of every CONSTANT_Class entry (JVMS 4.4). */
    private static Set<String> classConstants(InputStream input) throws IOException {
        DataInputStream in = new DataInputStream(input);
        in.readInt();                                   // magic
        in.readUnsignedShort();                         // minor
        in.readUnsignedShort();                         // major
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        List<Integer> classNameIndexes = new java.util.ArrayList<>();
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> utf8[i] = in.readUTF();
                case 7 -> classNameIndexes.add(in.readUnsignedShort());
                case 8, 16, 19, 20 -> in.readUnsignedShort();
                case 15 -> {
                    in.readUnsignedByte();
                    in.readUnsignedShort();
                }
                case 3, 4, 9, 10, 11, 12, 17, 18 -> in.readInt();
                case 5, 6 -> {
                    in.readLong();
                    i++;                                // takes two slots
                }
                default -> throw new IOException("unknown constant pool tag " + tag);
            }
        }
        Set<String> names = new HashSet<>();
        for (int index : classNameIndexes) {
            names.add(utf8[index]);
        }
        return names;
    }
}
