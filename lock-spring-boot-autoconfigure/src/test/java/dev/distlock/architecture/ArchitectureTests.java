package dev.distlock.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The package rules of the main code, as tests: no cycles between the packages, the module boundaries of the planned
 * split (lock-core, lock-redis, lock-spring-boot-autoconfigure; docs/architecture.md, "The layers at a glance"), the
 * layer order, and the few classes that may name a Redis client's own types. Each rule says why it holds.
 * <p>
 * The main classes of {@code dev.distlock..} are read from the class path, wherever they are (this module's
 * {@code target/classes} today, the jars or class folders of lock-core and lock-redis after the split); test classes
 * and the test harness of lock-test-support ({@code dev.distlock.test..}) are left out.
 */
class ArchitectureTests {

	/** Read once for all rules: the main classes of every {@code dev.distlock} package on the class path. */
	private static final JavaClasses CLASSES = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.withImportOption((location) -> !location.contains("/dev/distlock/test/"))
		.importPackages("dev.distlock");

	/** The packages of lock-core: the API, the annotation and its interceptor, and what decorates a lock service. */
	private static final String[] LOCK_CORE = { "dev.distlock.core..", "dev.distlock.annotation..",
			"dev.distlock.interceptor..", "dev.distlock.observability..", "dev.distlock.reactive..",
			"dev.distlock.integration.." };

	/** The packages of lock-redis: the Redis engines and the startup checks of the Redis they run on. */
	private static final String[] LOCK_REDIS = { "dev.distlock.redis..", "dev.distlock.preflight.." };

	/** The engine's bottom layer: the Lua scripts and the key and message protocol they speak. */
	private static final String SCRIPTS = "dev.distlock.redis.internal.script..";

	/** The layer above the scripts: the store, the engine's one door to Redis. */
	private static final String STORE = "dev.distlock.redis.internal.store..";

	/** Beside the scripts at the bottom: the engine's threads and back-off, which every layer above may use. */
	private static final String SUPPORT = "dev.distlock.redis.internal.support..";

	/** Beside the store: the pub/sub connections (subscribe, unsubscribe, messages), nothing of leases. */
	private static final String PUBSUB = "dev.distlock.redis.internal.pubsub..";

	/** The lease core both engines share: records, handle, registry and view, renewal scheduler, reconciler. */
	private static final String LEASE_CORE = "dev.distlock.redis.internal.lease..";

	/** The waiting side, beside the lease core: release messages and the waiters they wake. */
	private static final String WAITING = "dev.distlock.redis.internal.wait..";

	/** The single-node engine (standalone, Sentinel, Cluster), on the lease core and the waiting side. */
	private static final String SINGLE_NODE = "dev.distlock.redis.internal.single..";

	/** The Redlock engine, the single-node engine's sibling: neither sees the other. */
	private static final String REDLOCK = "dev.distlock.redis.internal.redlock..";

	/** The lock kinds, on top of the single-node engine whose hooks they fill. */
	private static final String KINDS = "dev.distlock.redis.internal.kind..";

	/** The packages of lock-spring-boot-autoconfigure: the Boot wiring and the actuator endpoint and health. */
	private static final String[] BOOT_WIRING = { "dev.distlock.autoconfigure..", "dev.distlock.actuate.." };

	@Test
	void everyPackageOfTheMainCodeIsImported() {
		assertThat(CLASSES.stream().map(JavaClass::getPackageName).distinct()).contains("dev.distlock.core",
				"dev.distlock.annotation", "dev.distlock.interceptor", "dev.distlock.observability",
				"dev.distlock.reactive", "dev.distlock.integration", "dev.distlock.redis",
				"dev.distlock.redis.internal.script", "dev.distlock.redis.internal.store",
				"dev.distlock.redis.internal.pubsub", "dev.distlock.redis.internal.support",
				"dev.distlock.redis.internal.lease", "dev.distlock.redis.internal.wait",
				"dev.distlock.redis.internal.single", "dev.distlock.redis.internal.redlock",
				"dev.distlock.redis.internal.kind", "dev.distlock.preflight", "dev.distlock.autoconfigure",
				"dev.distlock.actuate");
		assertThat(CLASSES.stream().map(JavaClass::getPackageName))
			.noneMatch((name) -> name.startsWith("dev.distlock.test.") || name.equals("dev.distlock.architecture"));
	}

	@Test
	void packagesAreFreeOfCycles() {
		slices().matching("dev.distlock.(*)..")
			.should()
			.beFreeOfCycles()
			.because("a package cycle cannot be cut into modules, and each package should be readable knowing only "
					+ "the packages below it")
			.check(CLASSES);
	}

	@Test
	void lockCoreDoesNotDependOnTheRedisEngineOrTheBootWiring() {
		noClasses().that()
			.resideInAnyPackage(LOCK_CORE)
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(concat(LOCK_REDIS, BOOT_WIRING))
			.because("lock-core (the API, the annotation, the interceptor) serves every engine, the in-memory one of "
					+ "lock-test included, and works without Boot's auto-configuration")
			.check(CLASSES);
	}

	@Test
	void lockCoreDoesNotDependOnSpringBoot() {
		noClasses().that()
			.resideInAnyPackage(LOCK_CORE)
			.should()
			.dependOnClassesThat()
			.resideInAPackage("org.springframework.boot..")
			.because("lock-core runs in a plain Spring application (@EnableDistributedLocks, the AspectJ mode); "
					+ "only lock-spring-boot-autoconfigure needs Spring Boot")
			.check(CLASSES);
	}

	@Test
	void lockRedisDoesNotDependOnTheBootWiring() {
		noClasses().that()
			.resideInAnyPackage(LOCK_REDIS)
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage(BOOT_WIRING)
			.because("the engines are built with their builders, by the auto-configuration or by hand; they never "
					+ "reach back into the wiring that builds them")
			.check(CLASSES);
	}

	@Test
	void lockRedisDoesNotDependOnSpringBoot() {
		noClasses().that()
			.resideInAnyPackage(LOCK_REDIS)
			.should()
			.dependOnClassesThat()
			.resideInAPackage("org.springframework.boot..")
			.because("lock-redis needs Spring Data Redis only, so an application without Boot can build an engine")
			.check(CLASSES);
	}

	/**
	 * The layer order of today's package graph: each layer uses only the layers listed for it (its own classes
	 * always). Packages outside the layers are not considered.
	 */
	@Test
	void layersUseOnlyTheLayersBelowThem() {
		layeredArchitecture().consideringOnlyDependenciesInLayers()
			.layer("core").definedBy("dev.distlock.core..")
			.layer("annotation").definedBy("dev.distlock.annotation..")
			.layer("reactive").definedBy("dev.distlock.reactive..")
			.layer("observability").definedBy("dev.distlock.observability..")
			.layer("integration").definedBy("dev.distlock.integration..")
			.layer("interceptor").definedBy("dev.distlock.interceptor..")
			.layer("preflight").definedBy("dev.distlock.preflight..")
			.layer("redis").definedBy("dev.distlock.redis..")
			.layer("actuate").definedBy("dev.distlock.actuate..")
			.layer("autoconfigure").definedBy("dev.distlock.autoconfigure..")
			.whereLayer("core").mayNotAccessAnyLayer()
			.whereLayer("annotation").mayOnlyAccessLayers("core")
			.whereLayer("reactive").mayOnlyAccessLayers("core")
			.whereLayer("observability").mayOnlyAccessLayers("core")
			.whereLayer("integration").mayOnlyAccessLayers("core")
			.whereLayer("interceptor").mayOnlyAccessLayers("core", "annotation", "reactive", "observability")
			.whereLayer("preflight").mayOnlyAccessLayers("core")
			.whereLayer("redis").mayOnlyAccessLayers("core", "preflight")
			.whereLayer("actuate").mayOnlyAccessLayers("core", "preflight")
			.whereLayer("autoconfigure").mayNotBeAccessedByAnyLayer()
			.because("each package sees only the ones below it: the API (core) at the bottom, what builds on the API "
					+ "(annotation, reactive, observability, integration) above it, the interceptor above those; the "
					+ "engine (redis, with its preflight checks) beside them on core alone; the Boot wiring on top, "
					+ "used by nothing")
			.check(CLASSES);
	}

	/**
	 * No cycle between the engine's own packages either: the rule above sees {@code dev.distlock.redis} and its
	 * sub-packages as one slice.
	 */
	@Test
	void theEnginesPackagesAreFreeOfCycles() {
		slices().matching("dev.distlock.redis.(**)")
			.should()
			.beFreeOfCycles()
			.because("each of the engine's layers (issue 27) must be readable knowing only the ones below it")
			.check(CLASSES);
	}

	/**
	 * The engine's layers (issue 27, docs/architecture.md "The layers at a glance"), each a package that uses only
	 * the layers listed for it: the scripts and their protocol at the bottom, the store (the one door to Redis) on
	 * them; the engine's threads and the pub/sub connections beside them; the lease core and the waiting side side by
	 * side above the store, neither seeing the other; the single-node and the Redlock engines, siblings on both; the
	 * lock kinds on the single-node engine whose hooks they are; the public entry points ({@code dev.distlock.redis}:
	 * the services and their builders) on top, used by no layer.
	 */
	@Test
	void theEnginesLayersUseOnlyTheLayersBelowThem() {
		layeredArchitecture().consideringOnlyDependenciesInLayers()
			.layer("scripts").definedBy(SCRIPTS)
			.layer("store").definedBy(STORE)
			.layer("support").definedBy(SUPPORT)
			.layer("pub/sub connections").definedBy(PUBSUB)
			.layer("lease core").definedBy(LEASE_CORE)
			.layer("waiting").definedBy(WAITING)
			.layer("single-node engine").definedBy(SINGLE_NODE)
			.layer("Redlock engine").definedBy(REDLOCK)
			.layer("lock kinds").definedBy(KINDS)
			.layer("entry points").definedBy("dev.distlock.redis")
			.whereLayer("scripts").mayNotAccessAnyLayer()
			.whereLayer("support").mayNotAccessAnyLayer()
			.whereLayer("pub/sub connections").mayNotAccessAnyLayer()
			.whereLayer("store").mayOnlyAccessLayers("scripts")
			.whereLayer("lease core").mayOnlyAccessLayers("scripts", "store", "support")
			.whereLayer("waiting").mayOnlyAccessLayers("scripts", "store", "support", "pub/sub connections")
			.whereLayer("single-node engine")
			.mayOnlyAccessLayers("scripts", "store", "support", "lease core", "waiting")
			.whereLayer("Redlock engine").mayOnlyAccessLayers("scripts", "store", "support", "lease core", "waiting")
			.whereLayer("lock kinds")
			.mayOnlyAccessLayers("scripts", "store", "support", "lease core", "waiting", "single-node engine")
			.whereLayer("entry points").mayNotBeAccessedByAnyLayer()
			.because("each layer of the engine is read, tested and changed knowing only the layers below it; the two "
					+ "engines share the lease core and the waiting side and never each other; a lock kind is a "
					+ "strategy on the single-node engine, so a new kind adds a class and its scripts, nothing below")
			.check(CLASSES);
	}

	/**
	 * The pub/sub connection layer ({@code dev.distlock.redis.internal.pubsub}) knows connections and channels only:
	 * it uses nothing else of the engine, so that the waiting side above it (the release subscriber, the channels'
	 * upkeep) and the lease core beside it can change without it, and it can be read on its own.
	 */
	@Test
	void pubSubConnectionLayerDependsOnNothingElseOfTheEngine() {
		noClasses().that()
			.resideInAPackage("dev.distlock.redis.internal.pubsub..")
			.should()
			.dependOnClassesThat(resideInAPackage("dev.distlock.redis..")
				.and(not(resideInAPackage("dev.distlock.redis.internal.pubsub.."))))
			.because("the pub/sub connections sit below the waiters that use them (issue 27's layers): what they need "
					+ "of the engine (its thread maker) is passed in, so they never reach up into it")
			.check(CLASSES);
	}

	/**
	 * The bottom layer of the engine (issue 27): its Lua scripts and their protocol,
	 * {@code dev.distlock.redis.internal.script}, use nothing else of the engine, and no Redis client's own type
	 * (Spring Data Redis's {@code RedisScript} only).
	 */
	@Test
	void theScriptsAndTheirProtocolUseNothingAboveThem() {
		noClasses().that()
			.resideInAPackage(SCRIPTS)
			.should()
			.dependOnClassesThat(resideInAPackage("dev.distlock.redis..").and(not(resideInAPackage(SCRIPTS))))
			.orShould()
			.dependOnClassesThat()
			.resideInAnyPackage("io.lettuce..", "redis.clients..")
			.because("the scripts, their keys, fields and messages are the engine's bottom layer: each layer above "
					+ "uses the ones below it, never the other way round, so the scripts can be read and tested "
					+ "knowing only their own package, on any Redis client")
			.check(CLASSES);
	}

	/**
	 * The store ({@code dev.distlock.redis.internal.store}, issue 27), the one door to Redis, uses of the engine only
	 * the scripts and their protocol below it: not the lease core, the waiters, the lock kinds or the engines above
	 * it, nor the pub/sub connections beside them. What it needs of a lease or an acquisition it reads through its own
	 * views ({@code StoredLease}, {@code StoredAttempt}), which the classes above implement.
	 */
	@Test
	void theStoreUsesOnlyTheScriptsBelowIt() {
		noClasses().that()
			.resideInAPackage(STORE)
			.should()
			.dependOnClassesThat(resideInAPackage("dev.distlock.redis..")
				.and(not(resideInAPackage(STORE)))
				.and(not(resideInAPackage(SCRIPTS))))
			.because("the store sits between the scripts and the lease core (issue 27's layers): each layer uses the "
					+ "ones below it, never the other way round, so that the door to Redis can be read, and changed, "
					+ "knowing only the scripts")
			.check(CLASSES);
	}

	/**
	 * Lettuce's own types ({@code io.lettuce..}) only where Spring Data Redis's abstraction lacks what the engine
	 * needs, each class allowed for its reason; the rest of the engine speaks {@code RedisConnectionFactory}.
	 * {@code RedisEngineRuntimeHints} and {@code RedisErrorClassifier} name client classes too, but as strings (so that
	 * no client class needs to be present): no type dependency, nothing to allow.
	 */
	@Test
	void lettuceTypesAppearOnlyInTheLettuceSpecificClasses() {
		DescribedPredicate<JavaClass> allowed = classNamed(
				// in the store: LettuceWait (WAIT, which Spring Data cannot read), LettuceSharedCommands (the shared
				// native connection's commands, kept between calls), LettuceScripts (scripts straight on Lettuce's
				// async commands), LettuceRenewals (pipelined renewal batches), and in the pub/sub connection layer
				// LettucePubSub (whether the pub/sub transport is up): native calls, each kept apart so that nothing
				// Lettuce-specific loads with another client
				"dev\\.distlock\\.redis\\.internal\\.store\\.Lettuce[A-Za-z]*"
						+ "|dev\\.distlock\\.redis\\.internal\\.pubsub\\.LettucePubSub"
						// sharded pub/sub (SSUBSCRIBE) on a Cluster through Lettuce's cluster pub/sub connection
						+ "|dev\\.distlock\\.redis\\.internal\\.pubsub\\.ShardedSubscriptionConnection",
				"the Lettuce-specific classes")
			// the wiring, which sets the Lettuce client's options of the Redlock nodes' factories
			// (RedlockLockServiceAutoConfiguration), as Boot's own Redis auto-configuration does
			.or(resideInAPackage("dev.distlock.autoconfigure.."));
		noClasses().that()
			.resideInAPackage("dev.distlock..")
			.and(not(allowed))
			.should()
			.dependOnClassesThat()
			.resideInAPackage("io.lettuce..")
			.because("the engine runs on any RedisConnectionFactory, Lettuce's or Jedis's: a Lettuce type elsewhere "
					+ "would fail on Jedis, without Lettuce on the class path")
			.check(CLASSES);
	}

	/**
	 * Jedis's own types ({@code redis.clients..}) likewise. {@code RedisEngineRuntimeHints} and
	 * {@code RedisErrorClassifier} name Jedis classes as strings only: nothing to allow.
	 */
	@Test
	void jedisTypesAppearOnlyInTheJedisSpecificClasses() {
		// sharded pub/sub (SSUBSCRIBE) on a Cluster through Jedis's own connections, one reader per master
		// (JedisShardedSubscriptionConnection), each taken from the cluster client's pool for the slot's master
		// (JedisClusterSlots): the pub/sub connection layer's Jedis classes, loaded only when Jedis is the client
		DescribedPredicate<JavaClass> allowed = classNamed(
				"dev\\.distlock\\.redis\\.internal\\.pubsub\\.Jedis(ShardedSubscriptionConnection|ClusterSlots)",
				"the Jedis-specific classes");
		noClasses().that()
			.resideInAPackage("dev.distlock..")
			.and(not(allowed))
			.should()
			.dependOnClassesThat()
			.resideInAPackage("redis.clients..")
			.because("Jedis is optional: a Jedis type elsewhere would fail on Lettuce, without Jedis on the class "
					+ "path")
			.check(CLASSES);
	}

	/** The top-level classes whose names match {@code regex}, with their nested, inner and anonymous classes. */
	private static DescribedPredicate<JavaClass> classNamed(String regex, String description) {
		return DescribedPredicate.describe(description,
				(javaClass) -> javaClass.getName().matches("(" + regex + ")(\\$.*)?"));
	}

	private static String[] concat(String[] first, String[] second) {
		String[] all = new String[first.length + second.length];
		System.arraycopy(first, 0, all, 0, first.length);
		System.arraycopy(second, 0, all, first.length, second.length);
		return all;
	}

}
