package io.rdma4j.unix;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * Binding C functions and reading the {@code errno} they leave, the way every FFM binding of
 * rdma4j does it.
 *
 * <p>A function that reports failure as {@code -1} (or {@code NULL}) plus {@code errno} is bound
 * with {@link #CAPTURE_ERRNO}: its handle then takes, before the C arguments, a segment of
 * {@link #CAPTURE_STATE} layout into which the JVM copies {@code errno} right after the call
 * (nothing the JVM does afterwards can overwrite it), read with {@link #errno(MemorySegment)}.
 *
 * <p>Binding happens in this module, so the JVM must allow it native access (see the module's
 * description). Thread-safe: everything here is immutable.
 */
@SuppressWarnings("restricted")     // binding is what this class is for
public final class Downcalls {

    /** The layout of the segment a {@link #CAPTURE_ERRNO} handle writes {@code errno} into. */
    public static final StructLayout CAPTURE_STATE = Linker.Option.captureStateLayout();

    /** The linker option that makes a handle capture {@code errno} (see the class description). */
    public static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final VarHandle ERRNO = CAPTURE_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker LINKER = Linker.nativeLinker();

    private Downcalls() {
    }

    /**
     * The {@code errno} a {@link #CAPTURE_ERRNO} call left in {@code state}.
     *
     * @param state a segment of {@link #CAPTURE_STATE} layout, passed to the call
     * @return the value; meaningful only when the call reported a failure
     */
    public static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    /**
     * Binds {@code symbol} of the C library (the linker's default lookup).
     *
     * @param symbol     the function's name, e.g. {@code "close"}
     * @param descriptor its C signature
     * @param options    linker options, e.g. {@link #CAPTURE_ERRNO}, {@code firstVariadicArg}
     * @return the downcall handle
     * @throws UnsatisfiedLinkError naming the symbol if the C library lacks it
     */
    public static MethodHandle libc(String symbol, FunctionDescriptor descriptor, Linker.Option... options) {
        return bind(LINKER.defaultLookup(), "the C library", symbol, descriptor, options);
    }

    /**
     * Binds {@code symbol} found by {@code lookup}, e.g. a {@link SymbolLookup#libraryLookup}.
     *
     * @param library    how to name the library in the error, e.g. {@code "libibverbs.so.1"}
     * @param symbol     the function's name
     * @param descriptor its C signature
     * @param options    linker options
     * @return the downcall handle
     * @throws UnsatisfiedLinkError naming the library and the symbol if the lookup lacks it
     */
    public static MethodHandle bind(SymbolLookup lookup, String library, String symbol, FunctionDescriptor descriptor,
                                    Linker.Option... options) {
        MemorySegment address = lookup.find(Objects.requireNonNull(symbol, "symbol"))
                .orElseThrow(() -> new UnsatisfiedLinkError(library + " has no symbol " + symbol));
        return LINKER.downcallHandle(address, descriptor, options);
    }

    /**
     * What to throw for what {@code invokeExact} threw: downcall handles declare
     * {@link Throwable} but throw only unchecked exceptions and errors.
     *
     * @return {@code t} itself if it is a {@link RuntimeException}, otherwise an
     *         {@link IllegalStateException} wrapping it
     * @throws Error {@code t} itself if it is an {@link Error}
     */
    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
