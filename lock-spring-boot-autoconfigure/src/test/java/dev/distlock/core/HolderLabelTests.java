package dev.distlock.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The holder label that log lines and messages name a lease's holder by, instead of its owner id (issue 29).
 */
class HolderLabelTests {

	private static final String OWNER_ID = "LomcCRO0AJhS3cHP08s3zA:Xq3u7-0eWb1FvY2sJmN5kA";

	@Test
	void itsOneLineFormIsApplicationAtInstanceAndTheOwnersDescription() {
		assertThat(new HolderLabel("inventory", "pod-7", "thread \"http-nio-8080-exec-3\""))
			.hasToString("inventory@pod-7 thread \"http-nio-8080-exec-3\"");
		assertThat(new HolderLabel("inventory", "pod-7", "async InventoryService.reserve"))
			.hasToString("inventory@pod-7 async InventoryService.reserve");
	}

	@Test
	void itsOneLineFormEscapesLineBreaksOfAnyPart() {
		HolderLabel label = new HolderLabel("inv\nentory", "pod\r7", "thread \"a\nWARN forged\"");
		assertThat(label).hasToString("inv\\nentory@pod\\r7 thread \"a\\nWARN forged\"");
		assertThat(label.application()).isEqualTo("inv\nentory");
	}

	@Test
	void noPartMayBeBlank() {
		assertThatIllegalArgumentException().isThrownBy(() -> new HolderLabel(" ", "pod-7", "async"));
		assertThatIllegalArgumentException().isThrownBy(() -> new HolderLabel("inventory", "", "async"));
		assertThatIllegalArgumentException().isThrownBy(() -> new HolderLabel("inventory", "pod-7", "\t"));
	}

	@Test
	void aThreadsOwnerIsDescribedByItsThreadsNameAsItIsWhenAsked() throws Exception {
		LockOwner[] owner = new LockOwner[1];
		Thread thread = new Thread(() -> owner[0] = LockOwner.current(), "http-nio-8080-exec-3");
		thread.start();
		thread.join(TimeUnit.SECONDS.toMillis(10));
		// described from any thread: the owner's thread is named, not the caller's
		assertThat(owner[0].description()).isEqualTo("thread \"http-nio-8080-exec-3\"");
		thread.setName("renamed");
		assertThat(owner[0].description()).isEqualTo("thread \"renamed\"");
		assertThat(HolderLabel.of("inventory", "pod-7", owner[0])).hasToString("inventory@pod-7 thread \"renamed\"");
	}

	@Test
	void aThreadWithoutANameIsDescribedByItsId() throws Exception {
		// as a virtual thread is unless it was given a name
		LockOwner[] owner = new LockOwner[1];
		Thread thread = new Thread(() -> owner[0] = LockOwner.current(), "");
		thread.start();
		thread.join(TimeUnit.SECONDS.toMillis(10));
		assertThat(owner[0].description()).isEqualTo("thread #" + thread.getId());
	}

	@Test
	void anOwnerOfItsOwnIsDescribedAsGivenElseAsAsync() {
		assertThat(LockOwner.newOwner().description()).isEqualTo("async");
		assertThat(LockOwner.newOwner("reactive InventoryService.reserve").description())
			.isEqualTo("reactive InventoryService.reserve");
		assertThatIllegalArgumentException().isThrownBy(() -> LockOwner.newOwner(" "));
	}

	@Test
	void theHostNameIsFoundQuicklyAndNeverBlank() throws Exception {
		String name = CompletableFuture.supplyAsync(HolderLabel::hostName).get(5, TimeUnit.SECONDS);
		assertThat(name).isNotBlank().isEqualTo(HolderLabel.hostName());
		assertThat(HolderLabel.unknown().instance()).isEqualTo(name);
	}

	@Test
	void aLostLeaseIsToldWithTheHolderLabelAndWithoutItsOwnerId() {
		HolderLabel holder = new HolderLabel("inventory", "pod-7", "thread \"http-nio-8080-exec-3\"");
		LockLostEvent event = new LockLostEvent("sku:42", "inventory", OWNER_ID, 7,
				LockLostEvent.Detection.RENEWAL_FOUND_GONE, Instant.EPOCH, holder);
		LockLostException lost = new LockLostException(event);

		assertThat(lost.getMessage()).isEqualTo("Lock 'sku:42' (fencing token 7) was lost while held by "
				+ "inventory@pod-7 thread \"http-nio-8080-exec-3\": a renewal found it gone from Redis");
		assertThat(lost.getOwner()).as("for code, not for logs").isEqualTo(OWNER_ID);
		assertThat(event.toString()).contains("holder=inventory@pod-7").doesNotContain(OWNER_ID)
			.doesNotContain("LomcCRO0AJhS3cHP08s3zA");
		// made without a holder: still no owner id in the message
		LockLostException unknown = new LockLostException(new LockLostEvent("sku:42", "inventory", OWNER_ID, 7,
				LockLostEvent.Detection.EXPIRED, Instant.EPOCH));
		assertThat(unknown.getMessage()).doesNotContain(OWNER_ID).contains("unknown owner");
	}

	@Test
	void snapshotsAndForcedReleasesLeaveTheirOwnerIdsOutOfTheirStrings() {
		LeaseSnapshot snapshot = new LeaseSnapshot("sku:42", "inventory", OWNER_ID, "http-nio-8080-exec-3",
				Instant.EPOCH, 1, Duration.ofSeconds(30), Duration.ofSeconds(20), null, 7, true, false);
		ForcedRelease release = new ForcedRelease("sku:42", OWNER_ID, 1, 7, List.of(OWNER_ID));
		assertThat(snapshot.toString()).contains("sku:42", "http-nio-8080-exec-3").doesNotContain(OWNER_ID);
		assertThat(release.toString()).contains("sku:42", "holders=1").doesNotContain(OWNER_ID);
	}

}
