package io.rdma4j.transport.shm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostIdentityTest {

    private static final HostIdentity HERE = new HostIdentity(UUID.fromString("64be5639-1738-42a1-b2c8-14f51a5473ed"),
            4026531836L, 4026531837L, 4026531832L, 1000);

    @Test
    void current_readsBootIdNamespacesAndUidOfThisProcess() throws IOException {
        HostIdentity id = HostIdentity.current();

        assertEquals(UUID.fromString(Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim()), id.bootId());
        assertEquals("pid:[" + id.pidNamespace() + "]", Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString());
        assertEquals("user:[" + id.userNamespace() + "]", Files.readSymbolicLink(Path.of("/proc/self/ns/user")).toString());
        assertEquals("mnt:[" + id.mountNamespace() + "]", Files.readSymbolicLink(Path.of("/proc/self/ns/mnt")).toString());
        assertEquals(Files.getAttribute(Path.of("/proc/self"), "unix:uid"), id.uid());
    }

    @Test
    void current_missingProcFiles_throwsNamingTheDirectory(@TempDir Path dir) {
        var e = assertThrows(java.io.UncheckedIOException.class, () -> HostIdentity.current(dir));

        assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
    }

    @Test
    void toBytesThenRead_roundTrips() {
        ByteBuffer in = ByteBuffer.wrap(HERE.toBytes());

        assertEquals(HERE, HostIdentity.read(in));
        assertEquals(0, in.remaining());
    }

    @Test
    void read_truncated_throwsIllegalArgument() {
        byte[] bytes = HERE.toBytes();

        var e = assertThrows(IllegalArgumentException.class,
                () -> HostIdentity.read(ByteBuffer.wrap(bytes, 0, bytes.length - 1)));

        assertTrue(e.getMessage().contains("truncated"), e.getMessage());
    }

    @Test
    void read_unknownFormat_throwsIllegalArgument() {
        byte[] bytes = HERE.toBytes();
        bytes[0] = 9;

        var e = assertThrows(IllegalArgumentException.class, () -> HostIdentity.read(ByteBuffer.wrap(bytes)));

        assertTrue(e.getMessage().contains("format 9"), e.getMessage());
    }

    @Test
    void whyNotReachable_sameIdentity_isEmpty() {
        assertEquals(Optional.empty(), HERE.whyNotReachable(HERE));
    }

    @Test
    void whyNotReachable_otherMountNamespaceOnly_isEmpty() {
        HostIdentity peer = new HostIdentity(HERE.bootId(), HERE.pidNamespace(), HERE.userNamespace(), 1L, HERE.uid());

        assertEquals(Optional.empty(), HERE.whyNotReachable(peer));
    }

    @Test
    void whyNotReachable_otherBootId_saysDifferentHost() {
        HostIdentity peer = new HostIdentity(UUID.randomUUID(), HERE.pidNamespace(), HERE.userNamespace(),
                HERE.mountNamespace(), HERE.uid());

        assertTrue(HERE.whyNotReachable(peer).orElseThrow().startsWith("different host"));
    }

    @Test
    void whyNotReachable_otherPidNamespace_saysSo() {
        HostIdentity peer = new HostIdentity(HERE.bootId(), 7L, HERE.userNamespace(), HERE.mountNamespace(), HERE.uid());

        assertTrue(HERE.whyNotReachable(peer).orElseThrow().startsWith("different pid namespace"));
    }

    @Test
    void whyNotReachable_otherUserNamespace_saysSo() {
        HostIdentity peer = new HostIdentity(HERE.bootId(), HERE.pidNamespace(), 7L, HERE.mountNamespace(), HERE.uid());

        assertTrue(HERE.whyNotReachable(peer).orElseThrow().startsWith("different user namespace"));
    }

    @Test
    void whyNotReachable_otherUid_saysDifferentUser() {
        HostIdentity peer = new HostIdentity(HERE.bootId(), HERE.pidNamespace(), HERE.userNamespace(),
                HERE.mountNamespace(), 0);

        assertEquals("different user (uid 0, here 1000)", HERE.whyNotReachable(peer).orElseThrow());
    }
}
