package dev.distlock.test.redis;

import static java.nio.channels.SelectionKey.OP_ACCEPT;

import dev.distlock.test.redis.ProxyLoop.Task;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * <p>One daemon thread, {@code fault-proxy-<port>} ({@link ProxyLoop}), does all I/O on non-blocking
 * sockets, and a mode change runs on that thread between two socket operations ({@link ProxyPump}
 * moves the bytes of each connection as the mode says). So a change also applies to data in
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
	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20); // generous: the loop may be starved on a loaded machine
	private static final int BIND_ATTEMPTS = 10;

	private final InetSocketAddress target;
	private final int port;
	private final ProxyPump pump;
	private final ProxyLoop loop;

	private FaultProxy(InetSocketAddress target, Selector selector, ServerSocketChannel listener, int port) {
		this.target = target;
		this.port = port;
		this.pump = new ProxyPump(target, selector);
		this.loop = new ProxyLoop(this, selector, listener, pump, port);
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
			proxy.loop.thread.start();
			return proxy;
		} catch (IOException | RuntimeException e) {
			ProxyLoop.closeQuietly(listener);
			ProxyLoop.closeQuietly(selector);
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
		setMode(ProxyMode.HEAL);
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
		setMode(new ProxyMode(ProxyMode.Kind.LATENCY, latency.toNanos()));
	}

	/**
	 * A network partition: nothing flows in either direction, but nothing is lost either. Bytes are
	 * held in the proxy (or left unread, so TCP backpressure holds them), connections stay open, and
	 * new ones are accepted but not connected to the server. {@link #heal()} delivers it all in
	 * order, which is how a command the client gave up on runs later on the server.
	 */
	public void blackhole() {
		setMode(ProxyMode.BLACKHOLE);
	}

	/**
	 * Lost replies: client to server bytes flow (the server runs the commands), server to client
	 * bytes are discarded (the client never hears). A TCP stream cannot lose bytes in its middle, so
	 * a connection that lost any reply byte never delivers to its client again, and is reset when
	 * the mode changes to {@link #heal()} or {@link #latency(Duration)}. Connections that lost
	 * nothing (idle ones) carry on.
	 */
	public void dropReplies() {
		setMode(ProxyMode.DROP_REPLIES);
	}

	/**
	 * Resets (RST) both sides of every open connection now, discarding what the proxy holds for them,
	 * as a crashed middlebox or a failover would. The mode is unchanged; new connections are accepted.
	 */
	public void resetAll() {
		call("resetAll", pump::resetAll);
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
		call("redeliverNext()", () -> pump.armRedelivery(null));
	}

	/**
	 * As {@link #redeliverNext()}, for the next command whose bytes contain {@code marker} (a key, a
	 * script's SHA-1), so that other traffic (renewals, pub/sub) passes untouched. The marker must
	 * arrive in one chunk, as a short command's bytes do.
	 */
	public void redeliverNext(String marker) {
		byte[] bytes = marker.getBytes(java.nio.charset.StandardCharsets.UTF_8);
		call("redeliverNext(" + marker + ")", () -> pump.armRedelivery(bytes));
	}

	/** Whether a {@link #redeliverNext()} is still waiting for its command or its reply. */
	public boolean redeliveryPending() {
		AtomicLong pending = new AtomicLong();
		call("redeliveryPending()", () -> pending.set(pump.redeliveryArmed() ? 1 : 0));
		return pending.get() == 1;
	}

	/** Connections {@link #redeliverNext()} closed after the server answered a command on them. */
	public long redeliveries() {
		return pump.redeliveries.get();
	}

	/** While {@code true}, new connections are accepted and reset at once, as by a refusing server. */
	public void refuseNew(boolean refuse) {
		call("refuseNew(" + refuse + ")", () -> loop.refusing = refuse);
	}

	/** Connections open now (accepted and not yet closed or reset). */
	public int connectionCount() {
		return pump.open.get();
	}

	/** Connections the listener accepted since the start, including refused ones. */
	public long acceptedCount() {
		return loop.accepted.get();
	}

	/** Bytes written towards the server, on all connections. */
	public long bytesToServer() {
		return pump.toServer.get();
	}

	/** Bytes written towards clients, on all connections. */
	public long bytesToClient() {
		return pump.toClient.get();
	}

	/**
	 * Bytes read and never to be delivered: replies discarded by {@link #dropReplies()}, and what was
	 * held for a connection when it was reset or the proxy closed.
	 */
	public long bytesDropped() {
		return pump.dropped.get();
	}


	/** Closes the listener, resets every connection and stops the thread. Idempotent. */
	@Override
	public void close() {
		loop.requestClose();
		Thread thread = loop.thread;
		try {
			thread.join(STOP_TIMEOUT.toMillis());
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while closing " + this, e);
		}
		if (thread.isAlive()) {
			IllegalStateException stuck = new IllegalStateException(thread.getName() + " did not stop within " + STOP_TIMEOUT
					+ "; its stack is this exception's");
			stuck.setStackTrace(thread.getStackTrace());
			throw stuck;
		}
	}

	@Override
	public String toString() {
		return "FaultProxy[" + HOST + ":" + port + " -> " + target.getHostString() + ":" + target.getPort() + ", "
				+ (loop.isClosed() ? "closed" : pump.mode() + (loop.refusing ? ", refusing new" : "")) + ", " + pump.open.get() + " open]";
	}

	private void setMode(ProxyMode next) {
		call(next.toString(), () -> pump.setMode(next));
	}

	/** Runs {@code action} on the loop thread and waits until it and the I/O it allows are done. */
	private void call(String what, Runnable action) {
		Task task = new Task(action, new CompletableFuture<>());
		if (!loop.submit(task)) {
			throw new IllegalStateException("Closed: " + this, loop.failure());
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
}
