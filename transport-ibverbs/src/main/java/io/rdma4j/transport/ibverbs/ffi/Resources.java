package io.rdma4j.transport.ibverbs.ffi;

import java.util.ArrayList;
import java.util.List;

/**
 * The open children of a native object (the queue pairs and memory regions of a protection
 * domain, ...). A child adds itself when created and removes itself when closed; the parent's
 * {@link #closeAll} closes those still open, newest first, so every native object is freed
 * exactly once whichever side closes first. Thread-safe.
 */
final class Resources {

    private final List<AutoCloseable> open = new ArrayList<>();

    synchronized void add(AutoCloseable child) {
        open.add(child);
    }

    synchronized void remove(AutoCloseable child) {
        for (int i = open.size() - 1; i >= 0; i--) {
            if (open.get(i) == child) {
                open.remove(i);
                return;
            }
        }
    }

    synchronized int size() {
        return open.size();
    }

    synchronized List<AutoCloseable> snapshot() {
        return List.copyOf(open);
    }

    /**
     * Closes every open child, newest first. Every child is tried; the first failure is thrown
     * with the others suppressed.
     */
    void closeAll() {
        List<AutoCloseable> children = snapshot();
        RuntimeException failure = null;
        for (int i = children.size() - 1; i >= 0; i--) {
            try {
                children.get(i).close();
            } catch (Exception e) {
                RuntimeException r = e instanceof RuntimeException re ? re : new IllegalStateException(e);
                if (failure == null) {
                    failure = r;
                } else {
                    failure.addSuppressed(r);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
