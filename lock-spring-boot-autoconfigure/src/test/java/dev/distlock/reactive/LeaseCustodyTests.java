package dev.distlock.reactive;

import java.lang.reflect.Proxy;

import dev.distlock.core.Lease;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LeaseCustody}'s rule: each lease it admitted is handed out for release exactly once, by the work that claimed
 * it or by the abandonment that came first, and one granted after the custody ended is refused.
 */
class LeaseCustodyTests {

	private final Lease first = lease("a");

	private final Lease second = lease("b");

	@Test
	void theWorkThatClaimedReleasesOnceAndAnAbandonmentAfterwardsReleasesNothing() {
		LeaseCustody custody = new LeaseCustody();
		assertThat(custody.admit(this.first)).isTrue();
		assertThat(custody.admit(this.second)).isTrue();
		assertThat(custody.claim()).containsExactly(this.first, this.second);
		assertThat(custody.abandon()).isEmpty();
		assertThat(custody.end()).containsExactly(this.first, this.second);
		assertThat(custody.end()).isEmpty();
	}

	@Test
	void anAbandonmentBeforeTheClaimReleasesAllAndTheWorkDoesNotRun() {
		LeaseCustody custody = new LeaseCustody();
		assertThat(custody.admit(this.first)).isTrue();
		assertThat(custody.abandon()).containsExactly(this.first);
		assertThat(custody.claim()).isNull();
		assertThat(custody.end()).isEmpty();
		assertThat(custody.abandon()).isEmpty();
	}

	@Test
	void aGrantAfterTheCustodyEndedOrWasClaimedIsRefused() {
		LeaseCustody abandoned = new LeaseCustody();
		abandoned.abandon();
		assertThat(abandoned.admit(this.first)).isFalse();
		LeaseCustody claimed = new LeaseCustody();
		claimed.claim();
		assertThat(claimed.admit(this.second)).isFalse();
		assertThat(claimed.end()).isEmpty();
	}

	private static Lease lease(String key) {
		return (Lease) Proxy.newProxyInstance(Lease.class.getClassLoader(), new Class<?>[] { Lease.class },
				(proxy, method, args) -> switch (method.getName()) {
					case "key", "toString" -> key;
					case "hashCode" -> System.identityHashCode(proxy);
					case "equals" -> proxy == args[0];
					default -> throw new UnsupportedOperationException(method.getName());
				});
	}

}
