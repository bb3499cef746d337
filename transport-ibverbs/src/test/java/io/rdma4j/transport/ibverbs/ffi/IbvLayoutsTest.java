package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Java layouts and constants against the real {@code <infiniband/verbs.h>}: a C program is
 * generated from {@link IbvLayouts#ALL} and the {@code IBV_*} fields of {@link Ibv}, compiled with
 * gcc and run; it prints each struct's size, each named member's offset and size, and each
 * constant's value, in the same form the Java side computes them. Needs gcc and Debian's
 * {@code libibverbs-dev} ({@code bin/install-deps} installs both); fails, never skips, without them.
 */
class IbvLayoutsTest {

    private static final Path HEADER = Path.of("/usr/include/infiniband/verbs.h");

    @Test
    void layoutsAndConstants_matchTheCHeader(@TempDir Path dir) throws IOException, InterruptedException {
        assertTrue(Files.exists(HEADER), HEADER + " is missing: install Debian package libibverbs-dev (bin/install-deps)");
        Map<String, String> java = new TreeMap<>();
        List<String> probe = new ArrayList<>();
        IbvLayouts.ALL.forEach((type, layout) -> describe(type, layout, java, probe));
        for (Field f : Ibv.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class && f.getName().startsWith("IBV_")) {
                java.put(f.getName(), Long.toString(intValue(f)));
                probe.add("printf(\"%s\\t%lld\\n\", \"" + f.getName() + "\", (long long) " + f.getName() + ");");
            }
        }

        Map<String, String> c = runProbe(dir, probe);

        Map<String, String> differences = new TreeMap<>();
        java.forEach((k, v) -> {
            if (!v.equals(c.get(k))) {
                differences.put(k, "java: " + v + ", C: " + c.get(k));
            }
        });
        assertEquals(Map.of(), differences, "layouts or constants differ from <infiniband/verbs.h>");
        assertEquals(java.keySet(), c.keySet());
        assertTrue(java.size() > 300, "the check must cover every member: " + java.size());
    }

    /** "struct ibv_wc" -> "size 48"; "struct ibv_wc.wr_id" -> "offset 0 size 8"; recursing into named groups. */
    private static void describe(String type, GroupLayout layout, Map<String, String> java, List<String> probe) {
        java.put(type, "size " + layout.byteSize());
        probe.add("printf(\"%s\\tsize %zu\\n\", \"" + type + "\", sizeof(" + type + "));");
        members(type, layout, "", 0, java, probe);
    }

    private static void members(String type, GroupLayout group, String prefix, long base,
                                Map<String, String> java, List<String> probe) {
        long offset = 0;
        for (MemoryLayout member : group.memberLayouts()) {
            long at = group instanceof java.lang.foreign.StructLayout ? offset : 0;
            offset += member.byteSize();
            if (member.name().isEmpty()) {
                continue;                                       // padding
            }
            String path = prefix + member.name().get();
            java.put(type + "." + path, "offset " + (base + at) + " size " + member.byteSize());
            probe.add("printf(\"%s\\toffset %zu size %zu\\n\", \"" + type + "." + path + "\", offsetof(" + type + ", "
                    + path + "), sizeof(((" + type + " *) 0)->" + path + "));");
            if (member instanceof GroupLayout nested) {
                members(type, nested, path + ".", base + at, java, probe);
            }
        }
    }

    private static Map<String, String> runProbe(Path dir, List<String> statements) throws IOException, InterruptedException {
        Path source = dir.resolve("probe.c");
        Path binary = dir.resolve("probe");
        Files.writeString(source, "#include <stddef.h>\n#include <stdio.h>\n#include <infiniband/verbs.h>\n"
                + "int main(void) {\n" + String.join("\n", statements) + "\nreturn 0;\n}\n");
        String compiled = run(List.of("gcc", "-std=gnu11", "-Wall", "-Werror", "-o", binary.toString(), source.toString()));
        assertTrue(Files.isExecutable(binary), "gcc failed:\n" + compiled);
        Map<String, String> c = new TreeMap<>();
        for (String line : run(List.of(binary.toString())).split("\n")) {
            if (!line.isBlank()) {
                int tab = line.indexOf('\t');
                c.put(line.substring(0, tab), line.substring(tab + 1));
            }
        }
        return c;
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "timed out: " + command);
        assertEquals(0, p.exitValue(), command + " failed:\n" + out);
        return out;
    }

    private static int intValue(Field f) {
        try {
            return f.getInt(null);
        } catch (IllegalAccessException e) {
            throw new AssertionError(e);
        }
    }
}
