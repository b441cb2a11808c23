package dev.distlock.redis.internal.redlock;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

import dev.distlock.core.StoredLock;
import dev.distlock.redis.internal.store.ListingSource;
import dev.distlock.redis.internal.store.StoreScan;

import org.springframework.dao.DataAccessException;

/**
 * The locks of a quorum of nodes (Redlock), merged: each node is scanned in turn, and a lease key found on a node is
 * read on every node, then listed once, on the first node that holds it (it was listed with that node's keys).
 * <p>
 * A node that does not answer is skipped, its scan and its reads alike: a lock it holds is held on a quorum, so the
 * other nodes list it (with one node fewer counted). A listing with a quorum of nodes down lists what the rest hold.
 */
public final class RedlockListing implements ListingSource {

	private final RedlockNodes nodes;

	private final List<StoreScan> scans = new ArrayList<>();

	public RedlockListing(RedlockNodes nodes, String keyPrefix) {
		this.nodes = nodes;
		for (int i = 0; i < nodes.size(); i++) {
			this.scans.add(nodes.store(i).scan(keyPrefix));
		}
	}

	/** {@return the node indices} */
	@Override
	public int[] parts() {
		int[] parts = new int[this.scans.size()];
		for (int i = 0; i < parts.length; i++) {
			parts[i] = i;
		}
		return parts;
	}

	@Override
	public StoreScan.Step scan(int part, String cursor, int count) {
		try {
			return this.scans.get(part).scan(0, cursor, count);
		}
		catch (DataAccessException ex) {
			return new StoreScan.Step("0", List.of()); // skipped: its locks are on a quorum of the others
		}
	}

	/**
	 * The lock at {@code redisKey} as the nodes hold it, unless a node scanned before {@code part} holds it: the
	 * greatest hold count and token of the nodes, the remaining time a quorum has at least (the longest when fewer
	 * than a quorum hold it: a remnant of a release or a failed acquisition, expiring then), how many nodes hold it, and
	 * the holder's label of the node with the greatest token that has one (as {@code RedlockLockService.holder}).
	 */
	@Override
	public Optional<StoredLock> describe(int part, String redisKey) {
		String key = this.scans.get(part).lockKey(redisKey);
		if (key == null) {
			return Optional.empty();
		}
		NodeReplies<Optional<StoredLock>> replies = this.nodes
			.onAll((node, store) -> this.scans.get(node).describe(key, redisKey));
		List<StoredLock> held = new ArrayList<>();
		for (int i = 0; i < replies.size(); i++) {
			Optional<StoredLock> lock = replies.value(i);
			if (lock != null && lock.isPresent()) {
				if (i < part) {
					return Optional.empty();
				}
				held.add(lock.get());
			}
		}
		if (held.isEmpty()) {
			return Optional.empty();
		}
		String labels = held.stream()
			.filter((lock) -> lock.holder() != null)
			.max(Comparator.comparingLong(StoredLock::fencingToken))
			.map(StoredLock::holder)
			.orElse(null);
		held.sort(Comparator.comparing(StoredLock::remainingTtl).reversed());
		StoredLock quorumth = held.get(Math.min(held.size(), this.nodes.quorum()) - 1);
		return Optional.of(new StoredLock(key, quorumth.mode(),
				held.stream().mapToInt(StoredLock::holds).max().orElse(1), quorumth.remainingTtl(),
				held.stream().mapToLong(StoredLock::fencingToken).max().orElse(0), labels, -1,
				held.stream().mapToInt(StoredLock::waitingInstances).max().orElse(0), held.size()));
	}

}
