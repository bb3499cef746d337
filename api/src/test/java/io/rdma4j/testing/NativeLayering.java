package io.rdma4j.testing;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * STYLE "Native bindings", point 1, as a check the transports' tests run: only a module's
 * {@code ffi} package may use {@code Linker}, {@code SymbolLookup}, {@code FunctionDescriptor}
 * or {@code MethodHandle}. It reads the compiled classes' constant pools (class references only,
 * so lambdas and records, whose bootstrap descriptors mention {@code MethodHandle}, do not count).
 */
public final class NativeLayering {

    /** The types that make a class a native binding. */
    public static final Set<String> NATIVE_TYPES = Set.of(
            "java/lang/foreign/Linker", "java/lang/foreign/Linker$Option", "java/lang/foreign/SymbolLookup",
            "java/lang/foreign/FunctionDescriptor", "java/lang/invoke/MethodHandle");

    private NativeLayering() {
    }

    /**
     * The class references of every class compiled into the same directory or jar as {@code anchor},
     * by class file path relative to that root (e.g. {@code io/rdma4j/transport/shm/ffi/Libc.class}).
     */
    public static Map<String, Set<String>> classReferences(Class<?> anchor) {
        try {
            Path root = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
            Map<String, Set<String>> result = new TreeMap<>();
            try (Stream<Path> files = Files.walk(root)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                    try (InputStream in = Files.newInputStream(file)) {
                        result.put(root.relativize(file).toString().replace('\\', '/'), classConstants(in));
                    }
                }
            }
            return result;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The classes outside {@code ffiPrefix} (a path prefix such as {@code io/rdma4j/transport/shm/ffi/}) that
     * reference a {@linkplain #NATIVE_TYPES native binding type}, with the types each references.
     */
    public static Map<String, Set<String>> offenders(Map<String, Set<String>> references, String ffiPrefix) {
        Map<String, Set<String>> offenders = new TreeMap<>();
        references.forEach((clazz, refs) -> {
            Set<String> hits = new HashSet<>(refs);
            hits.retainAll(NATIVE_TYPES);
            if (!clazz.startsWith(ffiPrefix) && !hits.isEmpty()) {
                offenders.put(clazz, hits);
            }
        });
        return offenders;
    }

    /** The names of every CONSTANT_Class entry (JVMS 4.4). */
    private static Set<String> classConstants(InputStream input) throws IOException {
        DataInputStream in = new DataInputStream(input);
        in.readInt();                                   // magic
        in.readUnsignedShort();                         // minor
        in.readUnsignedShort();                         // major
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        List<Integer> classNameIndexes = new ArrayList<>();
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
