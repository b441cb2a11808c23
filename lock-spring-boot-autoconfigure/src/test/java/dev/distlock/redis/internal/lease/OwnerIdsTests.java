package dev.distlock.redis.internal.lease;

import java.util.Base64;
import java.util.HashSet;
import java.util.Set;

import dev.distlock.redis.internal.script.FairScripts;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Owner ids of the Redis engines (issue 29): one id, seen in a log line or by a client of Redis, tells nothing of the
 * instance's next ones. They were {@code <client id>:<thread id>:<sequence>}, so the next id of a thread was the seen
 * one plus one.
 */
class OwnerIdsTests {

	private static final String CLIENT_ID = "LomcCRO0AJhS3cHP08s3zA";

	private final OwnerIds ownerIds = new OwnerIds(CLIENT_ID);

	@Test
	void successiveIdsOfOneThreadAreTheClientIdAndAFreshRandomPartOf128Bits() {
		String first = this.ownerIds.next();
		String second = this.ownerIds.next();

		assertThat(first).startsWith(CLIENT_ID + ":").isNotEqualTo(second);
		assertThat(second).startsWith(CLIENT_ID + ":");
		byte[] firstBits = randomBits(first);
		byte[] secondBits = randomBits(second);
		assertThat(firstBits).hasSize(16); // at least 64 bits, as asked; 128 keep ids from ever repeating
		assertThat(secondBits).hasSize(16).isNotEqualTo(firstBits);
		// nothing of the old form, <client id>:<thread id>:<sequence>: two parts only, the second random
		assertThat(first.split(":")).hasSize(2);
		assertThat(second.split(":")).hasSize(2);
		assertThat(first.substring(CLIENT_ID.length() + 1)).hasSize(22);
		assertThat(second).doesNotContain(":" + Thread.currentThread().getId() + ":");
	}

	@Test
	void successiveIdsDifferInAboutHalfTheirBitsAsIndependentRandomNumbersDo() {
		// a counter, a clock or a weak generator would leave successive ids a few bits apart; independent random parts
		// differ in 64 of 128 bits on average (a standard deviation of 5.7 per pair, 0.18 over 1,000 pairs)
		int pairs = 1_000;
		long differing = 0;
		byte[] previous = randomBits(this.ownerIds.next());
		for (int i = 0; i < pairs; i++) {
			byte[] next = randomBits(this.ownerIds.next());
			for (int b = 0; b < next.length; b++) {
				differing += Integer.bitCount((previous[b] ^ next[b]) & 0xff);
			}
			previous = next;
		}
		assertThat((double) differing / pairs).isBetween(60.0, 68.0);
	}

	@Test
	void idsAreNeverRepeated() {
		Set<String> seen = new HashSet<>();
		for (int i = 0; i < 100_000; i++) {
			assertThat(seen.add(this.ownerIds.next())).isTrue();
		}
	}

	@Test
	void theFairHandOverStillFindsTheProcessByTheClientIdInFront() {
		// FAIR_RELEASE publishes the hand-over on <channel>:<what precedes the first ':' of the new owner's id>
		assertThat(FairScripts.handOverChannel("lock:{k}:released", this.ownerIds.next()))
			.isEqualTo("lock:{k}:released:" + CLIENT_ID);
	}

	@Test
	void theRandomPartHasNeitherAColonNorALeadingTildeOfTheLeaseHashsOwnFields() {
		for (int i = 0; i < 10_000; i++) {
			String part = OwnerIds.randomPart();
			assertThat(part).doesNotContain(":").doesNotStartWith("~").matches("[A-Za-z0-9_-]{22}");
		}
	}

	@Test
	void costPerIdIsPrintedAsASanityCheck() {
		// not an assertion (the machine may be busy): a Redis round trip costs ~100 µs, an id should cost ~1 µs
		OwnerIds ids = new OwnerIds(CLIENT_ID);
		int warmUp = 50_000;
		int measured = 200_000;
		int sink = 0;
		for (int i = 0; i < warmUp; i++) {
			sink += ids.next().length();
		}
		long start = System.nanoTime();
		for (int i = 0; i < measured; i++) {
			sink += ids.next().length();
		}
		long nanos = System.nanoTime() - start;
		System.out.printf("OwnerIds.next(): %.0f ns per id over %d ids (%d chars)%n", (double) nanos / measured, measured,
				sink / (warmUp + measured));
		assertThat(sink).isPositive();
	}

	private static byte[] randomBits(String ownerId) {
		return Base64.getUrlDecoder().decode(ownerId.substring(ownerId.indexOf(':') + 1));
	}

}
