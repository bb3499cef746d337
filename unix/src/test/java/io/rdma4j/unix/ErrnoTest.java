package io.rdma4j.unix;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ErrnoTest {

    @Test
    void text_isTheCLibrarysWordsForTheValue() {
        assertEquals("Operation not permitted", Errno.text(Errno.EPERM));
        assertEquals("Cannot allocate memory", Errno.text(Errno.ENOMEM));
    }

    @Test
    void describe_givesTheNumberAndTheText() {
        assertEquals("errno 3 (No such process)", Errno.describe(Errno.ESRCH));
    }

    @Test
    void describe_ofAValueTheCLibraryDoesNotKnow_stillNamesTheNumber() {
        assertEquals("errno 4242 (Unknown error 4242)", Errno.describe(4242));
    }
}
