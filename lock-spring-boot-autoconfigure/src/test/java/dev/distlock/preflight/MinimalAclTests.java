package dev.distlock.preflight;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The minimal ACL stays in step with the engine: the commands its scripts call (read from {@code LockScripts}, the
 * engine's own, package-private, scripts) are the ones the ACL grants and the preflight exercises, and the guide's
 * security page ({@code docs/guide/security.md}) documents that ACL and, per script, those commands.
 */
class MinimalAclTests {

	private static final Pattern CALL = Pattern.compile("redis\\.p?call\\('([a-z]+)'");

	private static final Pattern TRY = Pattern.compile("try\\('([a-z]+)'");

	/** Each script of the engine and the commands it calls. */
	private static Map<String, Set<String>> engineScripts() throws ReflectiveOperationException {
		Map<String, Set<String>> commands = new LinkedHashMap<>();
		// the read-write scripts share their names with LockScripts': RW_ in front of theirs
		for (String name : List.of("dev.distlock.redis.internal.script.LockScripts",
				"dev.distlock.redis.internal.script.FairScripts", "dev.distlock.redis.internal.script.ReadWriteScripts",
				"dev.distlock.redis.internal.script.ListingScripts")) {
			Class<?> scripts = Class.forName(name);
			String prefix = name.endsWith("ReadWriteScripts") ? "RW_" : "";
			for (Field field : scripts.getDeclaredFields()) {
				if (Modifier.isStatic(field.getModifiers()) && RedisScript.class.isAssignableFrom(field.getType())) {
					field.setAccessible(true);
					commands.put(prefix + field.getName(),
							matches(CALL, ((RedisScript<?>) field.get(null)).getScriptAsString()));
				}
			}
		}
		assertThat(commands).as("scripts found in LockScripts").isNotEmpty();
		return commands;
	}

	private static Set<String> matches(Pattern pattern, String text) {
		Set<String> found = new TreeSet<>();
		Matcher matcher = pattern.matcher(text);
		while (matcher.find()) {
			found.add(matcher.group(1));
		}
		return found;
	}

	private static String securityGuide() throws IOException {
		// surefire runs in the module's directory
		return Files.readString(Path.of("..", "docs", "guide", "security.md"));
	}

	@Test
	void theAclGrantsExactlyTheCommandsTheEnginesScriptsCall() throws ReflectiveOperationException {
		Set<String> called = new TreeSet<>();
		engineScripts().values().forEach(called::addAll);
		Set<String> granted = new TreeSet<>(LockPreflight.SCRIPT_COMMANDS);
		granted.add("spublish"); // on a cluster only: LockPreflight.CLUSTER_COMMANDS
		assertThat(LockPreflight.CLUSTER_COMMANDS).contains("spublish");
		// the listing's DESCRIBE reads a fair queue's length through pcall; granted as an engine command
		granted.add("zcard");
		assertThat(LockPreflight.ENGINE_COMMANDS).contains("zcard");
		assertThat(granted).isEqualTo(called);
	}

	@Test
	void thePreflightTriesEachOfThem() {
		Set<String> tried = new TreeSet<>(LockPreflight.SCRIPT_COMMANDS);
		tried.add("spublish"); // on a cluster only
		assertThat(matches(TRY, LockPreflight.SCRIPT.getScriptAsString())).isEqualTo(tried);
	}

	@Test
	void theMinimalAclForAPrefix() {
		assertThat(LockPreflight.minimalAcl("orders")).isEqualTo("~orders:* &orders:* -@all +evalsha +eval +subscribe "
				+ "+unsubscribe +ping +zcard +exists +time +hset +hsetnx +hmget +hget +hexists +hincrby +hgetall +hdel "
				+ "+pttl +pexpire +del +set +get +publish +zadd +zscore +zrank +zrange +zrangebyscore +zrem +scan");
	}

	@Test
	void replicaAcknowledgementsAddWait() {
		assertThat(LockPreflight.minimalAcl("orders", 0)).isEqualTo(LockPreflight.minimalAcl("orders"));
		assertThat(LockPreflight.minimalAcl("orders", 2)).isEqualTo(LockPreflight.minimalAcl("orders") + " +wait");
	}

	@Test
	void theMinimalClusterAclAddsShardedPubSub() {
		assertThat(LockPreflight.minimalClusterAcl("orders"))
			.isEqualTo(LockPreflight.minimalAcl("orders") + " +spublish +ssubscribe +sunsubscribe");
	}

	@Test
	void theSecurityGuideDocumentsTheAclAndEachScriptsCommands() throws Exception {
		String guide = securityGuide();
		assertThat(guide).contains(LockPreflight.minimalClusterAcl("lock"));
		assertThat(guide).contains("ACL SETUSER orders-locks reset on >s3cret " + LockPreflight.minimalAcl("lock", 1));
		assertThat(guide).contains("ACL SETUSER orders-locks reset on >s3cret " + LockPreflight.minimalAcl("lock"))
			.contains("The minimal ACL for key prefix 'lock' is: " + LockPreflight.minimalAcl("lock"));
		Map<String, Set<String>> documented = new LinkedHashMap<>();
		for (String line : guide.split("\n")) {
			// | `ACQUIRE` | used for | `exists` `time` ... |
			Matcher row = Pattern.compile("^\\| `([A-Z_]+)` \\| [^|]+ \\| (.+) \\|$").matcher(line);
			if (row.matches()) {
				documented.put(row.group(1), new TreeSet<>(Arrays.asList(row.group(2).replace("`", "").split(" "))));
			}
		}
		assertThat(documented).isEqualTo(engineScripts());
	}

}
