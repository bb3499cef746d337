package io.rdma4j.internal;

import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.LocalBuffer;
import io.rdma4j.spi.RegistrationLookup;

import java.security.MessageDigest;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The registrations of one manager. Single writer: only the registration thread calls
 * {@link #nextId()}, {@link #put} and {@link #remove}; any thread may {@link #lookup}.
 * The map and the volatile id watermark publish each change to readers.
 */
public final class RegistrationTable implements RegistrationLookup {

    private final ConcurrentHashMap<Long, Registration> byId = new ConcurrentHashMap<>();
    private long nextId;               // written by the registration thread only
    private volatile long idsIssued;   // published copy of nextId

    /** Takes the next id; ids are never reused, even when registration then fails. */
    public long nextId() {
        long id = nextId++;
        idsIssued = nextId;
        return id;
    }

    public void put(Registration r) {
        byId.put(r.id(), r);
    }

    /** Removes and returns the registration, or {@code null} when unknown or already released. */
    public Registration remove(long id) {
        return byId.remove(id);
    }

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

    @Override
    public LocalBuffer lookup(long bufferId, byte[] accessKey) {
        Registration r = byId.get(bufferId);
        if (r == null) {
            if (bufferId >= 0 && bufferId < idsIssued) {
                throw new BufferAccessException(BufferAccessException.Reason.RELEASED, bufferId,
                        "buffer " + bufferId + " was released (or its registration failed)");
            }
            throw new BufferAccessException(BufferAccessException.Reason.UNKNOWN, bufferId,
                    "buffer " + bufferId + " not found");
        }
        if (accessKey == null || !MessageDigest.isEqual(r.accessKey(), accessKey)) {
            throw new BufferAccessException(BufferAccessException.Reason.WRONG_KEY, bufferId,
                    "wrong access key for buffer " + bufferId);
        }
        return r;
    }
}
