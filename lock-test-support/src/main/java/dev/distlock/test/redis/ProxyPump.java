package dev.distlock.test.redis;

import static java.nio.channels.SelectionKey.OP_CONNECT;
import static java.nio.channels.SelectionKey.OP_READ;
import static java.nio.channels.SelectionKey.OP_WRITE;

import dev.distlock.test.redis.ProxyConnection.Chunk;
import dev.distlock.test.redis.ProxyConnection.Flow;
import dev.distlock.test.redis.ProxyMode.Kind;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The per-connection half of a {@link FaultProxy}: reads what each side sends, and delivers, holds,
 * delays or discards it as the {@link ProxyMode} says; plus the re-delivery of
 * {@link FaultProxy#redeliverNext()}.
 *
 * <p>Everything here but the mode and the counters is loop-thread state: only the proxy's one I/O
 * thread ({@link ProxyLoop}) calls these methods, the control methods of {@link FaultProxy} through
 * its tasks, so a mode change happens between two socket operations and never in the middle of a
 * chunk. The mode is volatile only so that {@link FaultProxy#toString()} can read it; the counters
 * are atomic because other threads read them.
 */
final class ProxyPump {

	private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
	private static final int READ_BYTES = 16 * 1024;

	private final InetSocketAddress target;
	private final Selector selector;
	final AtomicInteger open = new AtomicInteger();
	final AtomicLong toServer = new AtomicLong();
	final AtomicLong toClient = new AtomicLong();
	final AtomicLong dropped = new AtomicLong();
	final AtomicLong redeliveries = new AtomicLong();
	private volatile ProxyMode mode = ProxyMode.HEAL;
	// Re-delivery (loop-thread state, set through FaultProxy.call()): armed, optionally for commands holding a marker
	private boolean redeliverArmed;
	private byte @Nullable [] redeliverMarker;
	private @Nullable ProxyConnection redeliverTarget;

	// Loop-thread state
	private final List<ProxyConnection> connections = new ArrayList<>();
	private final List<SocketChannel> pendingResets = new ArrayList<>();
	private final List<SocketChannel> pendingCloses = new ArrayList<>();
	private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(READ_BYTES);
	private long nextConnectionId;
	private boolean wakeSet;
	private long wakeAt;

	ProxyPump(InetSocketAddress target, Selector selector) {
		this.target = target;
		this.selector = selector;
	}

	ProxyMode mode() {
		return mode;
	}

	/** Switches the mode; heal calls off a pending re-delivery, heal and latency reset connections that lost replies. */
	void setMode(ProxyMode next) {
		mode = next;
		if (next.kind() == Kind.HEAL) {
			redeliverArmed = false; // a re-delivery that found no command is called off too
			redeliverTarget = null;
		}
		if (next.kind() == Kind.HEAL || next.kind() == Kind.LATENCY) {
			for (ProxyConnection c : List.copyOf(connections)) {
				if (c.lostReplies) {
					reset(c);
				}
			}
		}
	}

	/** Arms a re-delivery, for the next command holding {@code marker}, or for any if it is null. */
	void armRedelivery(byte @Nullable [] marker) {
		redeliverArmed = true;
		redeliverMarker = marker;
		redeliverTarget = null;
	}

	boolean redeliveryArmed() {
		return redeliverArmed;
	}

	void resetAll() {
		List.copyOf(connections).forEach(this::reset);
	}

	/** Takes on a connection the listener accepted. */
	void add(SocketChannel client) throws IOException {
		client.configureBlocking(false);
		client.setOption(StandardSocketOptions.TCP_NODELAY, true);
		ProxyConnection c = new ProxyConnection(nextConnectionId++, client);
		c.clientKey = client.register(selector, OP_READ, c);
		connections.add(c);
		open.incrementAndGet();
	}

	/** Moves every connection on as far as the mode allows; sets when the next held chunk is due. */
	void pumpAll() {
		wakeSet = false;
		long now = System.nanoTime();
		for (ProxyConnection c : List.copyOf(connections)) {
			pump(c, now);
		}
	}

	/** Whether a held chunk is waiting for its time ({@link #wakeAt()}), as latency holds them. */
	boolean wakeSet() {
		return wakeSet;
	}

	long wakeAt() {
		return wakeAt;
	}

	/** Handles a selected key of a connection's socket. */
	void handle(SelectionKey key) {
		ProxyConnection c = (ProxyConnection) key.attachment();
		if (key.isConnectable()) {
			finishConnect(c);
		}
		if (!c.closed && key.isValid() && key.isReadable()) {
			boolean fromClient = key.channel() == c.client;
			read(fromClient ? c.up : c.down, (SocketChannel) key.channel());
		}
		// OP_WRITE needs nothing here: pump() retries every blocked write
	}

	/** Opens the server side; never in a partition, where the server must not see the client. */
	private void connect(ProxyConnection c, long now) {
		try {
			SocketChannel server = SocketChannel.open();
			c.server = server;
			server.configureBlocking(false);
			server.setOption(StandardSocketOptions.TCP_NODELAY, true);
			c.connectDeadline = now + CONNECT_TIMEOUT.toNanos();
			c.connected = server.connect(target);
			c.serverKey = server.register(selector, c.connected ? 0 : OP_CONNECT, c);
		} catch (IOException e) {
			reset(c);
		}
	}

	private void finishConnect(ProxyConnection c) {
		SocketChannel server = c.server;
		try {
			if (server != null && server.finishConnect()) {
				c.connected = true;
			}
		} catch (IOException e) {
			reset(c); // the client sees a reset, as if the server had refused it
		}
	}

	/** Reads what the source has, up to the hold limit; an end of stream is queued behind the data. */
	private void read(Flow flow, SocketChannel source) {
		long now = System.nanoTime();
		while (flow.wantsRead()) {
			readBuffer.clear();
			int n;
			try {
				n = source.read(readBuffer);
			} catch (IOException e) {
				flow.end(now, true);
				return;
			}
			if (n == 0) {
				return;
			}
			if (n < 0) {
				flow.end(now, false);
				return;
			}
			readBuffer.flip();
			ByteBuffer data = ByteBuffer.allocate(n);
			data.put(readBuffer).flip();
			flow.held.addLast(new Chunk(now, data, false));
			flow.heldBytes += n;
		}
	}

	/** Moves a connection on as far as the mode allows, and sets what its sockets wait for. */
	private void pump(ProxyConnection c, long now) {
		ProxyMode m = mode;
		if (c.server == null) {
			if (m.kind() == Kind.BLACKHOLE) {
				interest(c);
				return;
			}
			connect(c, now);
			if (c.closed) {
				return;
			}
		}
		if (!c.connected) {
			if (now - c.connectDeadline >= 0) {
				reset(c);
				return;
			}
			wake(c.connectDeadline);
			interest(c);
			return;
		}
		SocketChannel server = c.server;
		if (server != null && deliver(c, c.up, server, false, m, now) && deliver(c, c.down, c.client, true, m, now)) {
			interest(c);
		}
	}

	/** Delivers or discards the held chunks the mode allows; false if the connection has ended. */
	private boolean deliver(ProxyConnection c, Flow flow, SocketChannel sink, boolean towardsClient, ProxyMode m, long now) {
		flow.writeBlocked = false;
		boolean discard = towardsClient && (m.kind() == Kind.DROP_REPLIES || c.lostReplies);
		while (!flow.held.isEmpty()) {
			Chunk chunk = flow.held.peekFirst();
			ByteBuffer data = chunk.data();
			if (redeliverArmed && data != null && m.kind() != Kind.BLACKHOLE) {
				if (!towardsClient && redeliverTarget == null && contains(data, redeliverMarker)) {
					redeliverTarget = c; // this command runs; its reply will be lost with the connection
				}
				else if (towardsClient && redeliverTarget == c) {
					redeliverArmed = false;
					redeliverTarget = null;
					redeliveries.incrementAndGet();
					// a close (FIN), as by the server's timeout or CLIENT KILL: Lettuce re-sends what the connection
					// left unanswered; a reset (RST) would fail the first of them with the reset instead
					end(c, pendingCloses);
					return false;
				}
			}
			if (discard) {
				flow.held.removeFirst();
				if (data != null) {
					flow.heldBytes -= data.remaining();
					dropped.addAndGet(data.remaining());
				}
				c.lostReplies = true;
				continue;
			}
			if (m.kind() == Kind.BLACKHOLE) {
				return true;
			}
			if (m.kind() == Kind.LATENCY) {
				long due = chunk.readAt() + m.latencyNanos();
				if (due - now > 0) {
					wake(due);
					return true;
				}
			}
			if (data == null) {
				flow.held.removeFirst();
				if (chunk.reset()) {
					reset(c);
					return false;
				}
				try {
					sink.shutdownOutput();
				} catch (IOException e) {
					reset(c);
					return false;
				}
				flow.sinkEnded = true;
				if (c.up.sinkEnded && c.down.sinkEnded) {
					end(c, pendingCloses);
					return false;
				}
				continue;
			}
			int n;
			try {
				n = sink.write(data);
			} catch (IOException e) {
				reset(c);
				return false;
			}
			flow.heldBytes -= n;
			(towardsClient ? toClient : toServer).addAndGet(n);
			if (data.hasRemaining()) {
				flow.writeBlocked = true; // the sink's buffer is full: retry when it is writable
				return true;
			}
			flow.held.removeFirst();
		}
		return true;
	}

	private static boolean contains(ByteBuffer data, byte @Nullable [] marker) {
		if (marker == null) {
			return true;
		}
		int start = data.position();
		for (int i = start; i <= data.limit() - marker.length; i++) {
			int j = 0;
			while (j < marker.length && data.get(i + j) == marker[j]) {
				j++;
			}
			if (j == marker.length) {
				return true;
			}
		}
		return false;
	}

	private void interest(ProxyConnection c) {
		SelectionKey clientKey = c.clientKey;
		if (clientKey != null) {
			clientKey.interestOps((c.up.wantsRead() ? OP_READ : 0) | (c.down.writeBlocked ? OP_WRITE : 0));
		}
		SelectionKey serverKey = c.serverKey;
		if (serverKey != null && c.connected) {
			serverKey.interestOps((c.down.wantsRead() ? OP_READ : 0) | (c.up.writeBlocked ? OP_WRITE : 0));
		}
	}

	private void wake(long at) {
		if (!wakeSet || at - wakeAt < 0) {
			wakeAt = at;
			wakeSet = true;
		}
	}

	private void reset(ProxyConnection c) {
		end(c, pendingResets);
	}

	/** Forgets a connection; its sockets are closed by {@link #flushEnded()}, once deregistered. */
	private void end(ProxyConnection c, List<SocketChannel> pending) {
		if (c.closed) {
			return;
		}
		c.closed = true;
		connections.remove(c);
		open.decrementAndGet();
		dropped.addAndGet(c.up.heldBytes + c.down.heldBytes);
		SelectionKey clientKey = c.clientKey;
		if (clientKey != null) {
			clientKey.cancel();
		}
		pending.add(c.client);
		SelectionKey serverKey = c.serverKey;
		if (serverKey != null) {
			serverKey.cancel();
		}
		SocketChannel server = c.server;
		if (server != null) {
			pending.add(server);
		}
	}

	/**
	 * Closes the sockets of ended connections. A channel still registered with a selector would
	 * close lazily, with a FIN first; deregistering it first makes a reset an immediate RST.
	 */
	void flushEnded() throws IOException {
		if (pendingResets.isEmpty() && pendingCloses.isEmpty()) {
			return;
		}
		selector.selectNow(); // deregisters the cancelled keys
		closeAll();
	}

	/** Closes the sockets of ended connections; their keys must be deregistered already. */
	void closeAll() {
		pendingResets.forEach(ProxyLoop::resetNow);
		pendingResets.clear();
		pendingCloses.forEach(ProxyLoop::closeQuietly);
		pendingCloses.clear();
	}
}
