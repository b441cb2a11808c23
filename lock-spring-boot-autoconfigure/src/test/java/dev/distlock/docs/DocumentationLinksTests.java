package dev.distlock.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link in README.md, CONTRIBUTING.md, CHANGELOG.md and the Markdown under {@code docs/} leads
 * somewhere: the file or folder exists, inside the repository, and a {@code #anchor} is one that GitHub gives a
 * heading of the target (its slug rules, duplicates numbered {@code -1}, {@code -2}...) or an explicit
 * {@code <a id="...">}. The documentation moves (issue 32 split the README into a front page and a guide), and a link
 * that no longer leads anywhere is a dead end for the reader that no other test would notice. Absolute links
 * ({@code http:}, {@code https:}, {@code mailto:}) are not followed: the build has no network.
 */
class DocumentationLinksTests {

	@Test
	void everyRelativeLinkAndAnchorResolves() {
		List<Markdown> documents = Markdown.documents();
		Map<Path, Set<String>> anchors = new HashMap<>();
		List<String> broken = new ArrayList<>();
		int links = 0;
		for (Markdown document : documents) {
			links += document.links().size();
			broken.addAll(document.brokenLinks(anchors));
		}
		assertThat(documents).extracting(Markdown::name).contains("README.md", "docs/guide/README.md");
		assertThat(links).as("relative links found").isPositive();
		assertThat(broken).withFailMessage("links that lead nowhere:%n%s", String.join(System.lineSeparator(), broken))
			.isEmpty();
	}

	/**
	 * The README is a front page (issue 32: it had grown to 1,400 lines): what it is, adding it, one method, the two
	 * commands, the features with a link each. A new topic goes into the guide under {@code docs/guide}, with a line
	 * and a link here.
	 */
	@Test
	void theReadmeFitsOnAFrontPage() throws IOException {
		assertThat(Files.readAllLines(Markdown.ROOT.resolve("README.md")))
			.as("README.md's lines; move the detail to docs/guide and link it")
			.hasSizeLessThanOrEqualTo(250);
	}

	@Test
	void headingsGetTheAnchorsGitHubGivesThem() {
		assertThat(Markdown.slug("AspectJ mode: a bean's calls to itself"))
			.isEqualTo("aspectj-mode-a-beans-calls-to-itself");
		assertThat(Markdown.slug("The `locks` endpoint")).isEqualTo("the-locks-endpoint");
		assertThat(Markdown.slug("`CompletableFuture`, `CompletionStage` and `@Async`"))
			.isEqualTo("completablefuture-completionstage-and-async");
		assertThat(Markdown.slug("Reactive: scenario 2 without threads (issue 13)"))
			.isEqualTo("reactive-scenario-2-without-threads-issue-13");
		assertThat(Markdown.slug("Spring Integration's `LockRegistry` and leader election"))
			.isEqualTo("spring-integrations-lockregistry-and-leader-election");
		assertThat(Markdown.slug("Fault model: a call whose reply was lost"))
			.isEqualTo("fault-model-a-call-whose-reply-was-lost");
		assertThat(Markdown.slug("**Bold** and [a link](x.md) × 2")).isEqualTo("bold-and-a-link--2");
		assertThat(Markdown.slug("snake_case and-hyphens")).isEqualTo("snake_case-and-hyphens");
	}

	@Test
	void aBrokenLinkOrAnchorIsReportedWithItsFileAndLine(@TempDir Path root) throws IOException {
		Files.createDirectories(root.resolve("docs"));
		Files.writeString(root.resolve("docs/target.md"), """
				# Target

				## Same
				## Same
				<a id="explicit"></a>

				```sh
				# not a heading
				```
				""");
		Files.writeString(root.resolve("docs/source.md"), """
				# Source

				[ok](target.md), [ok](target.md#same), [ok](target.md#same-1), [ok](target.md#explicit), [ok](#source),
				[ok](https://example.com/nowhere), `[code, not a link](missing.md)`, [ok](/docs/target.md#target)

				```md
				[in a code block, not a link](missing.md)
				```

				[missing file](missing.md) and [missing
				anchor](target.md#same-2), [code blocks make no heading](target.md#not-a-heading),
				[outside](../../elsewhere.md)
				""");

		List<String> broken = Markdown.read(root, root.resolve("docs/source.md")).brokenLinks(new HashMap<>());

		assertThat(broken).containsExactly("docs/source.md:10: missing.md: no such file or folder (docs/missing.md)",
				"docs/source.md:11: target.md#same-2: no heading or <a id> makes the anchor #same-2 in docs/target.md",
				"docs/source.md:11: target.md#not-a-heading: no heading or <a id> makes the anchor #not-a-heading in "
						+ "docs/target.md",
				"docs/source.md:12: ../../elsewhere.md: leads out of the repository");
	}

}
