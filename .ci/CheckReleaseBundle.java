import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * Checks a release staged by {@code ./mvnw -B -Prelease -Drevision=X.Y.Z clean verify} against what Maven Central
 * requires of every published component, and packs it into the zip the Central Publisher Portal takes.
 * <p>
 * Run with {@code java .ci/CheckReleaseBundle.java [staging-dir] [bundle-zip]} (a JDK is all it needs); defaults are
 * {@code target/staging-deploy} and {@code target/central-bundle.zip}. For each published artifact it checks:
 * <ul>
 * <li>exactly the published artifacts are staged, each in one release (non-SNAPSHOT) version;
 * <li>the pom, the jar, the -sources.jar and the -javadoc.jar are there, the jars are readable and not empty;
 * <li>each of those files has a .md5 and a .sha1 that match its content;
 * <li>.asc signatures for each of them when the release was signed (all or none); without any, it says that signing
 * was skipped (Central refuses an unsigned bundle: stage with a key before uploading), or fails with
 * {@code --require-signatures};
 * <li>the pom has the metadata Central asks for (name, description, url, licenses, developers, scm) and is a
 * consumer pom: no parent, no unresolved {@code ${...}}, no test dependencies.
 * </ul>
 * It exits with 1 and lists every problem when one is found.
 */
public class CheckReleaseBundle {

	static final String GROUP_PATH = "dev/distlock";

	static final List<String> PUBLISHED = List.of("lock-core", "lock-redis", "lock-spring-boot-autoconfigure",
			"lock-spring-boot-starter", "lock-aspectj", "lock-test");

	static final List<String> CLASSIFIED = List.of(".jar", "-sources.jar", "-javadoc.jar");

	final List<String> problems = new ArrayList<>();

	int signatures;

	int signable;

	public static void main(String[] args) throws Exception {
		List<String> positional = new ArrayList<>();
		boolean requireSignatures = false;
		for (String arg : args) {
			if (arg.equals("--require-signatures")) {
				requireSignatures = true;
			}
			else {
				positional.add(arg);
			}
		}
		Path staging = Path.of(positional.size() > 0 ? positional.get(0) : "target/staging-deploy");
		Path bundle = Path.of(positional.size() > 1 ? positional.get(1) : "target/central-bundle.zip");
		CheckReleaseBundle check = new CheckReleaseBundle();
		check.check(staging, requireSignatures);
		if (!check.problems.isEmpty()) {
			System.err.println("The staged release in " + staging + " is not ready for Maven Central:");
			check.problems.forEach(problem -> System.err.println("  - " + problem));
			System.exit(1);
		}
		int files = zip(staging, bundle);
		System.out.println("Release bundle OK: " + PUBLISHED.size() + " artifacts, " + files + " files, in " + bundle
				+ (check.signatures > 0 ? " (signed)" : ""));
	}

	void check(Path staging, boolean requireSignatures) throws Exception {
		Path group = staging.resolve(GROUP_PATH);
		if (!Files.isDirectory(group)) {
			problems.add("nothing staged under " + group + ": run ./mvnw -B -Prelease -Drevision=X.Y.Z clean verify first");
			return;
		}
		Set<String> staged = new TreeSet<>();
		try (Stream<Path> dirs = Files.list(group)) {
			dirs.filter(Files::isDirectory).forEach(dir -> staged.add(dir.getFileName().toString()));
		}
		for (String artifact : staged) {
			if (!PUBLISHED.contains(artifact)) {
				problems.add("staged but not a published artifact: " + GROUP_PATH + "/" + artifact);
			}
		}
		for (String artifact : PUBLISHED) {
			if (!staged.contains(artifact)) {
				problems.add("published artifact missing: " + GROUP_PATH + "/" + artifact);
				continue;
			}
			checkArtifact(group.resolve(artifact), artifact);
		}
		if (signatures > 0 && signatures < signable) {
			problems.add("only " + signatures + " of " + signable + " files are signed");
		}
		if (signatures == 0) {
			if (requireSignatures) {
				problems.add("no .asc signatures: stage with MAVEN_GPG_KEY and MAVEN_GPG_PASSPHRASE set");
			}
			else {
				System.out.println("Signing was skipped (no .asc files: MAVEN_GPG_KEY was not set). Maven Central "
						+ "refuses unsigned files: stage with a key before uploading.");
			}
		}
	}

	void checkArtifact(Path dir, String artifact) throws Exception {
		List<String> versions = new ArrayList<>();
		try (Stream<Path> entries = Files.list(dir)) {
			entries.filter(Files::isDirectory).forEach(version -> versions.add(version.getFileName().toString()));
		}
		if (versions.size() != 1) {
			problems.add(artifact + ": expected one staged version, found " + versions
					+ " (stage from a clean build: ./mvnw ... clean verify)");
			return;
		}
		String version = versions.get(0);
		if (version.endsWith("-SNAPSHOT")) {
			problems.add(artifact + ": version " + version + " is a snapshot; Central takes releases only");
		}
		Path versionDir = dir.resolve(version);
		String base = artifact + "-" + version;
		Path pom = versionDir.resolve(base + ".pom");
		checkFile(pom);
		for (String suffix : CLASSIFIED) {
			Path jar = versionDir.resolve(base + suffix);
			if (checkFile(jar)) {
				checkJar(jar);
			}
		}
		if (Files.isRegularFile(pom)) {
			checkPom(pom, artifact, version);
		}
	}

	boolean checkFile(Path file) throws IOException, NoSuchAlgorithmException {
		if (!Files.isRegularFile(file)) {
			problems.add("missing: " + file);
			return false;
		}
		signable++;
		byte[] content = Files.readAllBytes(file);
		checkDigest(file, content, "md5", "MD5");
		checkDigest(file, content, "sha1", "SHA-1");
		Path signature = Path.of(file + ".asc");
		if (Files.isRegularFile(signature)) {
			signatures++;
			if (!Files.readString(signature).startsWith("-----BEGIN PGP SIGNATURE-----")) {
				problems.add("not an armored PGP signature: " + signature);
			}
		}
		return true;
	}

	void checkDigest(Path file, byte[] content, String extension, String algorithm)
			throws IOException, NoSuchAlgorithmException {
		Path digestFile = Path.of(file + "." + extension);
		if (!Files.isRegularFile(digestFile)) {
			problems.add("missing: " + digestFile);
			return;
		}
		String expected = HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(content));
		String actual = Files.readString(digestFile).trim().split("\\s+")[0];
		if (!expected.equalsIgnoreCase(actual)) {
			problems.add(extension + " does not match the content: " + digestFile);
		}
	}

	void checkJar(Path jar) {
		try (ZipFile zip = new ZipFile(jar.toFile())) {
			boolean hasContent = zip.stream().anyMatch(entry -> !entry.isDirectory()
					&& !entry.getName().startsWith("META-INF/maven/") && !entry.getName().equals("META-INF/MANIFEST.MF"));
			if (!hasContent) {
				problems.add("empty jar (only a manifest): " + jar);
			}
		}
		catch (IOException ex) {
			problems.add("not a readable jar: " + jar + " (" + ex.getMessage() + ")");
		}
	}

	void checkPom(Path pom, String artifact, String version) throws Exception {
		String text = Files.readString(pom);
		if (text.contains("${")) {
			problems.add(pom.getFileName() + ": unresolved ${...} left in the pom");
		}
		DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
		factory.setNamespaceAware(false);
		Document document;
		try (InputStream in = Files.newInputStream(pom)) {
			document = factory.newDocumentBuilder().parse(in);
		}
		catch (org.xml.sax.SAXException ex) {
			problems.add(pom.getFileName() + ": not well-formed XML (" + ex.getMessage() + ")");
			return;
		}
		Element project = document.getDocumentElement();
		String name = pom.getFileName().toString();
		expectText(name, project, "groupId", "dev.distlock");
		expectText(name, project, "artifactId", artifact);
		expectText(name, project, "version", version);
		requireText(name, project, "name");
		requireText(name, project, "description");
		requireText(name, project, "url");
		if (child(project, "parent") != null) {
			problems.add(name + ": has a <parent>; the published pom must stand alone (flattened)");
		}
		Element licenses = child(project, "licenses");
		List<Element> licenseList = (licenses != null) ? children(licenses, "license") : List.of();
		if (licenseList.isEmpty()) {
			problems.add(name + ": no <licenses><license>");
		}
		for (Element license : licenseList) {
			requireText(name + " <license>", license, "name");
			requireText(name + " <license>", license, "url");
		}
		Element developers = child(project, "developers");
		List<Element> developerList = (developers != null) ? children(developers, "developer") : List.of();
		if (developerList.isEmpty()) {
			problems.add(name + ": no <developers><developer>");
		}
		for (Element developer : developerList) {
			requireText(name + " <developer>", developer, "name");
		}
		Element scm = child(project, "scm");
		if (scm == null) {
			problems.add(name + ": no <scm>");
		}
		else {
			requireText(name + " <scm>", scm, "connection");
			requireText(name + " <scm>", scm, "developerConnection");
			requireText(name + " <scm>", scm, "url");
		}
		Element dependencies = child(project, "dependencies");
		if (dependencies != null) {
			for (Element dependency : children(dependencies, "dependency")) {
				String id = text(dependency, "groupId") + ":" + text(dependency, "artifactId");
				if ("test".equals(text(dependency, "scope"))) {
					problems.add(name + ": test dependency " + id + " in the published pom");
				}
				if (text(dependency, "version") == null) {
					problems.add(name + ": dependency " + id + " has no version (managed by a parent a consumer lacks)");
				}
			}
		}
	}

	void expectText(String where, Element parent, String child, String expected) {
		String actual = text(parent, child);
		if (!expected.equals(actual)) {
			problems.add(where + ": <" + child + "> is " + actual + ", expected " + expected);
		}
	}

	void requireText(String where, Element parent, String child) {
		String value = text(parent, child);
		if (value == null || value.isBlank()) {
			problems.add(where + ": no <" + child + ">");
		}
	}

	static String text(Element parent, String name) {
		Element child = child(parent, name);
		return (child != null) ? child.getTextContent().trim() : null;
	}

	static Element child(Element parent, String name) {
		List<Element> found = children(parent, name);
		return found.isEmpty() ? null : found.get(0);
	}

	static List<Element> children(Element parent, String name) {
		List<Element> found = new ArrayList<>();
		NodeList nodes = parent.getChildNodes();
		for (int i = 0; i < nodes.getLength(); i++) {
			Node node = nodes.item(i);
			if (node instanceof Element element && element.getTagName().equals(name)) {
				found.add(element);
			}
		}
		return found;
	}

	/** The bundle: every staged file of the published artifacts but Maven's repository metadata. */
	static int zip(Path staging, Path bundle) throws IOException {
		Files.createDirectories(bundle.toAbsolutePath().getParent());
		List<Path> files;
		try (Stream<Path> walk = Files.walk(staging.resolve(GROUP_PATH))) {
			files = walk.filter(Files::isRegularFile)
				.filter(file -> !file.getFileName().toString().startsWith("maven-metadata"))
				.sorted()
				.toList();
		}
		try (OutputStream out = Files.newOutputStream(bundle); ZipOutputStream zip = new ZipOutputStream(out)) {
			for (Path file : files) {
				ZipEntry entry = new ZipEntry(staging.relativize(file).toString().replace('\\', '/'));
				entry.setTime(0);
				zip.putNextEntry(entry);
				Files.copy(file, zip);
				zip.closeEntry();
			}
		}
		return files.size();
	}

}
