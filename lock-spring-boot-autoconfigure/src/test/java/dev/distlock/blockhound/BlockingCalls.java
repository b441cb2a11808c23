package dev.distlock.blockhound;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import org.junit.jupiter.api.Assumptions;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;

/**
 * BlockHound for the {@code *BlockHoundTests} (the {@code blockhound} surefire execution, a JVM of their own), installed
 * once for the JVM with its integrations (Reactor's parallel threads and Netty's event loops, Lettuce's among them,
 * are the non-blocking threads) and a callback that records every blocking call made on such a thread instead of
 * throwing there.
 * <p>
 * Why record rather than throw: an error thrown where a thread would park leaves the lock it waited for unusable (the
 * JDK's queued synchronizers do not expect {@code park} to throw), so a blocking call inside a callback nobody
 * observes, such as a future's completion on Lettuce's event loop, showed up only as a hang later, far from its cause.
 * Recorded, each one fails the test that saw it with the thread and the stack.
 */
public final class BlockingCalls {

	private static final List<String> calls = new ArrayList<>();

	private BlockingCalls() {
	}

	/** Install BlockHound once for this JVM, or skip the calling test where the JVM lacks the flag BlockHound needs. */
	public static synchronized void install() {
		List<String> arguments = ManagementFactory.getRuntimeMXBean().getInputArguments();
		Assumptions.assumeTrue(arguments.contains("-XX:+AllowRedefinitionToAddDeleteMethods"),
				"BlockHound needs -XX:+AllowRedefinitionToAddDeleteMethods: run by the 'blockhound' surefire execution");
		// a second install in the same JVM is ignored by BlockHound
		BlockHound.install((builder) -> builder.blockingMethodCallback((method) -> {
			StringWriter stack = new StringWriter();
			new BlockingOperationError(method).printStackTrace(new PrintWriter(stack));
			synchronized (BlockingCalls.class) {
				calls.add("on " + Thread.currentThread().getName() + ": " + stack);
			}
		}));
	}

	/** {@return the blocking calls recorded since the last {@link #clear()}, each with its thread and stack} */
	public static synchronized List<String> recorded() {
		return List.copyOf(calls);
	}

	/** {@return the recorded blocking calls that {@code expected} does not accept} */
	public static synchronized List<String> recordedExcept(Predicate<String> expected) {
		return calls.stream().filter(expected.negate()).toList();
	}

	/** Forget what was recorded. */
	public static synchronized void clear() {
		calls.clear();
	}

}
