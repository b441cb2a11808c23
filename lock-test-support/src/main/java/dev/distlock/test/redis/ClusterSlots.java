package dev.distlock.test.redis;

import java.nio.charset.StandardCharsets;
import java.util.BitSet;

/** Redis Cluster's key to hash slot mapping, and slot sets as text for messages. */
final class ClusterSlots {

	private static final int SLOTS = RedisCluster.SLOTS;

	private ClusterSlots() {
	}

	/**
	 * The hash slot of a key: CRC16 (XMODEM) of the key, or of its hash tag (the part between the
	 * first <code>{</code> and the next <code>}</code>, if not empty), modulo 16384.
	 */
	static int slotOf(String key) {
		byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
		int from = 0;
		int to = bytes.length;
		int open = indexOf(bytes, (byte) '{', 0);
		if (open >= 0) {
			int close = indexOf(bytes, (byte) '}', open + 1);
			if (close > open + 1) {
				from = open + 1;
				to = close;
			}
		}
		return crc16(bytes, from, to) & (SLOTS - 1);
	}

	static String ranges(BitSet slots) {
		StringBuilder text = new StringBuilder();
		for (int from = slots.nextSetBit(0); from >= 0; from = slots.nextSetBit(from)) {
			int to = slots.nextClearBit(from) - 1;
			text.append(text.isEmpty() ? "" : ",").append(from).append(to > from ? "-" + to : "");
			from = to + 1;
		}
		return text.isEmpty() ? "no slots" : text.toString();
	}

	private static int indexOf(byte[] bytes, byte b, int from) {
		for (int i = from; i < bytes.length; i++) {
			if (bytes[i] == b) {
				return i;
			}
		}
		return -1;
	}

	/** CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as Redis Cluster specifies. */
	static int crc16(byte[] bytes, int from, int to) {
		int crc = 0;
		for (int i = from; i < to; i++) {
			crc ^= (bytes[i] & 0xFF) << 8;
			for (int bit = 0; bit < 8; bit++) {
				crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
			}
		}
		return crc & 0xFFFF;
	}
}
