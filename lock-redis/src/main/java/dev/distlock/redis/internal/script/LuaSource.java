package dev.distlock.redis.internal.script;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The Lua source of the engine's scripts, read from the class path ({@value #LOCATION}{@code *.lua}) when the class
 * that declares a script is initialized, once per class loader. Why files rather than string constants: the scripts
 * are most of the text of their classes, and a {@code .lua} file reads (and lints) as Lua.
 * <p>
 * A file starts with a header of {@code --} lines, which names the constant it belongs to and the files run before
 * it, and an empty line; {@link #load} drops both, so that the text Redis runs, its SHA1, and the lines that
 * {@link ScriptCommands} maps to commands are exactly the rest of the file. Line ends are read as {@code \n} whatever
 * the checkout made of them, for the same reason. A missing file fails the class's initialization: the engine cannot
 * run without its scripts, and a native image needs them registered as resources ({@link #PATTERN}).
 */
public final class LuaSource {

	/** The class-path folder of the scripts. */
	public static final String LOCATION = "dev/distlock/redis/internal/script/";

	/** The resource pattern that matches every script, as a native image registers it. */
	public static final String PATTERN = LOCATION + "*.lua";

	private LuaSource() {
	}

	/**
	 * The script text of the file {@code name} in {@link #LOCATION}, without its header.
	 * @param name the file's name, e.g. {@code lock-acquire.lua}
	 * @return the script text
	 */
	static String load(String name) {
		try (InputStream in = LuaSource.class.getResourceAsStream(name)) {
			if (in == null) {
				throw new IllegalStateException("Lua script " + LOCATION + name + " not found on the class path");
			}
			return withoutHeader(new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("\r\n", "\n"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not read the Lua script " + LOCATION + name, ex);
		}
	}

	/** {@code text} without its leading {@code --} lines and the one empty line after them. */
	static String withoutHeader(String text) {
		int start = 0;
		while (text.startsWith("--", start)) {
			int end = text.indexOf('\n', start);
			if (end < 0) {
				return "";
			}
			start = end + 1;
		}
		if (start > 0 && text.startsWith("\n", start)) {
			start++;
		}
		return text.substring(start);
	}

}
