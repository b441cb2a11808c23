package dev.distlock.test.redis;

import java.time.Duration;
import java.util.Locale;

/** The fault a {@link FaultProxy} applies now; {@code latencyNanos} only for {@link Kind#LATENCY}. */
record ProxyMode(Kind kind, long latencyNanos) {

	static final ProxyMode HEAL = new ProxyMode(Kind.HEAL, 0);
	static final ProxyMode BLACKHOLE = new ProxyMode(Kind.BLACKHOLE, 0);
	static final ProxyMode DROP_REPLIES = new ProxyMode(Kind.DROP_REPLIES, 0);

	/** Named as the {@link FaultProxy} method that sets it, e.g. {@code dropReplies()}. */
	@Override
	public String toString() {
		return kind == Kind.LATENCY
				? "latency(" + Duration.ofNanos(latencyNanos) + ")"
				: kind.name().toLowerCase(Locale.ROOT).replace("_r", "R") + "()";
	}

	enum Kind {
		HEAL, LATENCY, BLACKHOLE, DROP_REPLIES
	}
}
