package io.rdma4j.bench.project;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** bin/lib/java.sh, which bin/rdma-perf, bin/rdma-jshell and it/consumer/run use to find their JDK. */
class ScriptsTest {


    /** A JAVA_HOME whose bin/java claims to be a JDK 17 and whose bin/jshell would be too. */
    private static Path oldJdk(Path dir) throws Exception {
        Path bin = Files.createDirectories(dir.resolve("jdk17/bin"));
        for (String tool : new String[]{"java", "jshell"}) {
            Path script = bin.resolve(tool);
            Files.writeString(script, "#!/bin/sh\necho '    java.specification.version = 17' >&2\n", StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return dir.resolve("jdk17");
    }

    private static String bash(String script, Path oldJdk) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true);
        pb.environment().put("JAVA_HOME", oldJdk.toString());
        pb.environment().put("PATH", oldJdk.resolve("bin") + ":" + System.getenv("PATH"));
        pb.environment().put("root", Repository.root().toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    @Test
    @Timeout(90)
    void findJava_passesOverAnOlderJdkOnJavaHomeAndPath_forOneOfAtLeast22(@TempDir Path dir) throws Exception {
        Path old = oldJdk(dir);

        String java = bash("source \"$root/bin/lib/java.sh\" && find_java", old);

        assertTrue(!java.startsWith(old.toString()) && Files.isExecutable(Path.of(java)), java);
        String version = bash("\"" + java + "\" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'", old);
        assertTrue(Integer.parseInt(version) >= 22, java + " is " + version);
        assertTrue(Files.isExecutable(Path.of(java).resolveSibling("jshell")), "bin/rdma-jshell takes the jshell next to " + java);
    }

    @Test
    @Timeout(90)
    void javaVersion_readsTheFeatureVersion(@TempDir Path dir) throws Exception {
        Path old = oldJdk(dir);
        assertEquals("17", bash("source \"$root/bin/lib/java.sh\" && java_version \"$JAVA_HOME/bin/java\"", old));
    }
}
