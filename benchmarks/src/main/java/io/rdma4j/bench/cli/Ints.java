package io.rdma4j.bench.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Whole-number options with their ranges; a value out of range is a usage error naming it. */
final class Ints {

    private Ints() {
    }

    static int parse(String text, int min, int max) {
        int v;
        try {
            v = Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new TypeConversionException("not a whole number: '" + text + "'");
        }
        if (v < min || v > max) {
            throw new TypeConversionException(v + " is out of range [" + min + ", " + max + "]");
        }
        return v;
    }

    /** 1..64. */
    static final class Parallelism implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return parse(value, 1, 64);
        }
    }

    /** 1..1024. */
    static final class ChunkMiB implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return parse(value, 1, 1024);
        }
    }

    /** 1..10,000,000. */
    static final class Iterations implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return parse(value, 1, 10_000_000);
        }
    }

    /** 1..1024: ops in flight, ops per action. */
    static final class Window implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return parse(value, 1, 1024);
        }
    }

    /** 1..86,400 seconds. */
    static final class TimeoutSeconds implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return parse(value, 1, 86_400);
        }
    }

    /** 0..65535. */
    static final class Port implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return parse(value, 0, 65_535);
        }
    }
}
