package dev.distlock.test.redis;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SharedRedisServerTest {

	@Test
	void sharedServerIsOnePerJvmAndSurvivesCloseStopAndPause() {
		RedisServer shared = RedisServer.shared();
		int port = shared.port();
		assertThat(RedisServer.shared()).isSameAs(shared);

		shared.close();
		assertThat(shared.isRunning()).isTrue();

		shared.stop();
		assertThat(RedisServer.shared()).isSameAs(shared);
		assertThat(shared.isRunning()).isTrue();
		assertThat(shared.port()).isEqualTo(port);

		shared.pause();
		assertThat(RedisServer.shared().isPaused()).isFalse();
		assertThat(shared.execute("PING")).isEqualTo("PONG");
	}
}
