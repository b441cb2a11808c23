package dev.distlock.reactive

import dev.distlock.annotation.DistributedLock
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration
import dev.distlock.autoconfigure.ReactiveLockServiceAutoConfiguration
import dev.distlock.autoconfigure.RedisLockServiceAutoConfiguration
import dev.distlock.core.AsyncLockService
import dev.distlock.core.LockOperatorView
import dev.distlock.core.LockRequest
import dev.distlock.core.LockService
import dev.distlock.test.redis.RedisServer
import dev.distlock.test.redis.RedisServerExtension
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.reactor.awaitSingle
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.junit.jupiter.api.extension.ExtendWith
import org.springframework.aop.support.AopUtils
import org.springframework.boot.autoconfigure.AutoConfigurations
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration
import org.springframework.boot.test.context.assertj.AssertableApplicationContext
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.TimeUnit

/**
 * `@DistributedLock` on Kotlin `suspend` functions: Spring's proxies hand the interceptor the call as a Publisher
 * and await what it returns, so the reactive path locks them, with the owner in the Reactor context the coroutine
 * carries (re-entry within one coroutine, none between coroutines).
 */
@ExtendWith(RedisServerExtension::class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CoroutineLockIntegrationTests {

	companion object {

		private lateinit var redis: RedisServer

		@JvmStatic
		@BeforeAll
		fun server(server: RedisServer) {
			redis = server
		}

		private const val CALLS = 100

	}

	@BeforeEach
	fun flush() {
		redis.execute("FLUSHALL")
		Counter.values.clear()
	}

	private fun run(test: (AssertableApplicationContext) -> Unit) {
		runner().run { context -> test(context) }
	}

	private fun runner(): ApplicationContextRunner =
		ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration::class.java,
					DataRedisAutoConfiguration::class.java, RedisLockServiceAutoConfiguration::class.java,
					DistributedLockAutoConfiguration::class.java, ReactiveLockServiceAutoConfiguration::class.java))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
					"spring.data.redis.timeout=2s")
			.withBean(Counter::class.java)
			.withBean(Inner::class.java)
			.withBean(Outer::class.java)

	@Test
	fun `a locked suspend function loses no update under concurrency`() = run { context ->
		val counter = context.getBean(Counter::class.java)
		assertThat(AopUtils.isAopProxy(counter)).isTrue()
		runBlocking {
			withTimeout(60_000) {
				coroutineScope {
					repeat(CALLS) { launch(Dispatchers.Default) { counter.increment("visits") } }
				}
			}
		}
		assertThat(Counter.values["visits"]).isEqualTo(CALLS)
		assertThat(context.getBean(LockService::class.java).isLocked("counter:visits")).isFalse()
	}

	@Test
	fun `the same suspend function without the lock loses updates`() = run { context ->
		val counter = context.getBean(Counter::class.java)
		runBlocking {
			withTimeout(60_000) {
				coroutineScope {
					repeat(CALLS) { launch(Dispatchers.Default) { counter.incrementUnlocked("visits") } }
				}
			}
		}
		assertThat(Counter.values["visits"]).isLessThan(CALLS)
	}

	@Test
	fun `a nested locked suspend call re-enters within one coroutine`() = run { context ->
		EngineSupport.assumeReEntryByOwner(context.getBean(LockService::class.java))
		val outer = context.getBean(Outer::class.java)
		val (outerToken, innerToken) = runBlocking { withTimeout(30_000) { outer.run("o-1") } }
		assertThat(innerToken).isEqualTo(outerToken)
		assertThat(context.getBean(LockService::class.java).isLocked("order:o-1")).isFalse()
	}

	@Test
	fun `a suspend call cancelled as its lease is granted leaves no hold`() {
		// instance A holds the key; instance B's call waits for it and is cancelled on the thread that delivers its
		// grant, after the engine granted it and before the function got it (GrantWindow): the race, made deterministic
		val window = GrantWindow()
		ReactiveLockServiceIntegrationTests.runner(redis).run { a ->
			runner().withBean(GrantWindow::class.java, { window }).withUserConfiguration(WindowedLocks::class.java)
				.run { b ->
					val view = b.getBean(LockOperatorView::class.java)
					val held = a.getBean(LockService::class.java)
						.acquire(LockRequest.of("counter:race", Duration.ofSeconds(30), Duration.ZERO))
					val counter = b.getBean(Counter::class.java)
					runBlocking {
						val call = launch(Dispatchers.Default) { counter.increment("race") }
						await().atMost(Duration.ofSeconds(10)).until { view.waitingThreads() == 1 }
						window.cancelAtGrant { call.cancel() }
						held.release()
						window.awaitCancelled()
						withTimeout(10_000) { call.join() }
						assertThat(call.isCancelled).isTrue()
					}
					GrantWindow.assertNothingHeld(redis, view, "counter:race")
					assertThat(Counter.values["race"]).isNull()
				}
		}
	}

	@Configuration(proxyBeanMethods = false)
	open class WindowedLocks {

		@Bean
		open fun reactiveLockService(window: GrantWindow, service: LockService): ReactiveLockService =
			window.locks(service as AsyncLockService)

	}

	open class Counter {

		companion object {
			// not a field of the bean: the test holds the proxy, whose fields are not the target's
			val values = ConcurrentHashMap<String, Int>()
		}

		@DistributedLock(key = "'counter:' + #name", waitTime = "60s")
		open suspend fun increment(name: String): Int = incrementUnlocked(name)

		/** Read, suspend, write what was read plus one: two callers in between lose an update. */
		open suspend fun incrementUnlocked(name: String): Int {
			val value = values[name] ?: 0
			delay(2)
			values[name] = value + 1
			return value + 1
		}

	}

	open class Inner {

		@DistributedLock(key = "'order:' + #id", waitTime = "0")
		open suspend fun token(id: String): Long = ReactiveLockService.currentLease().awaitSingle().fencingToken()

	}

	open class Outer(private val inner: Inner) {

		@DistributedLock(key = "'order:' + #id", waitTime = "0")
		open suspend fun run(id: String): Pair<Long, Long> {
			val outerToken = ReactiveLockService.currentLease().awaitSingle().fencingToken()
			delay(1) // resumes on another thread: the owner follows the coroutine, not the thread
			return outerToken to inner.token(id)
		}

	}

}
