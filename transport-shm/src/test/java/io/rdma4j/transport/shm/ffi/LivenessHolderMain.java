package io.rdma4j.transport.shm.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Maps the file named by its argument, holds a {@link LivenessLock} there, says HELD, and waits for "exit" or the end of its input. */
public final class LivenessHolderMain {

    private LivenessHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        Arena arena = Arena.ofShared();
        MemorySegment word;
        try (FileChannel ch = FileChannel.open(Path.of(args[0]), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            word = ch.map(FileChannel.MapMode.READ_WRITE, 0, LivenessLock.SIZE, arena);
        }
        LivenessLock lock = LivenessLock.hold(word, "liveness-peer");
        System.out.println(lock.held() ? "HELD" : "NOT HELD");
        System.out.flush();
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null && !line.equals("exit"); ) {
            // until the test says exit, closes our input or kills us
        }
        lock.close();
    }
}
