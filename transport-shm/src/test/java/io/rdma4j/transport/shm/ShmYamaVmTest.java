package io.rdma4j.transport.shm;

import io.rdma4j.testing.PeerJvm;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * In the soft-RoCE VM, whose kernel is ours: what each Yama {@code ptrace_scope} gives the shm
 * transport, with owner and holder both running as user nobody (root may ptrace anything), two
 * sibling JVMs (neither is the other's ancestor). Per scope: the route of a {@code register()}ed
 * (cross-memory attach under 0, the owner's staging copy under 1 and 2) and of an {@code allocate()}d
 * buffer (mapped under every scope), whether the holder can {@code process_vm_readv} memory the
 * owner never registered, and the owner's {@code TracerPid}. Runs only there
 * ({@code bin/softroce-vm env VM_TESTS_MODULE=transport-shm bin/vm-tests}); changes the scope and
 * puts the VM's own back afterwards.
 */
@Tag("softroce")
class ShmYamaVmTest {

    private static final Path SCOPE = Path.of("/proc/sys/kernel/yama/ptrace_scope");
    private static final List<String> NOBODY = List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups");
    /** JVMs start slowly under the VM's emulation (three at once here): bound for a greeting and each answer. */
    private static final Duration SAFETY = Duration.ofSeconds(300);
    private static String bootScope;
    private static String classPath;

    @BeforeAll
    static void yama() throws IOException {
        assertTrue(Files.exists(SCOPE), "this kernel has no Yama (" + SCOPE + " is missing)");
        bootScope = Files.readString(SCOPE).trim();
        System.out.println("ShmYamaVmTest: Yama present, ptrace_scope at boot " + bootScope + ", kernel "
                + Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim());
        classPath = readableCopy(Files.createTempDirectory("shm-yama-"));
    }

    @AfterAll
    static void restore() throws IOException {
        if (bootScope != null) {
            Files.writeString(SCOPE, bootScope);
        }
    }

    /**
     * @param registeredRoute how the holder reaches the owner's register()ed memory
     * @param registeredPath  which shm path, as the holder's INFO line names it
     * @param peek            the errno of the holder's process_vm_readv of memory the owner never
     *                        registered: 0 means the kernel lets it read the whole owner
     */
    @ParameterizedTest(name = "ptrace_scope {0}: registered memory by {1} ({2}), peek errno {3}")
    @CsvSource({"0, shm, cross-memory attach, 0", "1, shm, the owner's staging copy, 1", "2, shm, the owner's staging copy, 1"})
    void scope_defaults_routesAndWhatTheKernelLetsASiblingDo(String scope, String registeredRoute, String registeredPath,
                                                             int peek) throws Exception {
        Files.writeString(SCOPE, scope);
        try (ShmPeerProcess owner = ShmPeerProcess.startAs(NOBODY, classPath, SAFETY, "size=65536", "memory=register",
                "transports=shm,tcp");
             PeerJvm holder = PeerJvm.start(NOBODY, classPath, ShmHolderMain.class,
                     List.of("--enable-native-access=ALL-UNNAMED"), SAFETY)) {
            assertEquals("READY", holder.greeting());
            Outcome o = outcome(owner, holder);
            System.out.println("ShmYamaVmTest: ptrace_scope " + scope + ", defaults: " + o);

            assertEquals(registeredRoute, o.registered());
            assertTrue(holder.logText().contains("allocate()d buffers by mapping their memory files, other registered "
                    + "memory by " + registeredPath), holder.logText());
            assertEquals("shm", o.allocated(), "an allocate()d buffer is handed over under every scope");
            assertEquals(peek, o.peek());
            assertEquals("TracerPid: 0", o.tracer());
            assertTrue(!owner.logText().contains("called prctl(PR_SET_PTRACER"), "nothing loosened: " + owner.logText());
        }
    }

    /** The opt-in does loosen scope 1, and says so: the same sibling then reads memory the owner never registered. */
    @Test
    void scope1_allowAnyPtracer_loosens_andWarns() throws Exception {
        Files.writeString(SCOPE, "1");
        try (ShmPeerProcess owner = ShmPeerProcess.startAs(NOBODY, classPath, SAFETY, "size=65536", "memory=register",
                "transports=shm,tcp", "rdma.shm.allowAnyPtracer=true");
             PeerJvm holder = PeerJvm.start(NOBODY, classPath, ShmHolderMain.class,
                     List.of("--enable-native-access=ALL-UNNAMED"), SAFETY)) {
            Outcome o = outcome(owner, holder);
            System.out.println("ShmYamaVmTest: ptrace_scope 1, rdma.shm.allowAnyPtracer=true: " + o);

            assertEquals("shm", o.registered());
            assertTrue(holder.logText().contains("other registered memory by cross-memory attach"), holder.logText());
            assertEquals(0, o.peek());
            assertTrue(owner.logText().contains("WARNING: shm: rdma.shm.allowAnyPtracer=true: called prctl"), owner.logText());
        }
    }

    private record Outcome(String registered, String allocated, int peek, String tracer) {
    }

    private static Outcome outcome(ShmPeerProcess owner, PeerJvm holder) throws Exception {
        assertEquals("OK", owner.command("fill 7"));
        String crc = owner.command("crc").substring(4);
        String allocated = owner.command("token allocate").substring(6);
        long pid = owner.process().pid();
        String secret = owner.command("secret").substring(7);

        String[] r = holder.command("read " + java.util.HexFormat.of().formatHex(owner.token().toBytes())).split(" ");
        assertEquals("ROUTE", r[0], String.join(" ", r) + "\n" + holder.logText());
        assertEquals(crc, r[3], "the register()ed buffer's bytes");
        String[] a = holder.command("read " + allocated).split(" ");
        assertEquals("ROUTE", a[0], String.join(" ", a) + "\n" + holder.logText());
        String peek = holder.command("peek " + pid + " " + secret);
        String tracer = holder.command("status " + pid).substring(7);
        return new Outcome(r[1], a[1], Integer.parseInt(peek.substring(5)), tracer);
    }

    /** This JVM's class path, readable by user nobody: jars copied into {@code dir}; directories kept. */
    static String readableCopy(Path dir) throws IOException {
        List<String> entries = new ArrayList<>();
        int n = 0;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Path.of(entry);
            if (Files.isRegularFile(p)) {
                Path copy = dir.resolve(n++ + "-" + p.getFileName());
                Files.copy(p, copy);
                Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rw-r--r--"));
                p = copy;
            }
            entries.add(p.toString());
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        return String.join(File.pathSeparator, entries);
    }
}
