package io.rdma4j.internal.registration;

import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.LocalBuffer;
import io.rdma4j.spi.RegistrationLookup;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.security.MessageDigest;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The registrations of one manager. Single writer: only the registration thread calls
 * {@link #nextId()}, {@link #put} and {@link #remove}; any thread may {@link #lookup}.
 * The maps and the volatile id watermark publish each change to readers.
 *
 * <p>No oracle: a request naming an unknown id, a released id, or a live id with the wrong key
 * gets the same {@link BufferAccessException.Reason#DENIED} refusal with the same message, after
 * the same constant-time key comparison (an unknown id is compared against a dummy key). Only the
 * owner's DEBUG log says which case it was.
 */
public final class RegistrationTable implements RegistrationLookup {

    private static final System.Logger LOG = System.getLogger(RegistrationTable.class.getName());
    private static final byte[] DUMMY_KEY = new byte[16];

    private final byte[] incarnation;
    private final ConcurrentHashMap<Long, Registration> byId = new ConcurrentHashMap<>();
    /** Live registrations by start address, for finding the one that contains a local segment. */
    private final ConcurrentSkipListMap<Long, Registration> byAddress = new ConcurrentSkipListMap<>();
    private long nextId;               // written by the registration thread only
    private volatile long idsIssued;   // published copy of nextId

    /**
     * An empty table for the manager of this incarnation.
     *
     * @param incarnation the manager's {@value RegistrationLookup#INCARNATION_BYTES}-byte incarnation; copied
     */
    public RegistrationTable(byte[] incarnation) {
        if (incarnation.length != INCARNATION_BYTES) {
            throw new IllegalArgumentException("an incarnation is " + INCARNATION_BYTES + " bytes");
        }
        this.incarnation = incarnation.clone();
    }

    /** Takes the next id; ids are never reused, even when registration then fails. */
    public long nextId() {
        long id = nextId++;
        idsIssued = nextId;
        return id;
    }

    public void put(Registration r) {
        byId.put(r.id(), r);
        byAddress.put(r.segment().address(), r);
    }

    /** Removes and returns the registration, or {@code null} when unknown or already released. */
    public Registration remove(long id) {
        Registration r = byId.remove(id);
        if (r != null) {
            byAddress.remove(r.segment().address(), r);
            releases++;
        }
        return r;
    }

    /**
     * How many registrations were removed so far: whoever kept something of a registration (its
     * prepared local memory, say) may keep using it while this count has not changed.
     */
    public long releases() {
        return releases;
    }

    private volatile long releases;     // written by the registration thread only

    public Registration get(long id) {
        return byId.get(id);
    }

    public int size() {
        return byId.size();
    }

    /** A snapshot of the live registrations. */
    public Collection<Registration> snapshot() {
        return List.copyOf(byId.values());
    }

    /**
     * The live registration whose memory contains all of {@code local}, if any (two registrations
     * of the same start address: the one registered last).
     *
     * @param local a caller's segment
     * @return the registration, or {@code null}
     */
    public Registration containing(MemorySegment local) {
        Map.Entry<Long, Registration> e = byAddress.floorEntry(local.address());
        if (e == null) {
            return null;
        }
        Registration r = e.getValue();
        long end = r.segment().address() + r.segment().byteSize();
        return local.address() + local.byteSize() <= end ? r : null;
    }

    @Override
    public byte[] incarnation() {
        return incarnation.clone();
    }

    /** Whether {@code incarnation} is this manager's, compared in constant time. */
    public boolean isMine(byte[] incarnation) {
        return incarnation != null && MessageDigest.isEqual(this.incarnation, incarnation);
    }

    @Override
    public LocalBuffer lookup(byte[] incarnation, long bufferId, byte[] accessKey, long offset, long length) {
        if (!isMine(incarnation)) {
            throw new BufferAccessException(BufferAccessException.Reason.STALE, bufferId, "stale token: buffer "
                    + bufferId + " was issued by manager incarnation " + hex(incarnation)
                    + ", but the manager at this endpoint is incarnation " + hex(this.incarnation)
                    + " (the owner restarted; get a new token)");
        }
        Registration r = byId.get(bufferId);
        boolean keyMatches = MessageDigest.isEqual(r == null ? DUMMY_KEY : r.accessKey(),
                accessKey == null ? new byte[0] : accessKey);
        if (r == null || !keyMatches) {
            LOG.log(Level.DEBUG, () -> "refused access to buffer " + bufferId + ": " + (r != null ? "wrong access key"
                    : bufferId >= 0 && bufferId < idsIssued ? "released" : "never registered"));
            throw denied(bufferId);
        }
        if (offset < 0 || length < 1 || offset > r.byteSize() || length > r.byteSize() - offset) {
            throw new BufferAccessException(BufferAccessException.Reason.OUT_OF_RANGE, bufferId, "range of " + length
                    + " bytes at offset " + offset + " lies outside buffer " + bufferId + " (" + r.byteSize() + " bytes)");
        }
        return r;
    }

    /** The one refusal for unknown, released and wrong-key requests. */
    public static BufferAccessException denied(long bufferId) {
        return new BufferAccessException(BufferAccessException.Reason.DENIED, bufferId,
                "access to buffer " + bufferId + " denied: no such buffer, released, or wrong access key");
    }

    private static String hex(byte[] b) {
        return b == null ? "(none)" : HexFormat.of().formatHex(b);
    }
}
