package io.rdma4j.transport.shm;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.transport.shm.ffi.UnixSockets;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.testing.ForgedTokens;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.TokenRefs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The owner's hand-over socket, spoken to directly as a holder (or an intruder) would: the key is
 * checked before any descriptor leaves the owner, only processes of the owner's user are served,
 * and a holder talks only to the owner process its token names.
 */
class HandoverTest {

    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long SELF = ProcessHandle.current().pid();

    @RegisterExtension
    final Managers managers = new Managers();

    private static String socketOf(RemoteBufferRef ref) {
        return Handover.name(HexFormat.of().formatHex(ShmContext.fromBytes(ref.context()).socket()));
    }

    private static byte[] attach(RemoteBufferRef ref) {
        return ShmProtocol.attach(HexFormat.of().parseHex(ref.incarnation()), ref.bufferId(), ref.accessKey(),
                HostIdentity.current());
    }

    private RemoteBufferRef allocated(RdmaManager owner) {
        RdmaRemoteBuffer token = owner.allocate(4096).join().remote();
        return TokenRefs.refFor(token, ShmTransportProvider.NAME);
    }

    @Test
    void attachWithAWrongKey_isRefusedAsDenied_andCarriesNoDescriptor() throws IOException {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaRemoteBuffer token = owner.allocate(4096).join().remote();
        RemoteBufferRef forged = TokenRefs.refFor(ForgedTokens.withWrongKey(token), ShmTransportProvider.NAME);

        UnixSockets.Message reply = Handover.ask(socketOf(forged), SELF, attach(forged), TIMEOUT_NANOS);

        reply.closeFds();
        assertEquals(0, reply.fds().length, "descriptors handed to a wrong key");
        assertEquals(ErrorCode.ACCESS_DENIED.wire(), ShmProtocol.status(reply.bytes()));
        assertEquals(ShmProtocol.denied(token.id()), ShmProtocol.message(reply.bytes()));
    }

    @Test
    void attachWithTheKey_isGranted_withTheTablesFilesAndTheBuffersMemoryFile() throws IOException {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RemoteBufferRef ref = allocated(owner);

        UnixSockets.Message reply = Handover.ask(socketOf(ref), SELF, attach(ref), TIMEOUT_NANOS);

        try {
            ShmProtocol.Grant grant = ShmProtocol.readGrant(reply.bytes());
            assertTrue(grant.memoryFile());
            assertEquals(3, reply.fds().length);
            assertEquals("/memfd:rdma4j-shm-access (deleted)", link(reply.fds()[0]));
            assertEquals("/memfd:rdma4j-shm-rows (deleted)", link(reply.fds()[1]));
            assertEquals("/memfd:rdma4j-shm-buffer (deleted)", link(reply.fds()[2]));
        } finally {
            reply.closeFds();
        }
    }

    private static String link(int fd) throws IOException {
        return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
    }

    /** A registered segment (not a memory file) gets a grant with the table's files only: its memory is reached by address. */
    @Test
    void attachToRegisteredMemory_isGranted_withTheTablesFilesOnly() throws IOException {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RemoteBufferRef ref = TokenRefs.refFor(owner.register(managers.arena().allocate(4096, 4096)).join(), ShmTransportProvider.NAME);

        UnixSockets.Message reply = Handover.ask(socketOf(ref), SELF, attach(ref), TIMEOUT_NANOS);

        reply.closeFds();
        assertEquals(false, ShmProtocol.readGrant(reply.bytes()).memoryFile());
        assertEquals(2, reply.fds().length);
    }

    @Test
    void socketHeldByAnotherProcessThanTheTokenNames_isNotTalkedTo() throws IOException {
        String name = Handover.name(UUID.randomUUID().toString().replace("-", ""));
        try (Handover.Server squatter = new Handover.Server(name, (peer, request) -> new Handover.Answer(new byte[] {0}))) {
            long owner = SELF + 1;

            var e = assertThrows(IOException.class, () -> Handover.ask(name, owner, new byte[] {1}, TIMEOUT_NANOS));

            assertTrue(e.getMessage().contains("is held by pid " + SELF), e.getMessage());
        }
    }

    /**
     * A process of another user (nobody) that has the token, key included, gets nothing: the
     * owner closes its connection unanswered. Needs root and setpriv(1), and /usr/bin/python3 as the client.
     */
    @Test
    void processOfAnotherUser_withTheKey_isClosedUnanswered() throws Exception {
        assumeTrue(isRootWith("setpriv") && Files.isExecutable(PYTHON), "needs root, setpriv(1) and " + PYTHON);
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RemoteBufferRef ref = allocated(owner);
        String client = String.join("\n",
                "import socket, sys",
                "s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)",
                "s.connect('\\0' + sys.argv[1])",
                "try:",
                "    s.send(bytes.fromhex(sys.argv[2]))",
                "    data, anc, flags, addr = s.recvmsg(4096, socket.CMSG_SPACE(8))",
                "except (BrokenPipeError, ConnectionResetError):",
                "    data, anc = b'', []",
                "print('CLOSED' if not data and not anc else 'REPLY %d bytes, %d ancillary' % (len(data), len(anc)))");
        Process p = new ProcessBuilder("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", PYTHON.toString(), "-c", client,
                socketOf(ref), HexFormat.of().formatHex(attach(ref))).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));

        assertEquals("CLOSED", out);
    }

    /** The system's python, which any user may run (a per-user shim may not be). */
    private static final Path PYTHON = Path.of("/usr/bin/python3");

    private static boolean isRootWith(String program) throws IOException {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        return uid == 0 && Stream.of(System.getenv("PATH").split(":")).anyMatch(d -> Files.isExecutable(Path.of(d, program)));
    }

    @Test
    void descriptorsSentWithARequest_areDroppedByTheKernel_notInstalledInTheOwner() throws IOException {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RemoteBufferRef ref = allocated(owner);
        Handover.ask(socketOf(ref), SELF, attach(ref), TIMEOUT_NANOS).closeFds();    // the owner's record of this holder exists
        long before = descriptorsOfStdio();
        int fd = UnixSockets.connect(socketOf(ref), TIMEOUT_NANOS);
        try {
            UnixSockets.send(fd, attach(ref), 0, 1, 2);        // stdin, stdout, stderr riding along
            UnixSockets.Message reply = UnixSockets.receive(fd, ShmProtocol.MAX_REPLY, 2, false);
            reply.closeFds();
            assertArrayEquals(new byte[] {ShmProtocol.GRANTED}, new byte[] {reply.bytes()[0]});
        } finally {
            Libc.close(fd);
        }

        assertEquals(before, descriptorsOfStdio(), "the owner (this process) kept none of the three");
    }

    /** How many descriptors of this process name the files of its descriptors 0, 1 and 2 (3 unless duplicated). */
    private static long descriptorsOfStdio() throws IOException {
        java.util.Set<String> stdio = new java.util.HashSet<>();
        for (int fd = 0; fd <= 2; fd++) {
            stdio.add(link(fd));
        }
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    return stdio.contains(Files.readSymbolicLink(fd).toString());
                } catch (IOException e) {
                    return false;       // closed since listed
                }
            }).count();
        }
    }
}
