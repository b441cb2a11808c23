package dev.distlock.test.redis;

import static java.nio.channels.SelectionKey.OP_ACCEPT;
import static java.nio.channels.SelectionKey.OP_CONNECT;
import static java.nio.channels.SelectionKey.OP_READ;
import static java.nio.channels.SelectionKey.OP_WRITE;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A TCP proxy on a free port of {@code 127.0.0.1} that sits between a Redis client and a
 * {@link RedisServer} and injects the network faults a lock library must survive.
 *
 * <p>The rule those faults test is "every call that timed out may have run". Pausing the server
 * cannot show it, since a frozen server runs nothing; this proxy can. In a
 * {@linkplain #blackhole() partition} it holds the bytes instead of losing them, so a command the
 * client gave up on runs on {@linkplain #heal() heal}; with {@linkplain #dropReplies() lost
 * replies} the server runs commands whose replies never reach the client. Modes switch at any
 * time and apply at once to open and new connections.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start(); FaultProxy proxy = FaultProxy.to(redis)) {
 *   RedisClient client = RedisClient.create(proxy.uri());
 *   proxy.blackhole();  // the client's next command times out, but is held...
 *   proxy.heal();       // ...and runs now
 * }
 * }</pre>
 *
 * <p>{@linkplain #redeliverNext() Re-delivery} covers the rule's second half, "every call may have
 * run, and may run twice": the server runs a command, its reply is lost with its connection, and
 * the client (Lettuce re-sends the commands a closed connection left unanswered once it
 * reconnects) or a retrying proxy sends it again.
 *
 * <p>One daemon thread, {@code fault-proxy-<port>}, does all I/O on non-blocking sockets, and a mode
 * change runs on that thread between two socket operations. So a change also applies to data in
 * flight inside the proxy: once a mode method returns, no byte is handed to a socket against the
 * new mode, not even the rest of a chunk the kernel took only in part (a blocking write could not
 * promise that).
 *
 * <p>Limits of the emulation:
 * <ul>
 *   <li>A fault starts at the proxy, not on the wire: bytes the proxy wrote before a mode change
 *       are still delivered from the kernel's socket buffers.
 *   <li>During a partition the kernel still completes the TCP handshake of new connections, so a
 *       client connects and then hears nothing, where a real partition would time its connect
 *       out. The proxy opens the server side of a connection only once the partition ends.
 *   <li>A partition never ends a connection by itself (no retransmission timeout, no keepalive):
 *       only the client's own timeouts fire.
 *   <li>The proxy holds at most 1 MiB per direction and connection (plus one read); beyond that
 *       it stops reading, and TCP backpressure holds the rest in the sender, as a full window would.
 *   <li>Faults apply to the chunks the proxy reads, as the OS splits the stream, not to RESP
 *       commands. Latency delays each chunk from the time the proxy read it; bandwidth is not
 *       limited, and connection setup is not delayed.
 *   <li>A peer's close (FIN) or reset travels in order behind its data, so it too is held by a
 *       partition, delayed by latency, and (towards the client) lost with the replies.
 * </ul>
 */
public final class FaultProxy implements AutoCloseable {

	private static final String HOST = RedisServer.HOST;
	private static final Duration CALL_TIMEOUT = Duration.ofSeconds(5);
	private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20); // generous: the loop may be starved on a loaded machine
	private static final int READ_BYTES = 16 * 1024;
	private static final int MAX_HELD_BYTES = 1024 * 1024;
	private static final int BIND_ATTEMPTS = 10;

	private final InetSocketAddress target;
	private final Selector selector;
	private final ServerSocketChannel listener;
	private final int port;
	private final Thread loop;
	private final Queue<Task> tasks = new ConcurrentLinkedQueue<>();
	private final AtomicInteger open = new AtomicInteger();
	private final AtomicLong accepted = new AtomicLong();
	private final AtomicLong toServer = new AtomicLong();
	private final AtomicLong toClient = new AtomicLong();
	private final AtomicLong dropped = new AtomicLong();
	private volatile Mode mode = Mode.HEAL;
	private volatile boolean refusing;
	private volatile boolean closed;
	/** The loop has ended; guarded by {@code this}, so no task is queued after it drained them. */
	private boolean stopped;
	private volatile @Nullable Throwable failure;
	private final AtomicLong redeliveries = new AtomicLong();
	// Re-delivery (loop-thread state, set through call()): armed, optionally for commands holding a marker
	private boolean redeliverArmed;
	private byte @Nullable [] redeliverMarker;
	private @Nullable Connection redeliverTarget;

	// Loop-thread state
	private final List<Connection> connections = new ArrayList<>();
	private final List<SocketChannel> pendingResets = new ArrayList<>();
	private final List<SocketChannel> pendingCloses = new ArrayList<>();
	private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(READ_BYTES);
	private long nextConnectionId;
	private boolean wakeSet;
	private long wakeAt;

	private FaultProxy(InetSocketAddress target, Selector selector, ServerSocketChannel listener, int port) {
		this.target = target;
		this.selector = selector;
		this.listener = listener;
		this.port = port;
		this.loop = new Thread(this::run, "fault-proxy-" + port);
		this.loop.setDaemon(true);
	}

	/** Starts a proxy to {@code targetHost:targetPort}, forwarding normally. */
	public static FaultProxy start(String targetHost, int targetPort) {
		InetSocketAddress target = new InetSocketAddress(targetHost, targetPort);
		if (target.isUnresolved()) {
			throw new IllegalArgumentException("Cannot resolve " + targetHost);
		}
		@Nullable Selector selector = null;
		@Nullable ServerSocketChannel listener = null;
		try {
			selector = Selector.open();
			listener = bind();
			listener.configureBlocking(false);
			listener.register(selector, OP_ACCEPT);
			FaultProxy proxy = new FaultProxy(target, selector, listener, ((InetSocketAddress) listener.getLocalAddress()).getPort());
			proxy.loop.start();
			return proxy;
		} catch (IOException | RuntimeException e) {
			closeQuietly(listener);
			closeQuietly(selector);
			if (e instanceof IOException io) {
				throw new UncheckedIOException("Cannot start a proxy to " + targetHost + ":" + targetPort, io);
			}
			throw (RuntimeException) e;
		}
	}

	/** Starts a proxy to {@code server}; it keeps pointing at the same port across restarts. */
	public static FaultProxy to(RedisServer server) {
		return start(server.host(), server.port());
	}

	public String host() {
		return HOST;
	}

	public int port() {
		return port;
	}

	/** {@code redis://127.0.0.1:<port>}: give this to the client instead of the server's URI. */
	public String uri() {
		return "redis://" + HOST + ":" + port;
	}

	/**
	 * Forwards normally again: delivers everything held, in order, and resets every connection that
	 * lost replies, since its RESP stream cannot be resynchronised, and calls off a
	 * {@link #redeliverNext()} that has not closed a connection yet. Returns once held bytes have been
	 * offered to the sockets (the kernel takes what fits, the rest follows as the peer reads); the
	 * server runs held commands shortly after, so poll for their effect.
	 */
	public void heal() {
		setMode(Mode.HEAL);
	}

	/**
	 * Delivers every chunk, in both directions, {@code latency} after the proxy read it, in order per
	 * direction; so a round trip takes at least twice the latency. Held chunks count from when they
	 * were read. Like {@link #heal()}, resets every connection that lost replies.
	 */
	public void latency(Duration latency) {
		if (latency.isNegative()) {
			throw new IllegalArgumentException("Latency must not be negative: " + latency);
		}
		setMode(new Mode(Kind.LATENCY, latency.toNanos()));
	}

	/**
	 * A network partition: nothing flows in either direction, but nothing is lost either. Bytes are
	 * held in the proxy (or left unread, so TCP backpressure holds them), connections stay open, and
	 * new ones are accepted but not connected to the server. {@link #heal()} delivers it all in
	 * order, which is how a command the client gave up on runs later on the server.
	 */
	public void blackhole() {
		setMode(Mode.BLACKHOLE);
	}

	/**
	 * Lost replies: client to server bytes flow (the server runs the commands), server to client
	 * bytes are discarded (the client never hears). A TCP stream cannot lose bytes in its middle, so
	 * a connection that lost any reply byte never delivers to its client again, and is reset when
	 * the mode changes to {@link #heal()} or {@link #latency(Duration)}. Connections that lost
	 * nothing (idle ones) carry on.
	 */
	public void dropReplies() {
		setMode(Mode.DROP_REPLIES);
	}

	/**
	 * Resets (RST) both sides of every open connection now, discarding what the proxy holds for them,
	 * as a crashed middlebox or a failover would. The mode is unchanged; new connections are accepted.
	 */
	public void resetAll() {
		call("resetAll", () -> List.copyOf(connections).forEach(this::reset));
	}

	/**
	 * Re-delivery, once: the next command a client sends (on any connection) is delivered, and the
	 * first reply bytes the server sends back on that connection are discarded and the connection is
	 * closed (FIN, as by the server's {@code timeout} or {@code CLIENT KILL}) at once, both sides. The server ran the command; the client never heard. A client
	 * that delivers at least once (Lettuce's default: it re-sends the commands a closed connection
	 * left unanswered after it reconnects) then runs the same command a second time. Pipelined
	 * commands sent before the reply came share the fate. The proxy then forwards normally; the
	 * mode is unchanged. {@link #redeliveries()} counts the connections this closed.
	 */
	public void redeliverNext() {
		call("redeliverNext()", () -> {
			redeliverArmed = true;
			redeliverMarker = null;
			redeliverTarget = null;
		});
	}

	/**
	 * As {@link #redeliverNext()}, for the next command whose bytes contain {@code marker} (a key, a
	 * script's SHA-1), so that other traffic (renewals, pub/sub) passes untouched. The marker must
	 * arrive in one chunk, as a short command's bytes do.
	 */
	public void redeliverNext(String marker) {
		byte[] bytes = marker.getBytes(java.nio.charset.StandardCharsets.UTF_8);
		call("redeliverNext(" + marker + ")", () -> {
			redeliverArmed = true;
			redeliverMarker = bytes;
			redeliverTarget = null;
		});
	}

	/** Whether a {@link #redeliverNext()} is still waiting for its command or its reply. */
	public boolean redeliveryPending() {
		AtomicLong pending = new AtomicLong();
		call("redeliveryPending()", () -> pending.set(redeliverArmed ? 1 : 0));
		return pending.get() == 1;
	}

	/** Connections {@link #redeliverNext()} closed after the server answered a command on them. */
	public long redeliveries() {
		return redeliveries.get();
	}

	/** While {@code true}, new connections are accepted and reset at once, as by a refusing server. */
	public void refuseNew(boolean refuse) {
		call("refuseNew(" + refuse + ")", () -> refusing = refuse);
	}

	/** Connections open now (accepted and not yet closed or reset). */
	public int connectionCount() {
		return open.get();
	}

	/** Connections the listener accepted since the start, including refused ones. */
	public long acceptedCount() {
		return accepted.get();
	}

	/** Bytes written towards the server, on all connections. */
	public long bytesToServer() {
		return toServer.get();
	}

	/** Bytes written towards clients, on all connections. */
	public long bytesToClient() {
		return toClient.get();
	}

	/**
	 * Bytes read and never to be delivered: replies discarded by {@link #dropReplies()}, and what was
	 * held for a connection when it was reset or the proxy closed.
	 */
	public long bytesDropped() {
		return dropped.get();
	}

	/** Closes the listener, resets every connection and stops the thread. Idempotent. */
	@Override
	public void close() {
		synchronized (this) {
			if (!closed) {
				closed = true;
				if (!stopped) {
					selector.wakeup();
				}
			}
		}
		try {
			loop.join(STOP_TIMEOUT.toMillis());
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while closing " + this, e);
		}
		if (loop.isAlive()) {
			IllegalStateException stuck = new IllegalStateException(loop.getName() + " did not stop within " + STOP_TIMEOUT
					+ "; its stack is this exception's");
			stuck.setStackTrace(loop.getStackTrace());
			throw stuck;
		}
	}

	@Override
	public String toString() {
		return "FaultProxy[" + HOST + ":" + port + " -> " + target.getHostString() + ":" + target.getPort() + ", "
				+ (closed ? "closed" : mode + (refusing ? ", refusing new" : "")) + ", " + open.get() + " open]";
	}

	private void setMode(Mode next) {
		call(next.toString(), () -> {
			mode = next;
			if (next.kind == Kind.HEAL) {
				redeliverArmed = false; // a re-delivery that found no command is called off too
				redeliverTarget = null;
			}
			if (next.kind == Kind.HEAL || next.kind == Kind.LATENCY) {
				for (Connection c : List.copyOf(connections)) {
					if (c.lostReplies) {
						reset(c);
					}
				}
			}
		});
	}

	/** Runs {@code action} on the loop thread and waits until it and the I/O it allows are done. */
	private void call(String what, Runnable action) {
		Task task = new Task(action, new CompletableFuture<>());
		synchronized (this) {
			if (closed || stopped) {
				throw new IllegalStateException("Closed: " + this, failure);
			}
			tasks.add(task);
			selector.wakeup();
		}
		try {
			task.done().get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		} catch (TimeoutException e) {
			throw new IllegalStateException(what + " was not applied within " + CALL_TIMEOUT + ": " + this, e);
		} catch (ExecutionException e) {
			throw new IllegalStateException(what + " failed: " + this, e.getCause());
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while applying " + what + " to " + this, e);
		}
	}

	private void run() {
		try {
			while (!closed) {
				List<Task> applied = runTasks();
				wakeSet = false;
				long now = System.nanoTime();
				for (Connection c : List.copyOf(connections)) {
					pump(c, now);
				}
				flushEnded();
				applied.forEach(task -> task.done().complete(null));
				select();
				handleSelected();
			}
		} catch (Throwable e) {
			failure = e;
		} finally {
			shutdown();
		}
	}

	private List<Task> runTasks() {
		List<Task> applied = new ArrayList<>();
		for (Task task = tasks.poll(); task != null; task = tasks.poll()) {
			try {
				task.action().run();
				applied.add(task);
			} catch (RuntimeException e) {
				task.done().completeExceptionally(e);
			}
		}
		return applied;
	}

	/** Blocks until I/O is possible, the next held chunk is due, or a task or close wakes us. */
	private void select() throws IOException {
		if (!selector.selectedKeys().isEmpty()) {
			selector.selectNow(); // flushEnded() left ready keys behind
			return;
		}
		if (closed || !tasks.isEmpty()) {
			// a wakeup() from close() or call() may have been consumed by flushEnded()'s selectNow(): do not block
			selector.selectNow();
			return;
		}
		if (!wakeSet) {
			selector.select();
			return;
		}
		long millis = TimeUnit.NANOSECONDS.toMillis(wakeAt - System.nanoTime() + 999_999);
		if (millis <= 0) {
			selector.selectNow();
		} else {
			selector.select(millis);
		}
	}

	private void handleSelected() {
		for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext();) {
			SelectionKey key = it.next();
			it.remove();
			if (!key.isValid()) {
				continue;
			}
			if (key.channel() == listener) {
				acceptAll();
				continue;
			}
			Connection c = (Connection) key.attachment();
			if (key.isConnectable()) {
				finishConnect(c);
			}
			if (!c.closed && key.isValid() && key.isReadable()) {
				boolean fromClient = key.channel() == c.client;
				read(fromClient ? c.up : c.down, (SocketChannel) key.channel());
			}
			// OP_WRITE needs nothing here: pump() retries every blocked write
		}
	}

	private void acceptAll() {
		while (true) {
			SocketChannel client;
			try {
				client = listener.accept();
			} catch (IOException e) {
				return; // e.g. the client already gave up; the listener itself stays usable
			}
			if (client == null) {
				return;
			}
			accepted.incrementAndGet();
			if (refusing) {
				resetNow(client);
				continue;
			}
			try {
				client.configureBlocking(false);
				client.setOption(StandardSocketOptions.TCP_NODELAY, true);
				Connection c = new Connection(nextConnectionId++, client);
				c.clientKey = client.register(selector, OP_READ, c);
				connections.add(c);
				open.incrementAndGet();
			} catch (IOException e) {
				resetNow(client);
			}
		}
	}

	/** Opens the server side; never in a partition, where the server must not see the client. */
	private void connect(Connection c, long now) {
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

	private void finishConnect(Connection c) {
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
	private void pump(Connection c, long now) {
		Mode m = mode;
		if (c.server == null) {
			if (m.kind == Kind.BLACKHOLE) {
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
	private boolean deliver(Connection c, Flow flow, SocketChannel sink, boolean towardsClient, Mode m, long now) {
		flow.writeBlocked = false;
		boolean discard = towardsClient && (m.kind == Kind.DROP_REPLIES || c.lostReplies);
		while (!flow.held.isEmpty()) {
			Chunk chunk = flow.held.peekFirst();
			ByteBuffer data = chunk.data();
			if (redeliverArmed && data != null && m.kind != Kind.BLACKHOLE) {
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
			if (m.kind == Kind.BLACKHOLE) {
				return true;
			}
			if (m.kind == Kind.LATENCY) {
				long due = chunk.readAt() + m.latencyNanos;
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

	private void interest(Connection c) {
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

	private void reset(Connection c) {
		end(c, pendingResets);
	}

	/** Forgets a connection; its sockets are closed by {@link #flushEnded()}, once deregistered. */
	private void end(Connection c, List<SocketChannel> pending) {
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
	private void flushEnded() throws IOException {
		if (pendingResets.isEmpty() && pendingCloses.isEmpty()) {
			return;
		}
		selector.selectNow(); // deregisters the cancelled keys
		closeAll();
	}

	private void closeAll() {
		pendingResets.forEach(FaultProxy::resetNow);
		pendingResets.clear();
		pendingCloses.forEach(FaultProxy::closeQuietly);
		pendingCloses.clear();
	}

	private void shutdown() {
		synchronized (this) {
			stopped = true;
		}
		for (Connection c : List.copyOf(connections)) {
			reset(c);
		}
		closeQuietly(selector); // deregisters every channel
		closeAll();
		closeQuietly(listener);
		IllegalStateException closedError = new IllegalStateException("Closed: " + this, failure);
		for (Task task = tasks.poll(); task != null; task = tasks.poll()) {
			task.done().completeExceptionally(closedError);
		}
	}

	private static ServerSocketChannel bind() throws IOException {
		InetAddress loopback = InetAddress.getByName(HOST);
		for (int attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
			ServerSocketChannel channel = ServerSocketChannel.open();
			try {
				channel.bind(new InetSocketAddress(loopback, 0), 50);
				if (((InetSocketAddress) channel.getLocalAddress()).getPort() != 6379) {
					return channel;
				}
			} catch (IOException | RuntimeException e) {
				channel.close();
				throw e;
			}
			channel.close(); // never pose as a shared Redis
		}
		throw new IllegalStateException("The OS keeps handing out port 6379");
	}

	/** An abortive close: the peer gets an RST, not a FIN. The channel must not be registered. */
	private static void resetNow(SocketChannel channel) {
		try {
			channel.configureBlocking(true); // SO_LINGER is only defined for blocking sockets
			channel.setOption(StandardSocketOptions.SO_LINGER, 0);
		} catch (IOException | RuntimeException e) {
			// closing it anyway
		}
		closeQuietly(channel);
	}

	private static void closeQuietly(@Nullable Closeable closeable) {
		if (closeable == null) {
			return;
		}
		try {
			closeable.close();
		} catch (IOException e) {
			// nothing left to do with it
		}
	}

	private enum Kind {
		HEAL, LATENCY, BLACKHOLE, DROP_REPLIES
	}

	private record Mode(Kind kind, long latencyNanos) {

		static final Mode HEAL = new Mode(Kind.HEAL, 0);
		static final Mode BLACKHOLE = new Mode(Kind.BLACKHOLE, 0);
		static final Mode DROP_REPLIES = new Mode(Kind.DROP_REPLIES, 0);

		@Override
		public String toString() {
			return kind == Kind.LATENCY
					? "latency(" + Duration.ofNanos(latencyNanos) + ")"
					: kind.name().toLowerCase(Locale.ROOT).replace("_r", "R") + "()";
		}
	}

	private record Task(Runnable action, CompletableFuture<@Nullable Void> done) {
	}

	/**
	 * Bytes one peer sent, read at {@code readAt}; or, with {@code data == null}, the end of its
	 * stream, by a reset if {@code reset}.
	 */
	private record Chunk(long readAt, @Nullable ByteBuffer data, boolean reset) {
	}

	/** One direction of a connection: what was read from its source and not yet delivered. */
	private static final class Flow {

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

	/** A client connection and its server side, which opens once no partition prevents it. */
	private static final class Connection {

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

		Connection(long id, SocketChannel client) {
			this.id = id;
			this.client = client;
		}

		@Override
		public String toString() {
			return "connection " + id;
		}
	}
}
