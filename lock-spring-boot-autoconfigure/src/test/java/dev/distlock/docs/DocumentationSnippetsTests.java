package dev.distlock.docs;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import dev.distlock.docs.Markdown.Fence;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java snippet of README.md and of the Markdown under {@code docs/} compiles, as Java 17, against this module's
 * test classpath ({@code lock-core}, {@code lock-redis} and this module, with Spring Boot, Spring Data Redis, Actuator, Micrometer, Reactor, Spring Integration,
 * JDBC, Spring Boot's test support) and the sources of the test kit, {@code lock-test} ({@value #TEST_KIT_SOURCES}):
 * the kit depends on this module, so its classes cannot be on this module's class path, and javac compiles from its
 * sources what a snippet uses of it. A snippet that does not compile is a bug of the documentation that a reader finds
 * by pasting it; this finds it first. Kotlin, YAML, shell, JSON and other blocks are not compiled. The front page's annotation example is also
 * run, against a real Redis, by {@code ReadmeExampleIntegrationTests}.
 * <p>
 * A snippet is one of three kinds:
 * <ul>
 * <li>a <em>unit</em>, a whole source file: it has {@code import} lines or declares a top-level class, interface,
 * record or enum at the start of a line. It compiles as it is, with the {@linkplain #STANDARD_IMPORTS standard
 * imports} when it has no imports of its own;</li>
 * <li><em>members</em>, the default for anything else: fields and methods ({@code @Bean} methods, annotated service
 * methods), compiled as the body of a class with the standard imports;</li>
 * <li><em>statements</em>, only when the snippet's comment says so: compiled as the body of a method, of such a
 * class, that may throw any exception.</li>
 * </ul>
 * An ellipsis stands for the reader's own code: {@code ) { ... }} (a method's or a statement's body) compiles as a
 * body that throws, any other {@code { ... }} (a class's) as an empty body, and a line that is only {@code ...} (and
 * perhaps a {@code //} comment) as nothing.
 * <p>
 * What a fragment needs beyond that (a field it uses, a type of the reader's, an import) is written in an HTML comment
 * that ends on the line right above the fence, which GitHub does not show:
 * <pre>
 * &lt;!-- snippet: statements
 * imports: org.springframework.data.redis.connection.RedisConnectionFactory
 * context: RedisConnectionFactory redisConnectionFactory;
 * context: record Receipt() { }
 * --&gt;
 * </pre>
 * One directive per line (a line that starts with white space continues the one above): {@code unit},
 * {@code members} or {@code statements}; {@code imports:} type names or packages ({@code a.b.*}), separated by
 * commas ({@code static a.B.c} for a static import); {@code context:} Java code put into the wrapping class before
 * the snippet (after a unit, as top-level types of its file). {@code not compiled:} and a reason leaves a snippet
 * out: for what cannot compile here (a library the test classpath must not have), never for a snippet that is merely
 * wrong. At most {@value #MAX_NOT_COMPILED} may be left out, and the test prints them. A snippet comment that is not
 * right above a Java fence, and an unknown directive, fail the test.
 */
class DocumentationSnippetsTests {

	/** The test kit's sources, from the repository's root: compiled with the snippets that use them. */
	static final String TEST_KIT_SOURCES = "lock-test/src/main/java";

	/** A handful: leaving more out is a decision to make here, not a side effect of a new page. */
	static final int MAX_NOT_COMPILED = 4;

	/** The imports of every fragment, and of a unit without imports of its own. */
	static final List<String> STANDARD_IMPORTS = List.of("java.time.*", "java.util.*", "java.util.concurrent.*",
			"java.util.function.*", "dev.distlock.annotation.*", "dev.distlock.core.*", "dev.distlock.redis.*",
			"dev.distlock.reactive.*", "dev.distlock.observability.*", "dev.distlock.preflight.*",
			"dev.distlock.integration.*", "dev.distlock.autoconfigure.*", "org.springframework.stereotype.*",
			"org.springframework.beans.factory.annotation.*", "org.springframework.context.annotation.*",
			"org.springframework.scheduling.annotation.*", "org.springframework.transaction.annotation.*",
			"org.springframework.resilience.annotation.*", "reactor.core.publisher.*",
			// a single-type import wins over java.util.EventListener of the on-demand import
			"org.springframework.context.event.EventListener");

	private static final Pattern TOP_LEVEL_TYPE = Pattern.compile(
			"(?m)^(?:(?:public|protected|private|abstract|final|static|sealed|non-sealed|strictfp)\\s+)*"
					+ "(?:class|interface|enum|record|@interface)\\s+\\w+");

	private static final Pattern PUBLIC_TYPE = Pattern
		.compile("(?m)^public\\s+(?:(?:abstract|final|sealed|non-sealed|strictfp)\\s+)*"
				+ "(?:class|interface|enum|record|@interface)\\s+(\\w+)");

	private static final Pattern IMPORT = Pattern.compile("(?m)^(?:import|package)\\s");

	@Test
	void everyJavaSnippetCompiles(@TempDir Path classes) {
		List<String> problems = new ArrayList<>();
		List<Snippet> snippets = new ArrayList<>();
		for (Markdown document : Markdown.documents()) {
			if (!document.name().equals("CONTRIBUTING.md") && !document.name().equals("CHANGELOG.md")) {
				snippets.addAll(snippets(document, problems));
			}
		}
		List<Snippet> compiled = snippets.stream().filter((snippet) -> snippet.notCompiled() == null).toList();
		List<Snippet> left = snippets.stream().filter((snippet) -> snippet.notCompiled() != null).toList();
		problems.addAll(compile(compiled, classes));
		System.out.printf("Compiled %d Java snippets of README.md and docs/; not compiled: %d%n", compiled.size(),
				left.size());
		left.forEach((snippet) -> System.out.printf("  %s:%d: %s%n", snippet.document(), snippet.line(),
				snippet.notCompiled()));

		assertThat(compiled).extracting(Snippet::document).contains("README.md");
		assertThat(problems)
			.withFailMessage("Java snippets that do not compile:%n%s", String.join(System.lineSeparator(), problems))
			.isEmpty();
		assertThat(left).as("snippets left out").hasSizeLessThanOrEqualTo(MAX_NOT_COMPILED);
	}

	@Test
	void aSnippetThatDoesNotCompileIsReportedWithItsFileAndLine(@TempDir Path root) throws IOException {
		Files.createDirectories(root.resolve("docs"));
		Files.writeString(root.resolve("docs/page.md"), """
				# Page

				<!-- snippet: statements
				context: LockService locks;
				-->
				```java
				Optional<Lease> lease = locks.tryAcquire("report", Duration.ofMinutes(5), Duration.ZERO);
				...
				lease.orElseThrow().relase();
				```

				```java
				@DistributedLock(key = "'report'")
				public void report() { ... }
				```

				<!-- snippet: not compiled: pseudo-code -->
				```java
				take the lock, then
				```

				<!-- snippet: statement -->
				```java
				int i = 0;
				```

				<!-- snippet: members -->
				Not a fence.
				""");
		List<String> problems = new ArrayList<>();
		List<Snippet> snippets = snippets(Markdown.read(root, root.resolve("docs/page.md")), problems);
		assertThat(snippets).hasSize(4);
		assertThat(snippets.get(2).notCompiled()).isEqualTo("pseudo-code");

		problems.addAll(compile(snippets.subList(0, 2), root.resolve("classes")));

		assertThat(problems).hasSize(3);
		assertThat(problems.get(0)).isEqualTo("docs/page.md:22: unknown snippet directive 'statement'");
		assertThat(problems.get(1))
			.isEqualTo("docs/page.md:27: a snippet comment that is not right above a ```java fence");
		assertThat(problems.get(2)).startsWith("docs/page.md:9: cannot find symbol")
			.contains("lease.orElseThrow().relase();", "symbol:   method relase()");
	}

	/** The Java snippets of a document; what is wrong with their comments goes to {@code problems}. */
	private static List<Snippet> snippets(Markdown document, List<String> problems) {
		List<Snippet> snippets = new ArrayList<>();
		Set<Integer> attached = new HashSet<>();
		for (Fence fence : document.fences()) {
			String comment = (fence.comment() != null) ? fence.comment().text() : "";
			boolean directed = comment.startsWith("snippet");
			if (!fence.language().equals("java")) {
				continue;
			}
			if (directed) {
				attached.add(fence.comment().line());
			}
			Snippet snippet = new Snippet(document.name(), fence.line() + 1, fence.content());
			if (directed) {
				String directives = comment.substring("snippet".length()).replaceFirst("^\\s*:", "").strip();
				for (String directive : directives.split("\\n(?!\\s)")) {
					String problem = snippet.direct(directive.replaceAll("\\s*\\n\\s*", " ").strip());
					if (problem != null) {
						problems.add(document.name() + ":" + fence.comment().line() + ": " + problem);
					}
				}
			}
			snippets.add(snippet);
		}
		for (int line : document.linesContaining("<!-- snippet")) {
			if (!attached.contains(line)) {
				problems.add(
						document.name() + ":" + line + ": a snippet comment that is not right above a ```java fence");
			}
		}
		return snippets;
	}

	/** Compiles the snippets in one run; each error as {@code file:line: message}, with the snippet's line. */
	private static List<String> compile(List<Snippet> snippets, Path classes) {
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
		List<Source> sources = new ArrayList<>();
		for (int i = 0; i < snippets.size(); i++) {
			sources.add(new Source(snippets.get(i), "docsnippets.s" + i));
		}
		try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, Locale.ROOT,
				StandardCharsets.UTF_8)) {
			Files.createDirectories(classes);
			List<String> options = List.of("--release", "17", "-proc:none", "-Xmaxerrs", "10000", "-d",
					classes.toString(), "-classpath", System.getProperty("java.class.path"), "-sourcepath",
					Markdown.ROOT.resolve(TEST_KIT_SOURCES).toString());
			compiler.getTask(null, files, diagnostics, options, null, sources).call();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		List<String> problems = new ArrayList<>();
		for (Diagnostic<? extends JavaFileObject> diagnostic : diagnostics.getDiagnostics()) {
			if (diagnostic.getKind() == Diagnostic.Kind.ERROR) {
				problems.add((diagnostic.getSource() instanceof Source source)
						? source.describe(diagnostic) : diagnostic.getMessage(Locale.ROOT));
			}
		}
		return problems;
	}

	/** A Java fenced block of a document and what its comment says about it. */
	static final class Snippet {

		private final String document;

		private final int line;

		private final String code;

		private @Nullable String kind;

		private final List<String> imports = new ArrayList<>();

		private final StringBuilder context = new StringBuilder();

		private @Nullable String notCompiled;

		Snippet(String document, int line, String code) {
			this.document = document;
			this.line = line;
			this.code = code;
		}

		String document() {
			return this.document;
		}

		/** The line of the document on which the snippet's code begins. */
		int line() {
			return this.line;
		}

		@Nullable String notCompiled() {
			return this.notCompiled;
		}

		/** Applies one directive of the snippet's comment; what is wrong with it, or {@code null}. */
		@Nullable String direct(String directive) {
			if (directive.equals("unit") || directive.equals("members") || directive.equals("statements")) {
				this.kind = directive;
			}
			else if (directive.startsWith("imports:")) {
				Arrays.stream(directive.substring("imports:".length()).split(","))
					.map(String::strip)
					.filter((name) -> !name.isEmpty())
					.forEach(this.imports::add);
			}
			else if (directive.startsWith("context:")) {
				this.context.append(directive.substring("context:".length()).strip()).append('\n');
			}
			else if (directive.startsWith("not compiled:")
					&& !directive.substring("not compiled:".length()).isBlank()) {
				this.notCompiled = directive.substring("not compiled:".length()).strip();
			}
			else {
				return "unknown snippet directive '" + directive + "'";
			}
			return null;
		}

		String kind() {
			if (this.kind != null) {
				return this.kind;
			}
			return (IMPORT.matcher(this.code).find() || TOP_LEVEL_TYPE.matcher(this.code).find()) ? "unit" : "members";
		}

		/** The snippet's code with each ellipsis turned into Java, line for line. */
		String filledCode() {
			return this.code.replaceAll("\\)(\\s*)\\{ \\.\\.\\. }", ")$1{ throw new UnsupportedOperationException(); }")
				.replace("{ ... }", "{ }")
				.replaceAll("(?m)^(\\s*)\\.\\.\\.\\s*(//.*)?$", "$1$2");
		}

	}

	/** The source file the compiler gets for a snippet, and the way back from its lines to the document's. */
	static final class Source extends SimpleJavaFileObject {

		private final Snippet snippet;

		private final String text;

		/** The line of {@link #text} on which the snippet's code begins. */
		private final int firstCodeLine;

		private final int codeLines;

		Source(Snippet snippet, String packageName) {
			super(URI.create("string:///" + packageName.replace('.', '/') + "/" + typeName(snippet) + ".java"),
					Kind.SOURCE);
			this.snippet = snippet;
			String kind = snippet.kind();
			String code = snippet.filledCode();
			StringBuilder text = new StringBuilder("package ").append(packageName).append(";\n");
			List<String> imports = new ArrayList<>(snippet.imports);
			if (!kind.equals("unit") || !IMPORT.matcher(code).find()) {
				imports.addAll(STANDARD_IMPORTS);
			}
			imports.forEach((name) -> text.append("import ").append(name).append(";\n"));
			if (!kind.equals("unit")) {
				text.append("class Snippet {\n").append(snippet.context);
				if (kind.equals("statements")) {
					text.append("void snippet() throws Exception {\n");
				}
			}
			this.firstCodeLine = (int) text.chars().filter((c) -> c == '\n').count() + 1;
			this.codeLines = (int) code.chars().filter((c) -> c == '\n').count();
			text.append(code);
			if (kind.equals("unit")) {
				text.append(snippet.context);
			}
			else {
				text.append(kind.equals("statements") ? "}\n}\n" : "}\n");
			}
			this.text = text.toString();
		}

		private static String typeName(Snippet snippet) {
			Matcher type = PUBLIC_TYPE.matcher(snippet.code);
			return (snippet.kind().equals("unit") && type.find()) ? type.group(1) : "Snippet";
		}

		@Override
		public CharSequence getCharContent(boolean ignoreEncodingErrors) {
			return this.text;
		}

		String describe(Diagnostic<? extends JavaFileObject> diagnostic) {
			long line = diagnostic.getLineNumber();
			String message = diagnostic.getMessage(Locale.ROOT);
			if (line >= this.firstCodeLine && line < this.firstCodeLine + this.codeLines) {
				long documentLine = this.snippet.line + line - this.firstCodeLine;
				return this.snippet.document + ":" + documentLine + ": " + message + System.lineSeparator() + "    "
						+ this.text.lines().skip(line - 1).findFirst().orElse("").strip();
			}
			return this.snippet.document + ":" + this.snippet.line + ": " + message + System.lineSeparator()
					+ "    in what the test wraps around the snippet (its comment's imports or context):"
					+ System.lineSeparator() + this.text;
		}

	}

}
