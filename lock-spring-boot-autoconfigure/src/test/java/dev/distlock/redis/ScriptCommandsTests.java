package dev.distlock.redis;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import dev.distlock.core.LockAccessDeniedException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.preflight.LockPreflight;
import dev.distlock.redis.internal.script.FairScripts;
import dev.distlock.redis.internal.script.ListingScripts;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.PermitScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.redis.internal.script.ScriptCommands;
import dev.distlock.redis.internal.store.RedisFailures;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The command refused inside a script, told from the script and line that Redis 6.2 and 7.0 name instead of the
 * command: the engine's scripts are all known, and each of their lines calls at most one command.
 */
class ScriptCommandsTests {

	@Test
	void everyScriptOfTheEngineIsKnown() throws ReflectiveOperationException {
		Set<RedisScript<?>> declared = new HashSet<>();
		for (Class<?> scripts : List.of(LockScripts.class, FairScripts.class, ReadWriteScripts.class,
				PermitScripts.class, ListingScripts.class)) {
			for (Field field : scripts.getDeclaredFields()) {
				if (Modifier.isStatic(field.getModifiers()) && RedisScript.class.isAssignableFrom(field.getType())) {
					field.setAccessible(true);
					declared.add((RedisScript<?>) field.get(null));
				}
			}
		}
		assertThat(ScriptCommands.SCRIPTS).containsExactlyInAnyOrderElementsOf(declared);
	}

	@Test
	void everyLineOfTheScriptsCallsAtMostOneCommand() {
		for (RedisScript<?> script : ScriptCommands.SCRIPTS) {
			for (String line : script.getScriptAsString().split("\n")) {
				assertThat(ScriptCommands.calls(line).stream().distinct()).as(line).hasSizeLessThanOrEqualTo(1);
			}
		}
	}

	@Test
	void theLineRedis70NamesTellsTheCommand() {
		int line = lineOf(LockScripts.ACQUIRE, "redis.call('time')");
		String message = "ERR The user executing the script can't run this command or subcommand script: "
				+ LockScripts.ACQUIRE.getSha1() + ", on @user_script:" + line + ".";
		assertThat(ScriptCommands.refusedCommand(message)).isEqualTo("time");
		LockUnavailableException denied = RedisFailures.of("sku-1", "orders:{sku-1}", "acquire",
				new IllegalStateException(message), "");
		assertThat(denied).isInstanceOf(LockAccessDeniedException.class)
			.hasMessageStartingWith("Could not acquire lock 'sku-1': Redis's ACL refused the 'time' command inside the "
					+ "lock scripts; grant the application's Redis user +time (ACL SETUSER <user> +time)");
		assertThat(((LockAccessDeniedException) denied).getGrant()).isEqualTo("+time");
	}

	@Test
	void theLineRedis62NamesTellsTheCommand() {
		int line = lineOf(FairScripts.FAIR_ACQUIRE, "redis.call('zadd', KEYS[2]");
		String message = "ERR Error running script (call to f_" + FairScripts.FAIR_ACQUIRE.getSha1()
				+ "): @user_script:" + line + ": @user_script: " + line + ": The user executing the script can't run "
				+ "this command or subcommand";
		assertThat(ScriptCommands.refusedCommand(message)).isEqualTo("zadd");
		LockUnavailableException denied = RedisFailures.of("sku-1", "orders:{sku-1}", "acquire",
				new IllegalStateException(message), "");
		assertThat(((LockAccessDeniedException) denied).getGrant()).isEqualTo("+zadd");
	}

	@Test
	void withoutAScriptLineOfTheEngineTheGrantIsTheMinimalAcl() {
		String unnamed = "ERR The user executing the script can't run this command or subcommand";
		assertThat(ScriptCommands.refusedCommand(unnamed)).isNull();
		String otherScript = unnamed + " script: " + "0".repeat(40) + ", on @user_script:3.";
		assertThat(ScriptCommands.refusedCommand(otherScript)).isNull();
		String noCall = unnamed + " script: " + LockScripts.ACQUIRE.getSha1() + ", on @user_script:1.";
		assertThat(ScriptCommands.refusedCommand(noCall)).as("a line that calls no command").isNull();
		LockUnavailableException denied = RedisFailures.of("sku-1", "orders:{sku-1}", "acquire",
				new IllegalStateException(unnamed), "");
		assertThat(((LockAccessDeniedException) denied).getGrant()).isEqualTo(LockPreflight.minimalAcl("orders"));
	}

	/** The 1-based line of {@code script} that contains {@code text}. */
	private static int lineOf(RedisScript<?> script, String text) {
		List<String> lines = List.of(script.getScriptAsString().split("\n"));
		for (int i = 0; i < lines.size(); i++) {
			if (lines.get(i).contains(text)) {
				return i + 1;
			}
		}
		throw new AssertionError("No line with " + text);
	}

}
