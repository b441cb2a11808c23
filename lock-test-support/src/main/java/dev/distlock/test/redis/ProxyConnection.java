package dev.distlock.test.redis;

import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * A client connection of a {@link FaultProxy} and its server side, which opens once no partition
 * prevents it. Loop-thread state only: {@link ProxyPump} reads and changes it on the proxy's one
 * I/O thread, so it needs no synchronisation.
 */
final class ProxyConnection {

	/** The proxy holds at most this much per direction and connection (plus one read). */
	static final int MAX_HELD_BYTES = 1024 * 1024;

	final long id;
	final SocketChannel client;
	final Flow up = new Flow();
	final Flow down = new Flow();
	@Nullable SelectionKey clientKey;
	@Nullable SocketChannel server;
	@Nullable SelectionKey serverKey;
	boolean connected;
	long connectDeadline;
	/** Some reply byte was discarded: this connection never delivers to its client again. */
	boolean lostReplies;
	boolean closed;

	ProxyConnection(long id, SocketChannel client) {
		this.id = id;
		this.client = client;
	}

	@Override
	public String toString() {
		return "connection " + id;
	}

	/**
	 * Bytes one peer sent, read at {@code readAt}; or, with {@code data == null}, the end of its
	 * stream, by a reset if {@code reset}.
	 */
	record Chunk(long readAt, @Nullable ByteBuffer data, boolean reset) {
	}

	/** One direction of a connection: what was read from its source and not yet delivered. */
	static final class Flow {

		final ArrayDeque<Chunk> held = new ArrayDeque<>();
		long heldBytes;
		/** The source ended (FIN or reset): nothing more to read. */
		boolean sourceEnded;
		/** The end was delivered (FIN). */
		boolean sinkEnded;
		/** A write was partial: wait until the sink is writable. */
		boolean writeBlocked;

		boolean wantsRead() {
			return !sourceEnded && heldBytes < MAX_HELD_BYTES;
		}

		void end(long now, boolean reset) {
			held.addLast(new Chunk(now, null, reset));
			sourceEnded = true;
		}
	}
}
