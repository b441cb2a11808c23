package dev.distlock.redis;

import java.util.EnumSet;

import dev.distlock.core.LockMode;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The kind each {@link LockMode} gets ({@link LockKind#of}) and what the shared code asks of it: a wrong mapping, or a
 * kind that answers for another, changes which scripts run and who may take a released lease, which these pin
 * without Redis.
 */
class LockKindTests {

	@Test
	void eachModeHasItsOwnKind() {
		assertThat(LockKind.of(LockMode.EXCLUSIVE)).isSameAs(ExclusiveKind.INSTANCE);
		assertThat(LockKind.of(LockMode.FAIR)).isSameAs(FairKind.INSTANCE);
		assertThat(LockKind.of(LockMode.READ)).isSameAs(ReadKind.INSTANCE);
		assertThat(LockKind.of(LockMode.WRITE)).isSameAs(WriteKind.INSTANCE);
		for (LockMode mode : EnumSet.allOf(LockMode.class)) {
			assertThat(LockKind.of(mode).mode()).isEqualTo(mode);
		}
	}

	@Test
	void onlyAnExclusiveReleaseHandsTheLeaseToAWaitingThreadOfThisProcess() {
		assertThat(LockKind.of(LockMode.EXCLUSIVE).handsOverLocally()).isTrue();
		assertThat(LockKind.of(LockMode.FAIR).handsOverLocally()).isFalse(); // it would jump the queue
		assertThat(LockKind.of(LockMode.READ).handsOverLocally()).isFalse();
		assertThat(LockKind.of(LockMode.WRITE).handsOverLocally()).isFalse();
	}

	@Test
	void readWriteHoldsAreRenewedByTheirOwnScriptInBatchesApart() {
		assertThat(LockKind.of(LockMode.EXCLUSIVE).renewAllScript()).isSameAs(LockScripts.RENEW_ALL);
		assertThat(LockKind.of(LockMode.FAIR).renewAllScript()).isSameAs(LockScripts.RENEW_ALL);
		assertThat(LockKind.of(LockMode.READ).renewAllScript()).isSameAs(ReadWriteScripts.RENEW_ALL);
		assertThat(LockKind.of(LockMode.WRITE).renewAllScript()).isSameAs(ReadWriteScripts.RENEW_ALL);
	}

	@Test
	void onlyAFairOwnerIsDiscardedByLeavingItsQueue() {
		assertThat(LockKind.of(LockMode.FAIR).queued()).isTrue();
		assertThat(LockKind.of(LockMode.EXCLUSIVE).queued()).isFalse();
		assertThat(LockKind.of(LockMode.READ).queued()).isFalse();
		assertThat(LockKind.of(LockMode.WRITE).queued()).isFalse();
	}

	@Test
	void onlyAReaderThatGotInLetsTheOtherWaitersOfThisProcessIn() {
		assertThat(LockKind.of(LockMode.READ).admitsOthers()).isTrue();
		assertThat(LockKind.of(LockMode.WRITE).admitsOthers()).isFalse();
		assertThat(LockKind.of(LockMode.EXCLUSIVE).admitsOthers()).isFalse();
		assertThat(LockKind.of(LockMode.FAIR).admitsOthers()).isFalse();
	}

	@Test
	void readWriteKindsActForTheirSideInTheScripts() {
		assertThat(((ReadWriteKind) LockKind.of(LockMode.WRITE)).writer()).isTrue();
		assertThat(((ReadWriteKind) LockKind.of(LockMode.READ)).writer()).isFalse();
	}

	@Test
	void aLeaseEntryCarriesTheKindOfItsMode() {
		LeaseEntry entry = new LeaseEntry("k", "lock:{k}", "lock:{k}:released", "client:1", "name", 42, 600, true,
				System.nanoTime(), 0);
		assertThat(entry.kind).isSameAs(ExclusiveKind.INSTANCE);
	}

}
