package dev.distlock.redis.internal.redlock;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.distlock.redis.internal.store.LeaseStore;
import org.jspecify.annotations.Nullable;

/**
 * One owner id's try for a Redlock lease, over one or more rounds of calls to the nodes, with the tie-breaker rule that
 * keeps contenders from splitting the nodes between them.
 * <p>
 * <b>Why.</b> When every contender asks all nodes at once, contenders split the nodes (with 3 contenders on 3 nodes,
 * one node each), nobody gets a quorum, all undo their attempt and retry at random: under contention most attempts
 * are wasted. So one node per key, the <em>tie-breaker</em> (a fixed function of the key,
 * {@link RedlockNodes#tieBreaker(String)}), orders the contenders: the one that holds the tie-breaker keeps the grants it got and asks again only the nodes
 * it misses, once they announce a release; every other contender undoes its attempt everywhere at once (which announces
 * a release where it held something) and next asks the tie-breaker alone before the others, so that it waits in line
 * instead of taking nodes that the tie-breaker's holder needs.
 * <p>
 * <b>What does not change.</b> The lease is acquired when a quorum (N/2 + 1) of the nodes granted this owner id and
 * the validity, counted from the <em>first</em> send of the rounds whose grants are counted ({@link #firstSentNanos}),
 * is still positive: every counted grant was made after that send, each node set its expiry when it granted, so no
 * counted node's hold expires before that send plus the lease time. A grant is kept only while the time since that
 * first send is below a quarter of the lease time ({@link #keepable(long)}); then, or when the wait ends, the attempt is
 * undone on every node as any failed attempt is. A node is asked again only when its last answer came (a refusal or a
 * failure): a call still in flight is never doubled, and its late answer is adopted (acquired) or undone (given up) as
 * before. Asking a node again with the same owner id is what a re-delivered call does anyway: the acquire script grants
 * its owner again, with a token no smaller, and refuses while another holds the key.
 * <p>
 * Not thread-safe: used by the one acquiring thread.
 */
final class RedlockAttempt {

	final String owner;

	private final RedlockNodes nodes;

	private final long ttlMillis;

	private final int tie;

	/** Per node: the token it granted this owner id, 0 if none (yet). */
	private final long[] tokens;

	/** Per node: a call to it is in flight (it did not answer in its round): never asked again by this attempt. */
	private final boolean[] inFlight;

	/** Per node: asked at least once, and its answer was a failure (it may have run the call). */
	private final boolean[] failed;

	/** Every round's replies, for the late answers: adopted when acquired, undone when given up. */
	final List<NodeReplies<long[]>> rounds = new ArrayList<>();

	/** When the first round whose grants are kept was sent; 0 while nothing is granted. */
	private long firstSentNanos;

	/** Per round: whether the tie-breaker refused (another holds it). */
	private boolean tieRefused;

	/** The least remaining time a refusing node reported in the last round, in ns (0 when none refused). */
	long holderPttlNanos;

	/** Whether a node that refused in the last round said the holder's release will not be announced. */
	boolean unannounced;

	/**
	 * How many nodes answered as far as the last round knows: all but those whose call is in flight or failed in it
	 * (a node not asked, its grant kept or its call not needed, counts as answered).
	 */
	int answered;

	/** Refusals in the last round. */
	int refused;

	RedlockAttempt(RedlockNodes nodes, String owner, long ttlMillis, int tie) {
		this.nodes = nodes;
		this.owner = owner;
		this.ttlMillis = ttlMillis;
		this.tie = tie;
		this.tokens = new long[nodes.size()];
		this.inFlight = new boolean[nodes.size()];
		this.failed = new boolean[nodes.size()];
	}

	/** The function one node runs: the acquire script, with this attempt's owner id. */
	interface Call {

		long[] acquire(int node, LeaseStore store);

	}

	/** The acquire script on one node without holding a thread: null where that path is not available. */
	interface AsyncCall extends RedlockNodes.AsyncCall<long[]> {

	}

	/**
	 * One round: {@code tieOnly} asks the tie-breaker alone; otherwise every node not granted yet whose last call was
	 * answered (all of them in a first round). Returns once the round is decided, as {@link RedlockNodes#onNodes} does.
	 */
	void round(boolean tieOnly, @Nullable AsyncCall async, Call call) {
		int size = this.nodes.size();
		int quorum = this.nodes.quorum();
		boolean[] ask = new boolean[size];
		int kept = 0;
		for (int i = 0; i < size; i++) {
			kept += (this.tokens[i] != 0) ? 1 : 0;
			ask[i] = tieOnly ? i == this.tie : this.tokens[i] == 0 && !this.inFlight[i];
		}
		int keptGrants = kept;
		long sent = System.nanoTime();
		// refusals decide a round only once the tie-breaker answered: whether this contender keeps its grants hangs on it
		NodeReplies<long[]> replies = this.nodes.onNodes(ask, this.nodes.timeoutNanos(this.ttlMillis), async,
				call::acquire, tieOnly ? r -> false : r -> keptGrants + r.count(v -> v[0] > 0) >= quorum
						|| (r.count(v -> v[0] == 0) > size - quorum && !r.unanswered(this.tie)));
		this.rounds.add(replies);
		long holderPttl = Long.MAX_VALUE;
		boolean granted = false;
		this.tieRefused = false;
		this.unannounced = false;
		this.refused = 0;
		int silent = 0;
		for (int i = 0; i < size; i++) {
			if (!ask[i]) {
				silent += this.inFlight[i] ? 1 : 0;
				continue;
			}
			long[] value = replies.value(i);
			if (replies.unanswered(i)) {
				this.inFlight[i] = true;
				silent++;
			}
			else if (value == null) {
				this.failed[i] = true;
				silent++;
			}
			else if (value[0] > 0) {
				this.tokens[i] = value[1];
				granted = true;
			}
			else {
				this.refused++;
				this.tieRefused |= i == this.tie;
				holderPttl = Math.min(holderPttl, value[1]);
				this.unannounced |= LeaseStore.unannounced(value);
			}
		}
		this.answered = size - silent;
		if (granted && this.firstSentNanos == 0) {
			this.firstSentNanos = sent;
		}
		this.holderPttlNanos = (holderPttl == Long.MAX_VALUE) ? 0 : TimeUnit.MILLISECONDS.toNanos(holderPttl);
	}

	/** {@return how many nodes granted this owner id} */
	int granted() {
		int granted = 0;
		for (long token : this.tokens) {
			granted += (token != 0) ? 1 : 0;
		}
		return granted;
	}

	/** {@return whether a quorum granted it and the validity, from the first counted send, is still positive} */
	boolean acquired() {
		return this.firstSentNanos != 0 && granted() >= this.nodes.quorum()
				&& validUntilNanos() - System.nanoTime() > 0;
	}

	/** {@return until when a lease of the counted grants is valid (from the first counted send)} */
	long validUntilNanos() {
		return this.nodes.validUntil(this.firstSentNanos, this.ttlMillis);
	}

	/** {@return the per-node tokens granted} */
	long[] tokens() {
		return this.tokens.clone();
	}

	/** {@return whether this owner id holds the tie-breaker} */
	boolean holdsTieBreaker() {
		return this.tokens[this.tie] != 0;
	}

	/** {@return whether the tie-breaker refused in the last round: another contender or holder has it} */
	boolean tieRefused() {
		return this.tieRefused;
	}

	/** {@return whether the tie-breaker's call is in flight or failed: it may be down or slow} */
	boolean tieUnsure() {
		return this.inFlight[this.tie] || this.failed[this.tie];
	}

	/**
	 * {@return whether the grants are worth keeping at {@code nowNanos}}: the tie-breaker is ours, the nodes still
	 * askable can make the quorum, and less than a quarter of the lease time has passed since the first counted send
	 * (so that the lease, once acquired, has most of its validity left).
	 */
	boolean keepable(long nowNanos) {
		if (!holdsTieBreaker()) {
			return false;
		}
		int reachable = 0;
		for (int i = 0; i < this.tokens.length; i++) {
			reachable += (this.tokens[i] != 0 || !this.inFlight[i]) ? 1 : 0;
		}
		return reachable >= this.nodes.quorum()
				&& nowNanos - this.firstSentNanos < TimeUnit.MILLISECONDS.toNanos(this.ttlMillis) / 4;
	}

	/** {@return whether this attempt may have left something on a node: a grant, a failure or an unanswered call} */
	boolean mayHoldAny() {
		for (int i = 0; i < this.tokens.length; i++) {
			if (this.tokens[i] != 0 || this.inFlight[i] || this.failed[i]) {
				return true;
			}
		}
		return false;
	}

	/** {@return the first failure of the rounds, for a message; null when none} */
	@Nullable RuntimeException anyFailure() {
		for (NodeReplies<long[]> replies : this.rounds) {
			RuntimeException failure = replies.anyFailure();
			if (failure != null) {
				return failure;
			}
		}
		return null;
	}

}
