package dev.distlock.redis.internal.wait;

import dev.distlock.redis.internal.script.FairScripts;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a release message says ({@link ReleaseMessage}) and what it makes a channel of this process do (issue 31): a
 * release naming another process holds this one back, one naming this process or nobody lets it try at once, and this
 * process's own release is recognised by its token whether or not the message names someone.
 */
class ReleaseMessageTests {

	private static final long HOLD_BACK = 1_000_000;

	@Test
	void everyFormatIsReadAndAnythingElseIsAReleaseNamingNobody() {
		assertThat(ReleaseMessage.parse("1234>client-b"))
			.isEqualTo(new ReleaseMessage(ReleaseMessage.Kind.RELEASED, "1234", "client-b", 0));
		assertThat(ReleaseMessage.parse("1234")).isEqualTo(new ReleaseMessage(ReleaseMessage.Kind.RELEASED, "1234", "", 0));
		assertThat(ReleaseMessage.parse("*1234").kind()).isEqualTo(ReleaseMessage.Kind.WAKE_ALL);
		assertThat(ReleaseMessage.parse("*1234").party()).isEmpty();
		assertThat(ReleaseMessage.parse(FairScripts.HAND_OVER_PREFIX + "77:owner-1"))
			.isEqualTo(new ReleaseMessage(ReleaseMessage.Kind.FAIR_HAND_OVER, FairScripts.HAND_OVER_PREFIX + "77:owner-1",
					"owner-1", 77));
		assertThat(ReleaseMessage.parse(FairScripts.HAND_OVER_PREFIX + "x:owner-1").kind())
			.isEqualTo(ReleaseMessage.Kind.RELEASED);
		assertThat(ReleaseMessage.parse("1764000000").party()).as("a forced release's stamp").isEmpty();
	}

	@Test
	void aReleaseNamingAnotherProcessHoldsBackAndOneNamingThisProcessOrNobodyEndsTheHoldBack() {
		ReleaseChannel channel = new ReleaseChannel("lock:{k}:released");

		channel.released(ReleaseMessage.parse("1>client-b"), "client-a", HOLD_BACK);
		long heldBackUntil = channel.yieldUntilNanos;
		assertThat(heldBackUntil).as("held back").isNotZero();
		assertThat(heldBackUntil - System.nanoTime()).isLessThanOrEqualTo(HOLD_BACK);

		channel.released(ReleaseMessage.parse("2>client-a"), "client-a", HOLD_BACK);
		assertThat(channel.yieldUntilNanos).as("named: tries at once").isZero();

		channel.released(ReleaseMessage.parse("3>client-b"), "client-a", HOLD_BACK);
		channel.released(ReleaseMessage.parse("4"), "client-a", HOLD_BACK);
		assertThat(channel.yieldUntilNanos).as("a release naming nobody (an older version's)").isZero();

		channel.released(ReleaseMessage.parse("5>client-b"), "", HOLD_BACK);
		assertThat(channel.yieldUntilNanos).as("a subscriber without a client id never holds back").isZero();
	}

	@Test
	void aNamedReleaseCarriesTheOtherNotesAndOlderFormatsCarryNone() {
		assertThat(ReleaseMessage.parse("1234>client-b>client-c=100,client_d=200"))
			.isEqualTo(new ReleaseMessage(ReleaseMessage.Kind.RELEASED, "1234", "client-b", 0,
					"client-c=100,client_d=200"));
		assertThat(ReleaseMessage.parse("1234>client-b>client-c=100").carried()).isEqualTo("client-c=100");
		assertThat(ReleaseMessage.parse("1234>client-b").carried()).as("one waiting process only").isEmpty();
		assertThat(ReleaseMessage.parse("1234").carried()).isEmpty();
		assertThat(ReleaseMessage.parse("*1234>x>y=1").carried()).isEmpty();
		ReleaseMessage garbled = ReleaseMessage.parse("1234>client-b>client-c=1x,=5");
		assertThat(garbled.party()).isEqualTo("client-b");
		assertThat(garbled.carried()).as("not what the scripts write: never passed on").isEmpty();
		assertThat(ReleaseMessage.parse("1234>client-b>c=1,d=2>e=3").carried()).isEmpty();
	}

	@Test
	void theNamedProcessKeepsTheCarriedNotesForOneAttemptAndAnyOtherReleaseReplacesThem() {
		ReleaseChannel channel = new ReleaseChannel("lock:{k}:released");
		channel.waiters.add(new Waiter(channel, Thread.currentThread(), channel.subscribed, "client-a:1", "k", 1000, ""));

		channel.released(ReleaseMessage.parse("1>client-a>client-b=100,client-c=200"), "client-a", HOLD_BACK);
		assertThat(channel.takeCarried()).isEqualTo("client-b=100,client-c=200");
		assertThat(channel.takeCarried()).as("sent once").isEmpty();

		channel.released(ReleaseMessage.parse("2>client-a>client-b=100"), "client-a", HOLD_BACK);
		channel.released(ReleaseMessage.parse("3>client-a>client-c=50"), "client-a", HOLD_BACK);
		assertThat(channel.takeCarried()).as("the latest release's").isEqualTo("client-c=50");

		channel.released(ReleaseMessage.parse("4>client-a>client-b=100"), "client-a", HOLD_BACK);
		channel.released(ReleaseMessage.parse("5>client-b>client-a=1"), "client-a", HOLD_BACK);
		assertThat(channel.takeCarried()).as("a release naming another process").isEmpty();

		channel.released(ReleaseMessage.parse("6>client-a>client-b=100"), "client-a", HOLD_BACK);
		channel.released(ReleaseMessage.parse("7"), "client-a", HOLD_BACK);
		assertThat(channel.takeCarried()).as("a release naming nobody").isEmpty();

		channel.waiters.clear();
		channel.released(ReleaseMessage.parse("8>client-a>client-b=100"), "client-a", HOLD_BACK);
		assertThat(channel.takeCarried()).as("nobody here to take the lock").isEmpty();
	}

	@Test
	void thisProcesssOwnReleaseIsRecognisedByItsTokenAndChangesNothing() {
		ReleaseChannel channel = new ReleaseChannel("lock:{k}:released");
		channel.expectOwnMessage("9");
		channel.released(ReleaseMessage.parse("9>client-b"), "client-a", HOLD_BACK);
		assertThat(channel.yieldUntilNanos).isZero();
		assertThat(channel.ownMessageArrived("9")).as("consumed by its message").isFalse();
	}

}
