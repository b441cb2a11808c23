package dev.distlock.redis.internal.script;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.distlock.preflight.LockPreflight;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The command that Redis refused inside one of the engine's scripts, told from the script and the line that Redis's
 * error names. Redis 7.0 does not name a command its ACL refuses inside a script ("The user executing the script can't
 * run this command or subcommand script: &lt;sha1&gt;, on @user_script:&lt;line&gt;."), nor does 6.2 ("Error running
 * script (call to f_&lt;sha1&gt;): @user_script:&lt;line&gt;: ..."); both name the script's SHA1 and the line of the
 * refused call, and each line of the engine's scripts calls at most one command. A command found that way counts only
 * if the minimal ACL grants it to the scripts ({@link LockPreflight#SCRIPT_COMMANDS},
 * {@link LockPreflight#CLUSTER_COMMANDS}): anything else is left unnamed.
 * <p>
 * SHA1s and lines are taken from the text each script was built with (read from its {@code .lua} files, see
 * {@link LuaSource}), never written down, so that an edit of a script moves them along.
 */
public final class ScriptCommands {

	/** Every script of the engine: the scripts Redis may name in an error. */
	public static final List<RedisScript<?>> SCRIPTS = List.of(LockScripts.ACQUIRE, LockScripts.RELEASE,
			LockScripts.HAND_OVER, LockScripts.EXTEND, LockScripts.RENEW_ALL, LockScripts.FORCE_RELEASE,
			LockScripts.HOLDER, LockScripts.OWNED, FairScripts.FAIR_ACQUIRE, FairScripts.FAIR_RELEASE,
			FairScripts.FAIR_LEAVE, ReadWriteScripts.ACQUIRE, ReadWriteScripts.RELEASE, ReadWriteScripts.RENEW_ALL,
			ReadWriteScripts.EXTEND, ReadWriteScripts.OWNED, ReadWriteScripts.DISCARD, PermitScripts.ACQUIRE,
			ListingScripts.SCAN, ListingScripts.DESCRIBE);

	/** A command a script calls: {@code redis.call('hset', ...)} or {@code redis.pcall('publish', ...)}. */
	public static final Pattern CALL = Pattern.compile("redis\\.p?call\\('([a-z]+)'");

	/** The script and line of an error raised inside a script: Redis 7.0 and later, then 6.2. */
	private static final Pattern SCRIPT_LINE = Pattern
		.compile("(?:script: |call to f_)([0-9a-f]{40})(?:, on |\\): )@user_script:(\\d+)");

	/** Per script's SHA1, the command each line calls (index 0 is line 1), or null for a line that calls none. */
	private static final Map<String, @Nullable String[]> COMMANDS_BY_LINE = commandsByLine();

	private ScriptCommands() {
	}

	/**
	 * The command that the line of an engine script named in {@code errorReply} calls, if it is one the minimal ACL
	 * grants to the scripts; null when the error names no line of the engine's scripts.
	 * @param errorReply the error Redis replied with
	 * @return the refused command, or null
	 */
	public static @Nullable String refusedCommand(String errorReply) {
		Matcher matcher = SCRIPT_LINE.matcher(errorReply);
		if (!matcher.find()) {
			return null;
		}
		@Nullable String[] lines = COMMANDS_BY_LINE.get(matcher.group(1));
		int line = Integer.parseInt(matcher.group(2));
		if (lines == null || line < 1 || line > lines.length) {
			return null;
		}
		String command = lines[line - 1];
		return (command != null && (LockPreflight.SCRIPT_COMMANDS.contains(command)
				|| LockPreflight.CLUSTER_COMMANDS.contains(command))) ? command : null;
	}

	/**
	 * {@return the commands a line of a script's text calls, in order}
	 * @param line one line of a script's text
	 */
	public static List<String> calls(String line) {
		return CALL.matcher(line).results().map(call -> call.group(1)).toList();
	}

	private static Map<String, @Nullable String[]> commandsByLine() {
		Map<String, @Nullable String[]> bySha = new HashMap<>();
		for (RedisScript<?> script : SCRIPTS) {
			String[] lines = script.getScriptAsString().split("\n", -1);
			@Nullable String[] commands = new String[lines.length];
			for (int i = 0; i < lines.length; i++) {
				List<String> calls = calls(lines[i]);
				commands[i] = (calls.size() == 1) ? calls.get(0) : null;
			}
			bySha.put(script.getSha1(), commands);
		}
		return bySha;
	}

}
