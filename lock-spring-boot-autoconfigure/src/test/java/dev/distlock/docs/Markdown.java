package dev.distlock.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * A Markdown file of the project, read the way the documentation checks need it: its fenced code blocks (each with
 * the HTML comment right above it, if any), its headings as GitHub turns them into anchors, and its links. Not a
 * Markdown parser: it knows fenced code blocks (backticks or tildes, at any indentation), ATX headings ({@code # ...}),
 * inline links and images, reference definitions, {@code href}/{@code src} attributes and explicit
 * {@code <a id="...">} anchors, which is all the project's documentation uses; setext headings and indented code
 * blocks are not recognised.
 */
final class Markdown {

	/** The repository's root: surefire runs in the module's directory. */
	static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	private static final Pattern FENCE = Pattern.compile("^(\\s*)(`{3,}|~{3,})\\s*([^\\s`]*).*$");

	private static final Pattern HEADING = Pattern.compile("^ {0,3}(#{1,6})(?:[ \\t]+(.*?))?(?:[ \\t]+#+)?[ \\t]*$");

	private static final Pattern EXPLICIT_ANCHOR = Pattern.compile("<a\\s[^>]*?\\b(?:id|name)\\s*=\\s*\"([^\"]+)\"");

	private static final Pattern CODE_SPAN = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");

	private static final Pattern INLINE_LINK = Pattern
		.compile("\\[(?:[^\\]\\\\]|\\\\.)*]\\(\\s*<?([^)\\s>]*)>?(?:\\s+(?:\"[^\"]*\"|'[^']*'))?\\s*\\)");

	private static final Pattern REFERENCE_DEFINITION = Pattern.compile("(?m)^ {0,3}\\[[^\\]]+]:\\s*<?([^\\s>]+)>?.*$");

	private static final Pattern HTML_LINK = Pattern.compile("<(?:a|img)\\s[^>]*?\\b(?:href|src)\\s*=\\s*\"([^\"]*)\"");

	private static final Pattern SCHEME = Pattern.compile("^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//).*");

	private static final Pattern LINE_ANCHOR = Pattern.compile("L\\d+(?:-L\\d+)?");

	private final Path root;

	private final Path path;

	private final List<String> lines;

	/** The lines outside fenced code blocks, code spans blanked; the lines of fenced blocks are empty. */
	private final List<String> prose = new ArrayList<>();

	private final List<Fence> fences = new ArrayList<>();

	/** Whether each line belongs to a fenced code block, its fences included. */
	private final List<Boolean> fenced = new ArrayList<>();

	private Markdown(Path root, Path path, List<String> lines) {
		this.root = root;
		this.path = path;
		this.lines = lines;
		parse();
	}

	/** README.md, CONTRIBUTING.md, CHANGELOG.md and every Markdown file under docs/, in that order. */
	static List<Markdown> documents() {
		List<Markdown> documents = new ArrayList<>();
		for (String name : List.of("README.md", "CONTRIBUTING.md", "CHANGELOG.md")) {
			documents.add(read(ROOT, ROOT.resolve(name)));
		}
		try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
			docs.filter((file) -> file.toString().endsWith(".md"))
				.sorted()
				.forEach((file) -> documents.add(read(ROOT, file)));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return documents;
	}

	static Markdown read(Path root, Path file) {
		try {
			return new Markdown(root.toAbsolutePath().normalize(), file.toAbsolutePath().normalize(),
					Files.readAllLines(file));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** The file's path from the repository's root, as the failure messages name it. */
	String name() {
		return this.root.relativize(this.path).toString().replace('\\', '/');
	}

	List<Fence> fences() {
		return this.fences;
	}

	/** The 1-based number of each line outside fenced code blocks and code spans that contains {@code text}. */
	List<Integer> linesContaining(String text) {
		List<Integer> found = new ArrayList<>();
		for (int i = 0; i < this.prose.size(); i++) {
			if (this.prose.get(i).contains(text)) {
				found.add(i + 1);
			}
		}
		return found;
	}

	private void parse() {
		String open = null;
		int openLine = 0;
		String indent = "";
		String info = "";
		StringBuilder content = new StringBuilder();
		for (int i = 0; i < this.lines.size(); i++) {
			String line = this.lines.get(i);
			Matcher fence = FENCE.matcher(line);
			if (open == null) {
				if (fence.matches()) {
					open = fence.group(2);
					indent = fence.group(1);
					info = fence.group(3).toLowerCase(Locale.ROOT);
					openLine = i + 1;
					content.setLength(0);
					this.prose.add("");
					this.fenced.add(true);
				}
				else {
					this.prose.add(blankCodeSpans(line));
					this.fenced.add(false);
				}
			}
			else {
				this.prose.add("");
				this.fenced.add(true);
				String trimmed = line.trim();
				char fenceChar = open.charAt(0);
				if (trimmed.startsWith(open) && trimmed.chars().allMatch((c) -> c == fenceChar)) {
					this.fences.add(new Fence(openLine, info, content.toString(), commentAbove(openLine)));
					open = null;
				}
				else {
					content.append(line.startsWith(indent) ? line.substring(indent.length()) : line.stripLeading())
						.append('\n');
				}
			}
		}
		if (open != null) {
			throw new IllegalStateException(name() + ":" + openLine + ": a code block that is never closed");
		}
	}

	/** The HTML comment that ends on the line right above {@code fenceLine}, without its delimiters. */
	private @Nullable Comment commentAbove(int fenceLine) {
		int end = fenceLine - 1;
		if (end < 1 || !this.prose.get(end - 1).trim().endsWith("-->")) {
			return null;
		}
		for (int start = end; start >= 1; start--) {
			String line = this.lines.get(start - 1);
			int from = this.prose.get(start - 1).indexOf("<!--");
			if (from >= 0) {
				StringBuilder text = new StringBuilder(line.substring(from + 4));
				for (int i = start + 1; i <= end; i++) {
					text.append('\n').append(this.lines.get(i - 1));
				}
				String comment = text.toString();
				return new Comment(start, comment.substring(0, comment.lastIndexOf("-->")).strip());
			}
		}
		return null;
	}

	private static String blankCodeSpans(String line) {
		Matcher span = CODE_SPAN.matcher(line);
		StringBuilder blanked = new StringBuilder();
		while (span.find()) {
			span.appendReplacement(blanked, " ".repeat(span.group().length()));
		}
		return span.appendTail(blanked).toString();
	}

	/** The anchors GitHub gives this file: one per heading, by its slug rules, and each explicit {@code <a id>}. */
	Set<String> anchors() {
		Set<String> anchors = new LinkedHashSet<>();
		Map<String, Integer> occurrences = new HashMap<>();
		for (int i = 0; i < this.lines.size(); i++) {
			if (this.fenced.get(i)) {
				continue;
			}
			String line = this.lines.get(i);
			Matcher heading = HEADING.matcher(line);
			if (heading.matches()) {
				String slug = slug((heading.group(2) != null) ? heading.group(2) : "");
				// as github-slugger: the first "x", then "x-1", "x-2", skipping any slug already taken
				String unique = slug;
				int n = occurrences.getOrDefault(slug, 0);
				while (anchors.contains(unique)) {
					n++;
					unique = slug + "-" + n;
				}
				occurrences.put(slug, n);
				anchors.add(unique);
			}
			Matcher explicit = EXPLICIT_ANCHOR.matcher(line);
			while (explicit.find()) {
				anchors.add(explicit.group(1));
			}
		}
		return anchors;
	}

	/**
	 * The anchor GitHub gives a heading: its text as rendered (links and images reduced to their text, HTML tags,
	 * code-span backticks and emphasis asterisks dropped), in lower case, without any character but letters, digits,
	 * spaces, hyphens and underscores, each space a hyphen.
	 */
	static String slug(String heading) {
		String text = heading.replaceAll("!?\\[([^\\]]*)]\\([^)]*\\)", "$1")
			.replaceAll("<[^>]+>", "")
			.replace("`", "")
			.replace("*", "")
			.strip()
			.toLowerCase(Locale.ROOT);
		StringBuilder slug = new StringBuilder();
		text.codePoints().forEach((c) -> {
			if (c == ' ') {
				slug.append('-');
			}
			else if (Character.isLetterOrDigit(c) || c == '-' || c == '_'
					|| Character.getType(c) == Character.NON_SPACING_MARK) {
				slug.appendCodePoint(c);
			}
		});
		return slug.toString();
	}

	/** Each relative link of the file (inline, reference definition or HTML), with the line it is on. */
	List<Link> links() {
		String text = String.join("\n", this.prose);
		List<Link> links = new ArrayList<>();
		for (Pattern pattern : List.of(INLINE_LINK, REFERENCE_DEFINITION, HTML_LINK)) {
			Matcher matcher = pattern.matcher(text);
			while (matcher.find()) {
				String target = matcher.group(1);
				if (!SCHEME.matcher(target).matches()) {
					links.add(new Link(lineAt(text, matcher.start(1)), target));
				}
			}
		}
		links.sort((a, b) -> Integer.compare(a.line(), b.line()));
		return links;
	}

	private static int lineAt(String text, int offset) {
		int line = 1;
		for (int i = 0; i < offset; i++) {
			if (text.charAt(i) == '\n') {
				line++;
			}
		}
		return line;
	}

	/**
	 * What is wrong with each relative link of this file, as {@code file:line: target: problem}; empty when every one
	 * resolves. {@code anchors} caches the anchors of the files read so far.
	 */
	List<String> brokenLinks(Map<Path, Set<String>> anchors) {
		List<String> broken = new ArrayList<>();
		for (Link link : links()) {
			String problem = problem(link.target(), anchors);
			if (problem != null) {
				broken.add(name() + ":" + link.line() + ": " + link.target() + ": " + problem);
			}
		}
		return broken;
	}

	private @Nullable String problem(String target, Map<Path, Set<String>> anchors) {
		if (target.isEmpty()) {
			return "an empty link";
		}
		int hash = target.indexOf('#');
		String file = (hash >= 0) ? target.substring(0, hash) : target;
		String anchor = (hash >= 0) ? target.substring(hash + 1) : null;
		Path destination;
		if (file.isEmpty()) {
			destination = this.path;
		}
		else {
			String decoded = URLDecoder.decode(file.replace("+", "%2B"), StandardCharsets.UTF_8);
			destination = (decoded.startsWith("/") ? this.root.resolve(decoded.substring(1))
					: this.path.getParent().resolve(decoded)).normalize();
			if (!destination.startsWith(this.root)) {
				return "leads out of the repository";
			}
			if (!Files.exists(destination)) {
				return "no such file or folder (" + this.root.relativize(destination) + ")";
			}
		}
		if (anchor == null) {
			return null;
		}
		if (Files.isDirectory(destination)) {
			destination = destination.resolve("README.md");
		}
		if (!destination.toString().endsWith(".md")) {
			return LINE_ANCHOR.matcher(anchor).matches() ? null
					: "an anchor on a file that is not Markdown (only #L<line> anchors are checked there)";
		}
		Set<String> known = anchors.computeIfAbsent(destination, (markdown) -> read(this.root, markdown).anchors());
		return known.contains(anchor) ? null : "no heading or <a id> makes the anchor #" + anchor + " in "
				+ this.root.relativize(destination).toString().replace('\\', '/');
	}

	/** A fenced code block: the line of its opening fence, its info string's first word, its text. */
	record Fence(int line, String language, String content, @Nullable Comment comment) {
	}

	/** An HTML comment: the line it starts on, its text without {@code <!--} and {@code -->}. */
	record Comment(int line, String text) {
	}

	/** A relative link and the line it is on. */
	record Link(int line, String target) {
	}

}
