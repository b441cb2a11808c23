package dev.distlock.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.distlock.test.redis.RedisServer;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * What the scenarios of {@link FairLockScenarioIntegrationTests} see of Redis, whatever the fair lock's data
 * structures are: the elements of every key (a list's or sorted set's in order, a hash's fields and values), so that
 * a test can ask which keys still name a process (by its client id, the prefix of its owner ids) and where a waiter
 * stands in the queue.
 */
final class FairQueueProbe {

	/**
	 * One atomic snapshot of the queue and a tick of a logical clock: {@code KEYS[1]} the queue, {@code KEYS[2]} the
	 * clock; the reply is the clock's new value followed by the queue's elements in order.
	 */
	private static final String SNAPSHOT = """
			local t = redis.call('TYPE', KEYS[1])['ok']
			local items
			if t == 'list' then items = redis.call('LRANGE', KEYS[1], 0, -1)
			elseif t == 'zset' then items = redis.call('ZRANGE', KEYS[1], 0, -1)
			elseif t == 'hash' then items = redis.call('HKEYS', KEYS[1])
			elseif t == 'set' then items = redis.call('SMEMBERS', KEYS[1])
			else items = {} end
			local reply = { tostring(redis.call('INCR', KEYS[2])) }
			for _, item in ipairs(items) do reply[#reply + 1] = item end
			return reply
			""";

	@SuppressWarnings({ "unchecked", "rawtypes" })
	private static final RedisScript<List<String>> SNAPSHOT_SCRIPT = (RedisScript) RedisScript.of(SNAPSHOT, List.class);

	private final RedisServer server;

	FairQueueProbe(RedisServer server) {
		this.server = server;
	}

	/** {@return every key and its elements} */
	Map<String, List<String>> contents() {
		Map<String, List<String>> contents = new TreeMap<>();
		for (String key : LockTestSupport.leftKeys(this.server)) {
			contents.put(key, elements(key));
		}
		return contents;
	}

	/**
	 * {@return the keys one of whose elements contains {@code text}, with those elements}
	 * @param text what to look for, such as a client id
	 */
	Map<String, List<String>> mentioning(String text) {
		Map<String, List<String>> found = new TreeMap<>();
		contents().forEach((key, elements) -> {
			List<String> matching = elements.stream().filter(element -> element.contains(text)).toList();
			if (!matching.isEmpty()) {
				found.put(key, matching);
			}
		});
		return found;
	}

	/**
	 * {@return the elements of a key, in order for a list or sorted set; a hash's fields each followed by its value}
	 * @param key the key
	 */
	List<String> elements(String key) {
		String type = (String) this.server.execute("TYPE", key);
		Object reply = switch (type) {
			case "list" -> this.server.execute("LRANGE", key, "0", "-1");
			case "zset" -> this.server.execute("ZRANGE", key, "0", "-1");
			case "hash" -> this.server.execute("HGETALL", key);
			case "set" -> this.server.execute("SMEMBERS", key);
			case "string" -> List.of(this.server.execute("GET", key));
			default -> List.of();
		};
		List<String> elements = new ArrayList<>();
		for (Object element : (List<?>) reply) {
			elements.add(String.valueOf(element));
		}
		return elements;
	}

	/**
	 * {@return the position of the first element of {@code queue} that contains {@code text}, -1 if none does}
	 * @param queue the queue's elements in order
	 * @param text what to look for
	 */
	static int position(List<String> queue, String text) {
		for (int i = 0; i < queue.size(); i++) {
			if (queue.get(i).contains(text)) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * Take the queue's elements and a tick of {@code clock} in one atomic step, on a client connection (the
	 * scenario takes thousands).
	 * @param redis the client
	 * @param queue the queue key
	 * @param clock the clock key
	 * @return the tick, then the elements
	 */
	static Snapshot snapshot(StringRedisTemplate redis, String queue, String clock) {
		List<String> reply = redis.execute(SNAPSHOT_SCRIPT, List.of(queue, clock));
		return new Snapshot(Long.parseLong(reply.get(0)), List.copyOf(reply.subList(1, reply.size())));
	}

	/**
	 * The queue at one tick of the logical clock.
	 * @param clock the tick
	 * @param queue the elements in order
	 */
	record Snapshot(long clock, List<String> queue) {
	}

}
