package io.rdma4j.internal;

import io.rdma4j.PeerUnreachableException;
import io.rdma4j.RdmaException;
import io.rdma4j.RdmaTimeoutException;
import io.rdma4j.RemoteAccessException;
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

    /** The public exception for a transport failure; {@code backend} may be null. */
    public static RuntimeException toPublic(String backend, Throwable failure) {
        Throwable t = unwrap(failure);
        if (t instanceof RdmaException || t instanceof IllegalArgumentException || t instanceof IllegalStateException
                && !(t instanceof CancellationException)) {
            return (RuntimeException) t;
        }
        String message = t.getMessage() == null ? t.getClass().getName() : t.getMessage();
        if (t instanceof TransportException te) {
            return switch (te.kind()) {
                case TIMEOUT -> new RdmaTimeoutException(backend, message, te);
                case REMOTE_ACCESS -> new RemoteAccessException(backend, message, te);
                case PEER_UNREACHABLE -> new PeerUnreachableException(backend, message, te);
                default -> new RdmaException(backend, message, te);
            };
        }
        if (t instanceof BufferAccessException) {
            return new RemoteAccessException(backend, message, t);
        }
        if (t instanceof TimeoutException) {
            return new RdmaTimeoutException(backend, message, t);
        }
        return new RdmaException(backend, message, t);
    }
}
