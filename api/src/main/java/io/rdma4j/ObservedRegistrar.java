package io.rdma4j;

import io.rdma4j.internal.Errors;
import io.rdma4j.internal.registration.RegistrationRing;
import io.rdma4j.internal.registration.RegistrationTable;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;

/**
 * The registration thread's work, counted ({@link ManagerStats}) and recorded as JFR events
 * ({@link RdmaEvents.Registration}). The {@link Registrar} completes each request's future before
 * returning, so the outcome is known here, and the caller's future completes after it is counted.
 */
final class ObservedRegistrar implements RegistrationRing.Worker {

    private final RegistrationRing.Worker registrar;
    private final RegistrationTable table;
    private final ManagerStats stats;

    ObservedRegistrar(RegistrationRing.Worker registrar, RegistrationTable table, ManagerStats stats) {
        this.registrar = registrar;
        this.table = table;
        this.stats = stats;
    }

    @Override
    public void register(MemorySegment segment, Arena ownedArena, CompletableFuture<Object> result) {
        RdmaEvents.Registration event = new RdmaEvents.Registration();
        event.begin();
        CompletableFuture<Object> done = new CompletableFuture<>();
        registrar.register(segment, ownedArena, done);
        Throwable failure = done.isCompletedExceptionally() ? Errors.unwrap(done.exceptionNow()) : null;
        if (failure == null && done.isDone()) {
            stats.registrations.increment();
        } else {
            stats.registrationFailures.increment();
        }
        if (event.shouldCommit()) {
            event.kind = "register";
            event.bufferId = failure == null && done.isDone() ? ((RdmaRemoteBuffer) done.resultNow()).id() : -1;
            event.size = segment.byteSize();
            event.outcome = RdmaEvents.outcome(failure);
            event.commit();
        }
        forward(done, result);
    }

    /** Completes {@code result} as {@code done} completed: only after counting, so a caller sees the counts. */
    private static void forward(CompletableFuture<Object> done, CompletableFuture<Object> result) {
        done.whenComplete((value, failure) -> {
            if (failure == null) {
                result.complete(value);
            } else {
                result.completeExceptionally(failure);
            }
        });
    }

    @Override
    public void release(long id, CompletableFuture<Object> result) {
        RdmaEvents.Registration event = new RdmaEvents.Registration();
        event.begin();
        var registration = table.get(id);
        CompletableFuture<Object> done = new CompletableFuture<>();
        registrar.release(id, done);
        if (registration != null) {
            stats.releases.increment();
        }
        if (event.shouldCommit()) {
            event.kind = "release";
            event.bufferId = id;
            event.size = registration == null ? 0 : registration.byteSize();
            event.outcome = RdmaEvents.outcome(done.isCompletedExceptionally() ? Errors.unwrap(done.exceptionNow()) : null);
            event.commit();
        }
        forward(done, result);
    }

    @Override
    public void close(CompletableFuture<Object> result) {
        registrar.close(result);
    }
}
