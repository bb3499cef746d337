package io.rdma4j.testing;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.HexFormat;
import java.util.Random;
import java.util.function.Function;

/**
 * Seeded, reproducible fuzzing of a decoder. Input {@code i} is made from its own
 * {@link Random}, seeded from the run's seed and {@code i}, so a failure names the one input to
 * replay. The seed is the test's default unless the system property {@value #SEED_PROPERTY} sets
 * one ({@code mvn ... -Drdma4j.fuzz.seed=1234}); {@value #INPUTS_PROPERTY} sets how many inputs.
 *
 * <p>Each decode is also metered: the bytes the decoding thread allocates must stay within a
 * bound the test gives as a function of the input, so a decoder that allocates what a length
 * field announces, before checking it, fails the run. (An input over the bound is decoded once
 * more and metered again: the first decode down a path also loads classes and links call sites.)
 */
public final class Fuzz {

    /** System property overriding the seed. */
    public static final String SEED_PROPERTY = "rdma4j.fuzz.seed";
    /** System property overriding the number of inputs. */
    public static final String INPUTS_PROPERTY = "rdma4j.fuzz.inputs";

    /**
     * {@code com.sun.management.ThreadMXBean.getCurrentThreadAllocatedBytes()}, looked up by name:
     * the module these tests are compiled into does not read {@code jdk.management}, and at run
     * time (class path) every module is there.
     */
    private static final MethodHandle ALLOCATED_BYTES = allocatedBytes();

    private static MethodHandle allocatedBytes() {
        try {
            Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
            Class<?> sunBean = Class.forName("com.sun.management.ThreadMXBean");
            return MethodHandles.publicLookup().findVirtual(sunBean, "getCurrentThreadAllocatedBytes",
                    MethodType.methodType(long.class)).bindTo(bean);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static long allocatedBytesOfThisThread() {
        try {
            return (long) ALLOCATED_BYTES.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("cannot meter allocations", t);
        }
    }

    private Fuzz() {
    }

    /** What a fuzz run saw. */
    public record Outcome(long seed, int inputs, int decoded, int refused, long maxAllocatedBytes) {

        /**
         * Asserts that the run exercised both sides of a decoder: over a tenth of the inputs
         * decoded and over a quarter were refused (a generator that makes only garbage, or only
         * valid input, tests one side).
         */
        public void assertBothHappened() {
            org.junit.jupiter.api.Assertions.assertTrue(decoded > inputs / 10, "valid inputs decode: " + this);
            org.junit.jupiter.api.Assertions.assertTrue(refused > inputs / 4, "garbled inputs are refused: " + this);
        }

        @Override
        public String toString() {
            return inputs + " inputs with seed " + seed + ": " + decoded + " decoded, " + refused
                    + " refused, at most " + maxAllocatedBytes + " bytes allocated by one decode";
        }
    }

    /**
     * The allocation bound of a decoder that copies fields: a small multiple of its input, never a
     * length the input announces: the {@code allocationBound} of {@link #run} for such decoders.
     */
    public static long copiesOfFields(byte[] input) {
        return 16_384L + 32L * input.length;
    }

    /** Checks one input: returns {@code true} if it decoded, {@code false} if it was refused as documented, throws otherwise. */
    @FunctionalInterface
    public interface Check {
        boolean decode(byte[] input) throws Exception;
    }

    /**
     * Runs {@code check} on {@code defaultInputs} inputs made by {@code generator}.
     *
     * @param what             the decoder's name, for messages
     * @param defaultSeed      the seed unless {@value #SEED_PROPERTY} is set
     * @param defaultInputs    the count unless {@value #INPUTS_PROPERTY} is set
     * @param generator        makes an input from its random source
     * @param allocationBound  the most bytes one decode of an input may allocate
     * @param check            decodes and checks the result
     * @return counts, printed by the caller
     * @throws AssertionError naming the seed, the input's index and its bytes, on the first failure
     */
    public static Outcome run(String what, long defaultSeed, int defaultInputs, Function<Random, byte[]> generator,
                              Function<byte[], Long> allocationBound, Check check) {
        long seed = Long.getLong(SEED_PROPERTY, defaultSeed);
        int inputs = Integer.getInteger(INPUTS_PROPERTY, defaultInputs);
        int decoded = 0;
        long maxAllocated = 0;
        for (int i = 0; i < inputs; i++) {
            byte[] input;
            try {
                input = generator.apply(new Random(seed * 0x9E3779B97F4A7C15L + i));
            } catch (RuntimeException e) {
                throw failure(what, seed, i, new byte[0], "could not be made: the generator threw " + e, e);
            }
            long before = allocatedBytesOfThisThread();
            boolean ok;
            try {
                ok = check.decode(input);
            } catch (Throwable t) {
                throw failure(what, seed, i, input, "threw " + t, t);
            }
            long allocated = allocatedBytesOfThisThread() - before;
            long bound = allocationBound.apply(input);
            if (allocated > bound) {
                // The first decode down a path also links call sites and loads classes: meter a replay.
                before = allocatedBytesOfThisThread();
                try {
                    check.decode(input);
                } catch (Throwable t) {
                    throw failure(what, seed, i, input, "threw " + t + " when replayed", t);
                }
                allocated = allocatedBytesOfThisThread() - before;
            }
            if (allocated > bound) {
                throw failure(what, seed, i, input, "allocated " + allocated + " bytes, more than the " + bound
                        + " allowed for a " + input.length + "-byte input", null);
            }
            maxAllocated = Math.max(maxAllocated, allocated);
            decoded += ok ? 1 : 0;
        }
        Outcome outcome = new Outcome(seed, inputs, decoded, inputs - decoded, maxAllocated);
        System.out.println("fuzz " + what + ": " + outcome);
        return outcome;
    }

    private static AssertionError failure(String what, long seed, int index, byte[] input, String why, Throwable cause) {
        String hex = HexFormat.of().formatHex(input, 0, Math.min(input.length, 512)) + (input.length > 512 ? "..." : "");
        return new AssertionError("fuzz " + what + ": input " + index + " (seed " + seed + "; rerun with -D" + SEED_PROPERTY
                + "=" + seed + ") " + why + "; input (" + input.length + " bytes): " + hex, cause);
    }

    /** Mutates a copy of {@code valid}: byte changes, bit flips, insertions, deletions, truncation, extension. */
    public static byte[] mutate(Random random, byte[] valid) {
        byte[] b = valid.clone();
        int edits = 1 + random.nextInt(4);
        for (int e = 0; e < edits; e++) {
            switch (random.nextInt(6)) {
                case 0 -> {
                    if (b.length > 0) {
                        b[random.nextInt(b.length)] = (byte) random.nextInt(256);
                    }
                }
                case 1 -> {
                    if (b.length > 0) {
                        b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
                    }
                }
                case 2 -> { // insert a byte
                    int at = random.nextInt(b.length + 1);
                    byte[] n = new byte[b.length + 1];
                    System.arraycopy(b, 0, n, 0, at);
                    n[at] = (byte) random.nextInt(256);
                    System.arraycopy(b, at, n, at + 1, b.length - at);
                    b = n;
                }
                case 3 -> { // delete a byte
                    if (b.length > 0) {
                        int at = random.nextInt(b.length);
                        byte[] n = new byte[b.length - 1];
                        System.arraycopy(b, 0, n, 0, at);
                        System.arraycopy(b, at + 1, n, at, b.length - at - 1);
                        b = n;
                    }
                }
                case 4 -> b = java.util.Arrays.copyOf(b, random.nextInt(b.length + 1)); // truncate
                default -> { // extend with random bytes
                    int extra = 1 + random.nextInt(16);
                    int old = b.length;
                    b = java.util.Arrays.copyOf(b, old + extra);
                    for (int k = old; k < b.length; k++) {
                        b[k] = (byte) random.nextInt(256);
                    }
                }
            }
        }
        return b;
    }

    /** {@code n} random bytes. */
    public static byte[] randomBytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }
}
