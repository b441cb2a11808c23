package dev.distlock.core;

/**
 * The lease had already been found lost (see {@link LockLostEvent}) when the holder released, renewed or extended it.
 *
 * @since 0.1.0
 */
public class LockLostException extends LockNotOwnedException {

	/** How the loss was noticed. */
	private final LockLostEvent.Detection detection;

	/**
	 * An exception for the loss {@code event} describes; its message names the holder by its
	 * {@linkplain LockLostEvent#holder() label}, never by its owner id.
	 * @param event the loss, as it was published
	 */
	public LockLostException(LockLostEvent event) {
		super(event.key(), event.owner(), "Lock '" + event.key() + "' (fencing token " + event.fencingToken()
				+ ") was lost while held by " + event.holder() + ": " + event.detection().description());
		this.detection = event.detection();
	}

	/** {@return how the loss was noticed} */
	public LockLostEvent.Detection getDetection() {
		return this.detection;
	}

}
