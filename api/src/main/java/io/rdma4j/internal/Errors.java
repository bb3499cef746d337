package io.rdma4j.internal;

import io.rdma4j.PeerUnreachableException;
import io.rdma4j.RdmaException;
import io.rdma4j.RdmaTimeoutException;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.StaleTokenException;
import io.rdma4j.RdmaReleaseException;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.TransportException;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/** Maps what transports throw onto the public exception types, keeping the cause. */
public final class Errors {

    private Errors() {
    }

    /** Strips {@link CompletionException} / {@link ExecutionException} wrappers. */
    public static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** The public exception for a transport failure; {@code transport} may be null. */
    public static RuntimeException toPublic(String transport, Throwable failure) {
        Throwable t = unwrap(failure);
        if (t instanceof RdmaException || t instanceof IllegalArgumentException || t instanceof IllegalStateException
                && !(t instanceof CancellationException)) {
            return (RuntimeException) t;
        }
        String message = t.getMessage() == null ? t.getClass().getName() : t.getMessage();
        if (t instanceof TransportException te) {
            return switch (te.kind()) {
                case TIMEOUT -> new RdmaTimeoutException(transport, message, te);
                case REMOTE_ACCESS -> new RemoteAccessException(transport, message, te);
                case STALE_TOKEN -> new StaleTokenException(transport, message, te);
                case RELEASE_FAILED -> new RdmaReleaseException(java.util.Map.of(transport == null ? "owner" : transport, te));
                case PEER_UNREACHABLE -> new PeerUnreachableException(transport, message, te);
                default -> new RdmaException(transport, message, te);
            };
        }
        if (t instanceof BufferAccessException bae) {
            return bae.reason() == BufferAccessException.Reason.STALE ? new StaleTokenException(transport, message, t)
                    : new RemoteAccessException(transport, message, t);
        }
        if (t instanceof TimeoutException) {
            return new RdmaTimeoutException(transport, message, t);
        }
        return new RdmaException(transport, message, t);
    }
}
