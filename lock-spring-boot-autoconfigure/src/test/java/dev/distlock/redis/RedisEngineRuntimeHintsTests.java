package dev.distlock.redis;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import dev.distlock.redis.internal.script.LuaSource;
import dev.distlock.redis.internal.script.ScriptCommands;
import dev.distlock.redis.internal.store.ClientTypes;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisCluster;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/** The engine's runtime hints, each checked against what the engine looks up at run time. */
class RedisEngineRuntimeHintsTests {

	private final RuntimeHints hints = new RuntimeHints();

	RedisEngineRuntimeHintsTests() {
		new RedisEngineRuntimeHints().registerHints(this.hints, getClass().getClassLoader());
	}

	@Test
	void theClientsLookedUpByNameAreRegistered() {
		for (String client : new String[] { RedisEngineRuntimeHints.LETTUCE_TYPE, RedisEngineRuntimeHints.JEDIS_TYPE }) {
			assertThat(ClassUtils.isPresent(client, getClass().getClassLoader())).as(client).isTrue();
			assertThat(this.hints).as(client).matches(RuntimeHintsPredicates.reflection().onType(TypeReference.of(client)));
		}
	}

	/** The store looks the clients up by the same names (it may not use the pub/sub layer's, beside it). */
	@Test
	void theStoreLooksUpTheRegisteredClients() {
		assertThat(ClientTypes.LETTUCE_TYPE).isEqualTo(RedisEngineRuntimeHints.LETTUCE_TYPE);
		assertThat(ClientTypes.JEDIS_TYPE).isEqualTo(RedisEngineRuntimeHints.JEDIS_TYPE);
	}

	/** By name: Jedis 7.0 (Spring Boot 4.0's) has no {@code RedisClusterClient}. */
	@Test
	void theMethodTheShardedSubscriptionFindsOnEachJedisClusterClientMayBeInvoked() throws Exception {
		assertThat(RedisEngineRuntimeHints.JEDIS_CLUSTER_CLIENTS).contains(JedisCluster.class.getName());
		for (String name : RedisEngineRuntimeHints.JEDIS_CLUSTER_CLIENTS) {
			if (!ClassUtils.isPresent(name, getClass().getClassLoader())) {
				continue;
			}
			Class<?> client = ClassUtils.forName(name, getClass().getClassLoader());
			Method method = client.getMethod(RedisEngineRuntimeHints.CONNECTION_FROM_SLOT, int.class);
			assertThat(method.getDeclaringClass()).as("declared by the client itself").isEqualTo(client);
			assertThat(this.hints).as(client.getName())
				.matches(RuntimeHintsPredicates.reflection().onMethodInvocation(method));
		}
	}

	/**
	 * Every {@code .lua} file of the scripts' folder, which the scripts' classes read when they initialize (here:
	 * before the folder is listed), is a registered resource.
	 */
	@Test
	void theLuaScriptsAreRegisteredResources() throws Exception {
		assertThat(ScriptCommands.SCRIPTS).isNotEmpty();
		// listed through Spring's resolver, which reads a class folder and a jar alike (in `mvn verify` lock-redis is
		// its jar on this class path, in an IDE or `mvn test` its target/classes)
		Resource[] found = new PathMatchingResourcePatternResolver(getClass().getClassLoader())
			.getResources("classpath*:" + LuaSource.LOCATION + "*.lua");
		List<String> scripts = Arrays.stream(found).map(Resource::getFilename).filter(Objects::nonNull).toList();
		assertThat(scripts).contains("prelude.lua", "lock-acquire.lua", "fair-release.lua", "read-write-acquire.lua",
				"listing-describe.lua");
		for (String script : scripts) {
			assertThat(this.hints).as(script)
				.matches(RuntimeHintsPredicates.resource().forResource(LuaSource.LOCATION + script));
		}
		assertThat(this.hints).as("not a script")
			.doesNotMatch(RuntimeHintsPredicates.resource().forResource(LuaSource.LOCATION + "LuaSource.class"));
	}

	@Test
	void springsAotFindsTheRegistrarInAotFactories() {
		assertThat(AotServices.factories().load(RuntimeHintsRegistrar.class))
			.hasAtLeastOneElementOfType(RedisEngineRuntimeHints.class);
	}

}
