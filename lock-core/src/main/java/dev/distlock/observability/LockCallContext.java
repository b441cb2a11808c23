package dev.distlock.observability;

import java.util.List;

import io.micrometer.observation.Observation;

/**
 * What an observation of a locked call knows: the lock's name, the keys it locks, and the method.
 *
 * @since 0.1.0
 */
public class LockCallContext extends Observation.Context {

	private final String lockName;

	private final List<String> keys;

	private final String method;

	/**
	 * The context of one locked call.
	 * @param lockName the lock's name
	 * @param keys the evaluated keys, in the order they are acquired
	 * @param method the locked method, as {@code ClassName.method(..)}
	 */
	public LockCallContext(String lockName, List<String> keys, String method) {
		this.lockName = lockName;
		this.keys = List.copyOf(keys);
		this.method = method;
	}

	/** {@return the lock's name: bounded, a low-cardinality tag} */
	public String getLockName() {
		return this.lockName;
	}

	/** {@return the evaluated keys, in the order they are acquired: unbounded, high-cardinality tags only} */
	public List<String> getKeys() {
		return this.keys;
	}

	/** {@return the locked method, as {@code ClassName.method(..)}} */
	public String getMethod() {
		return this.method;
	}

}
