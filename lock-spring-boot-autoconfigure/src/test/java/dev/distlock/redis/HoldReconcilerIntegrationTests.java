package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.distlock.core.LockAccessDeniedException;
import dev.distlock.core.LockUnavailableException;
import dev.distlock.observability.LockMetrics;
import dev.distlock.preflight.LockPreflight;
import dev.distlock.test.redis.FaultProxy;
import dev.distlock.test.redis.RedisServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The reconciler deletes holds Redis may have unknown to the client, and no others, and never without end: a call
 * Redis answered with an error is not an unanswered one (nothing is handed to the reconciler for it), a discard Redis
 * refuses for good ends at once, and one Redis never answers ends with its lease time. Redis's own command counts
 * ({@code INFO commandstats}) show that the scripts stop.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HoldReconcilerIntegrationTests extends OneServerFixture {

	private static final String PREFIX = "lock";

	private static final String USER = "reconciled";

	private static final Duration DEADLINE = Duration.ofSeconds(30);

	/** Longer than the reconciler's longest backoff (2 s) with its jitter: a discard still retrying shows within it. */
	private static final Duration QUIET = Duration.ofMillis(2_500);

	private static final Pattern CALLS = Pattern.compile("(?:^|,)(?:rejected_)?calls=(\\d+)");

	private final List<LettuceConnectionFactory> factories = new CopyOnWriteArrayList<>();

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private FaultProxy proxy;

	@AfterEach
	void closeOwn() {
		this.factories.forEach(LettuceConnectionFactory::destroy);
		if (this.proxy != null) {
			this.proxy.close();
		}
		this.server.execute("ACL", "DELUSER", USER);
	}

	@Test
	void anAcquisitionRefusedWithWrongTypeFailsNamingTheKeyAndLeavesNothingToReconcile() {
		RedisLockService service = this.support.service();
		// another library's value where the lease would be: every lease script meets WRONGTYPE
		this.server.execute("SET", service.redisKey("foreign"), "not a lease");
		for (int i = 0; i < 5; i++) {
			assertThatExceptionOfType(LockUnavailableException.class)
				.isThrownBy(() -> service.tryAcquire("foreign", Duration.ofSeconds(30), Duration.ZERO))
				.withMessageContaining("'foreign'")
				.withMessageContaining("WRONGTYPE")
				.withMessageContaining("the key '" + service.redisKey("foreign") + "' holds a value of another type")
				.withMessageNotContaining("did not answer");
		}
		assertThat(service.reconciler().pending()).as("discards pending for calls Redis answered").isZero();
		assertScriptsStop();
		assertThat(this.server.execute("GET", service.redisKey("foreign"))).isEqualTo("not a lease");
	}

	@Test
	void anAcquisitionWhoseScriptsTheAclRevokedFailsAndLeavesNothingToReconcile() {
		createUser(LockPreflight.minimalAcl(PREFIX));
		RedisLockService service = this.support.service(RedisLockService.builder(factory(this.server.host(),
				this.server.port(), Duration.ofSeconds(2))));
		service.acquire("revoked", Duration.ofSeconds(30), Duration.ZERO).release();
		this.server.execute("ACL", "SETUSER", USER, "-evalsha", "-eval");
		for (int i = 0; i < 5; i++) {
			assertThatExceptionOfType(LockAccessDeniedException.class)
				.isThrownBy(() -> service.tryAcquire("revoked", Duration.ofSeconds(30), Duration.ZERO))
				.withMessageContaining("'revoked'");
		}
		assertThat(service.reconciler().pending()).as("discards pending for calls Redis refused").isZero();
		assertScriptsStop();
	}

	@Test
	void aCommandRefusedInsideTheScriptAfterItsWriteStillLeavesNoHoldBehind() {
		// PEXPIRE comes after the HSET that creates a new lease: Redis answered, but the script wrote before
		createUser(LockPreflight.minimalAcl(PREFIX).replace(" +pexpire", ""));
		RedisLockService service = this.support.service(RedisLockService.builder(factory(this.server.host(),
				this.server.port(), Duration.ofSeconds(2))));
		assertThatExceptionOfType(LockAccessDeniedException.class)
			.isThrownBy(() -> service.tryAcquire("part-way", Duration.ofSeconds(30), Duration.ZERO))
			.withMessageContaining("'part-way'");
		await().atMost(DEADLINE).until(() -> Long.valueOf(0).equals(this.server.execute("EXISTS",
				service.redisKey("part-way"))));
		await().atMost(DEADLINE).until(() -> service.reconciler().pending() == 0);
	}

	@Test
	void aDiscardRedisRefusesForGoodEndsAtOnceWithOneWarningAndTheMeter(CapturedOutput output) {
		createUser(LockPreflight.minimalAcl(PREFIX));
		this.proxy = FaultProxy.to(this.server);
		RedisLockService service = this.support.service(RedisLockService.builder(factory(this.proxy.host(),
				this.proxy.port(), Duration.ofMillis(500))).listener(new LockMetrics(this.meters)));
		// an acquisition whose reply is lost: its discard is pending, and each of its tries loses its reply too
		this.proxy.dropReplies();
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> service.tryAcquire("refused", Duration.ofSeconds(60), Duration.ZERO));
		assertThat(service.reconciler().pending()).isEqualTo(1);
		// then the ACL loses the scripts: once replies come again, Redis refuses the discard, for good
		this.server.execute("ACL", "SETUSER", USER, "-evalsha", "-eval");
		this.proxy.heal();
		await().atMost(DEADLINE).until(() -> service.reconciler().pending() == 0);
		assertScriptsStop();
		assertThat(abandoned("refused")).isEqualTo(1);
		assertThat(abandoned("expired")).isZero();
		assertThat(output.getOut().lines().filter((line) -> line.contains("WARN")
				&& line.contains("Redis refused to delete a hold of lock 'refused'"))).hasSize(1);
		assertThat(output).contains("+evalsha");
	}

	@Test
	void aDiscardRedisNeverAnswersEndsWithItsLeaseTime(CapturedOutput output) {
		this.proxy = FaultProxy.to(this.server);
		RedisLockService service = this.support.service(RedisLockService.builder(factory(this.proxy.host(),
				this.proxy.port(), Duration.ofMillis(500))).listener(new LockMetrics(this.meters)));
		this.proxy.dropReplies();
		assertThatExceptionOfType(LockUnavailableException.class)
			.isThrownBy(() -> service.tryAcquire("unanswered", Duration.ofMillis(1_500), Duration.ZERO));
		assertThat(service.reconciler().pending()).isEqualTo(1);
		// Redis runs every try, but no reply comes back: after the lease time the hold is gone by itself
		await().atMost(DEADLINE).until(() -> service.reconciler().pending() == 0);
		assertScriptsStop();
		assertThat(abandoned("expired")).isEqualTo(1);
		assertThat(abandoned("refused")).isZero();
		assertThat(output).contains("Gave up deleting a hold of lock 'unanswered'");
	}

	private double abandoned(String reason) {
		return this.meters.get(LockMetrics.DISCARDS_ABANDONED).tag("reason", reason).counter().count();
	}

	private void createUser(String acl) {
		List<String> command = new java.util.ArrayList<>(List.of("ACL", "SETUSER", USER, "reset", "resetchannels", "on", ">pw"));
		command.addAll(List.of(acl.trim().split("\\s+")));
		this.server.execute(command.toArray(new String[0]));
	}

	/** A factory on {@code host:port} as the test's user when it exists, else the default user. */
	private LettuceConnectionFactory factory(String host, int port, Duration commandTimeout) {
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(host, port);
		Object users = this.server.execute("ACL", "USERS");
		if (String.valueOf(users).contains(USER)) {
			configuration.setUsername(USER);
			configuration.setPassword("pw");
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build());
		factory.afterPropertiesSet();
		factory.start();
		this.factories.add(factory);
		return factory;
	}

	/** Script calls Redis ran or refused stay where they are for longer than a retrying discard waits. */
	private void assertScriptsStop() {
		long calls = scriptCalls(this.server);
		await().during(QUIET).atMost(QUIET.multipliedBy(3)).until(() -> scriptCalls(this.server) == calls);
	}

	/** EVAL and EVALSHA calls Redis ran or refused ({@code calls} and {@code rejected_calls} of both). */
	static long scriptCalls(RedisServer server) {
		String stats = String.valueOf(server.execute("INFO", "commandstats"));
		return stats.lines()
			.filter((line) -> line.startsWith("cmdstat_eval:") || line.startsWith("cmdstat_evalsha:"))
			.mapToLong((line) -> {
				long sum = 0;
				Matcher matcher = CALLS.matcher(line.substring(line.indexOf(':') + 1));
				while (matcher.find()) {
					sum += Long.parseLong(matcher.group(1));
				}
				return sum;
			})
			.sum();
	}

}
