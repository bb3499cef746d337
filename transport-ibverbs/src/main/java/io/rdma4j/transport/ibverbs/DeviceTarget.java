package io.rdma4j.transport.ibverbs;

import java.util.Objects;
import java.util.Optional;

/**
 * Where a manager wants its RDMA NIC to be: close to a CPU NUMA node, close to a GPU, or one
 * NIC named outright. Immutable; the text form is {@code cpu:<numa>}, {@code gpu:<ordinal>} or
 * {@code nic:<name>} ({@code toString()} writes it, {@link #parse} reads it back).
 *
 * <p>Numbers are unsigned 32-bit values ({@code 0 .. 4294967295}), written in ASCII decimal
 * with an optional leading {@code +}, as the reference's {@code u32} parser accepts.
 */
public sealed interface DeviceTarget permits DeviceTarget.Cpu, DeviceTarget.Gpu, DeviceTarget.Nic {

    /** The largest unsigned 32-bit value, the upper bound of NUMA nodes and GPU ordinals. */
    long U32_MAX = 0xFFFF_FFFFL;

    /** The accepted forms, as quoted in every parse error. */
    String GRAMMAR = "expected cpu:<numa>, gpu:<ordinal> or nic:<name>";

    /**
     * A NIC close to the given CPU NUMA node.
     *
     * @param numaNode the NUMA node
     * @return the target {@code cpu:<numaNode>}
     * @throws IllegalArgumentException if {@code numaNode} is not an unsigned 32-bit value
     */
    static DeviceTarget cpu(long numaNode) {
        return new Cpu(numaNode);
    }

    /**
     * A NIC close to the GPU with the given ordinal.
     *
     * @param ordinal the GPU ordinal
     * @return the target {@code gpu:<ordinal>}
     * @throws IllegalArgumentException if {@code ordinal} is not an unsigned 32-bit value
     */
    static DeviceTarget gpu(long ordinal) {
        return new Gpu(ordinal);
    }

    /**
     * The NIC with the given verbs device name, e.g. {@code mlx5_0}.
     *
     * @param name the device name
     * @return the target {@code nic:<name>}
     * @throws IllegalArgumentException if {@code name} is empty
     * @throws NullPointerException     if {@code name} is null
     */
    static DeviceTarget nic(String name) {
        return new Nic(name);
    }

    /**
     * Parses the text form, exactly as written (no trimming; see {@link #parseConfigured} for
     * configuration values). The text is split at its first {@code :} into a kind and an
     * argument.
     *
     * @param text {@code cpu:<numa>}, {@code gpu:<ordinal>} or {@code nic:<name>}
     * @return the target
     * @throws IllegalArgumentException naming {@code text} when it is empty, has no {@code :},
     *                                  names an unknown kind, carries a number that is not an
     *                                  unsigned 32-bit value, or a {@code nic:} without a name
     * @throws NullPointerException     if {@code text} is null
     */
    static DeviceTarget parse(String text) {
        Objects.requireNonNull(text, "text");
        if (text.isEmpty()) {
            throw new IllegalArgumentException("a device target must not be empty; " + GRAMMAR);
        }
        int colon = text.indexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("device target '" + text + "' has no kind; " + GRAMMAR);
        }
        String kind = text.substring(0, colon);
        String argument = text.substring(colon + 1);
        return switch (kind) {
            case "cpu" -> new Cpu(parseU32(text, argument, "cpu", "a NUMA node"));
            case "gpu" -> new Gpu(parseU32(text, argument, "gpu", "a GPU ordinal"));
            case "nic" -> {
                if (argument.isEmpty()) {
                    throw new IllegalArgumentException(
                            "device target '" + text + "' needs a device name after 'nic:'; " + GRAMMAR);
                }
                yield new Nic(argument);
            }
            default -> throw new IllegalArgumentException(
                    "device target '" + text + "' has unknown kind '" + kind + "'; " + GRAMMAR);
        };
    }

    /**
     * Parses a configured value: trims it, and treats an empty value as "unset" (automatic
     * device selection). This is the parser of {@link VerbsSettings#TARGET}.
     *
     * @param text the configured text
     * @return the target, or empty when {@code text} is blank
     * @throws IllegalArgumentException as {@link #parse} does, for a non-blank malformed value
     * @throws NullPointerException     if {@code text} is null
     */
    static Optional<DeviceTarget> parseConfigured(String text) {
        String trimmed = Objects.requireNonNull(text, "text").trim();
        return trimmed.isEmpty() ? Optional.empty() : Optional.of(parse(trimmed));
    }

    /**
     * A NIC close to a CPU NUMA node.
     *
     * @param numaNode the NUMA node, an unsigned 32-bit value
     */
    record Cpu(long numaNode) implements DeviceTarget {
        /**
         * Validates the range.
         *
         * @throws IllegalArgumentException if {@code numaNode} is outside {@code [0, U32_MAX]}
         */
        public Cpu {
            requireU32(numaNode, "NUMA node");
        }

        /** The text form, {@code cpu:<numa>}. */
        @Override
        public String toString() {
            return "cpu:" + numaNode;
        }
    }

    /**
     * A NIC close to a GPU.
     *
     * @param ordinal the GPU ordinal, an unsigned 32-bit value
     */
    record Gpu(long ordinal) implements DeviceTarget {
        /**
         * Validates the range.
         *
         * @throws IllegalArgumentException if {@code ordinal} is outside {@code [0, U32_MAX]}
         */
        public Gpu {
            requireU32(ordinal, "GPU ordinal");
        }

        /** The text form, {@code gpu:<ordinal>}. */
        @Override
        public String toString() {
            return "gpu:" + ordinal;
        }
    }

    /**
     * One NIC, by its verbs device name.
     *
     * @param name the device name, e.g. {@code mlx5_0}; not empty
     */
    record Nic(String name) implements DeviceTarget {
        /**
         * Validates the name.
         *
         * @throws IllegalArgumentException if {@code name} is empty
         * @throws NullPointerException     if {@code name} is null
         */
        public Nic {
            Objects.requireNonNull(name, "name");
            if (name.isEmpty()) {
                throw new IllegalArgumentException("a NIC target needs a device name");
            }
        }

        /** The text form, {@code nic:<name>}. */
        @Override
        public String toString() {
            return "nic:" + name;
        }
    }

    private static long parseU32(String text, String digits, String kind, String what) {
        String message = "device target '" + text + "' needs " + what
                + " (an unsigned 32-bit number) after '" + kind + ":'; " + GRAMMAR;
        int start = digits.startsWith("+") ? 1 : 0;
        // At most 10 digits: 4294967295 has ten, so the long below cannot overflow.
        if (digits.length() == start || digits.length() - start > 10) {
            throw new IllegalArgumentException(message);
        }
        long value = 0;
        for (int i = start; i < digits.length(); i++) {
            char c = digits.charAt(i);
            if (c < '0' || c > '9') {   // ASCII only: Character.digit would accept other scripts
                throw new IllegalArgumentException(message);
            }
            value = value * 10 + (c - '0');
        }
        if (value > U32_MAX) {
            throw new IllegalArgumentException(message);
        }
        return value;
    }

    private static void requireU32(long value, String what) {
        if (value < 0 || value > U32_MAX) {
            throw new IllegalArgumentException(
                    what + " must be an unsigned 32-bit value in [0, " + U32_MAX + "]: " + value);
        }
    }
}
