package io.rdma4j.unix;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

class DowncallsTest {

    @Test
    void aFailedCallBoundWithCaptureErrno_leavesItsErrnoInTheStateSegment() throws Throwable {
        MethodHandle close = Downcalls.libc("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);

            int rc = (int) close.invokeExact(state, -1);

            assertEquals(-1, rc);
            assertEquals(Errno.EBADF, Downcalls.errno(state));
        }
    }

    @Test
    void bindingASymbolTheCLibraryLacks_throwsUnsatisfiedLinkErrorNamingIt() {
        UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class,
                () -> Downcalls.libc("rdma4j_no_such_function", FunctionDescriptor.ofVoid()));
        assertEquals("the C library has no symbol rdma4j_no_such_function", e.getMessage());
    }

    @Test
    void bindingASymbolALibraryLacks_namesTheLibraryAndTheSymbol() {
        SymbolLookup empty = name -> java.util.Optional.empty();
        UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class,
                () -> Downcalls.bind(empty, "libexample.so.1", "example_open", FunctionDescriptor.ofVoid()));
        assertEquals("libexample.so.1 has no symbol example_open", e.getMessage());
    }

    @Test
    void rethrow_returnsRuntimeExceptionsAsThey_wrapsCheckedOnes_andThrowsErrors() {
        IllegalArgumentException unchecked = new IllegalArgumentException("x");
        assertSame(unchecked, Downcalls.rethrow(unchecked));

        Exception checked = new Exception("y");
        assertSame(checked, assertInstanceOf(IllegalStateException.class, Downcalls.rethrow(checked)).getCause());

        OutOfMemoryError error = new OutOfMemoryError("z");
        assertSame(error, assertThrows(OutOfMemoryError.class, () -> Downcalls.rethrow(error)));
    }
}
