package dev.distlock.redis.internal.kind;

import java.util.EnumSet;

import dev.distlock.core.LockMode;
import dev.distlock.redis.internal.script.LockScripts;
import dev.distlock.redis.internal.script.ReadWriteScripts;
import dev.distlock.redis.internal.single.LeaseEntry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The kind each {@link LockMode} gets ({@link LockKinds#of}) and what the shared code asks of it: a wrong mapping, or a
 * kind that answers for another, changes which scripts run and who may take a released lease, which these pin
 * without Redis.
 */
class LockKindTests {

	@Test
	void eachModeHasItsOwnKind() {
		assertThat(LockKinds.of(LockMode.EXCLUSIVE)).isSameAs(ExclusiveKind.INSTANCE);
		assertThat(LockKinds.of(LockMode.FAIR)).isSameAs(FairKind.INSTANCE);
		assertThat(LockKinds.of(LockMode.READ)).isSameAs(ReadKind.INSTANCE);
		assertThat(LockKinds.of(LockMode.WRITE)).isSameAs(WriteKind.INSTANCE);
		for (LockMode mode : EnumSet.allOf(LockMode.class)) {
			assertThat(LockKinds.of(mode).mode()).isEqualTo(mode);
		}
	}

	@Test
	void onlyAnExclusiveReleaseHandsTheLeaseToAWaitingThreadOfThisProcess() {
		assertThat(LockKinds.of(LockMode.EXCLUSIVE).handsOverLocally()).isTrue();
		assertThat(LockKinds.of(LockMode.FAIR).handsOverLocally()).isFalse(); // it would jump the queue
		assertThat(LockKinds.of(LockMode.READ).handsOverLocally()).isFalse();
		assertThat(LockKinds.of(LockMode.WRITE).handsOverLocally()).isFalse();
	}

	@Test
	void readWriteHoldsAreRenewedByTheirOwnScriptInBatchesApart() {
		assertThat(LockKinds.of(LockMode.EXCLUSIVE).renewAllScript()).isSameAs(LockScripts.RENEW_ALL);
		assertThat(LockKinds.of(LockMode.FAIR).renewAllScript()).isSameAs(LockScripts.RENEW_ALL);
		assertThat(LockKinds.of(LockMode.READ).renewAllScript()).isSameAs(ReadWriteScripts.RENEW_ALL);
		assertThat(LockKinds.of(LockMode.WRITE).renewAllScript()).isSameAs(ReadWriteScripts.RENEW_ALL);
	}

	@Test
	void onlyAFairOwnerIsDiscardedByLeavingItsQueue() {
		assertThat(LockKinds.of(LockMode.FAIR).queued()).isTrue();
		assertThat(LockKinds.of(LockMode.EXCLUSIVE).queued()).isFalse();
		assertThat(LockKinds.of(LockMode.READ).queued()).isFalse();
		assertThat(LockKinds.of(LockMode.WRITE).queued()).isFalse();
	}

	@Test
	void onlyAReaderThatGotInLetsTheOtherWaitersOfThisProcessIn() {
		assertThat(LockKinds.of(LockMode.READ).admitsOthers()).isTrue();
		assertThat(LockKinds.of(LockMode.WRITE).admitsOthers()).isFalse();
		assertThat(LockKinds.of(LockMode.EXCLUSIVE).admitsOthers()).isFalse();
		assertThat(LockKinds.of(LockMode.FAIR).admitsOthers()).isFalse();
	}

	@Test
	void readWriteKindsActForTheirSideInTheScripts() {
		assertThat(((ReadWriteKind) LockKinds.of(LockMode.WRITE)).writer()).isTrue();
		assertThat(((ReadWriteKind) LockKinds.of(LockMode.READ)).writer()).isFalse();
	}

	@Test
	void aLeaseEntryCarriesItsKindAndTheKindsMode() {
		LeaseEntry entry = new LeaseEntry("k", "lock:{k}", "lock:{k}:released", "client:1", "name", 42, 600, true,
				System.nanoTime(), 0, LockKinds.of(LockMode.READ));
		assertThat(entry.kind).isSameAs(ReadKind.INSTANCE);
		assertThat(entry.lockMode()).isEqualTo(LockMode.READ);
	}

}
