package dev.distlock.autoconfigure;

import java.util.HashSet;
import java.util.Set;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the {@code locks} actuator endpoint's sensitive values, as Boot configures the {@code env}
 * endpoint's.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("management.endpoint.locks")
public class LocksEndpointProperties {

	/** Created by Spring Boot, which binds {@code management.endpoint.locks.*} to it. */
	public LocksEndpointProperties() {
	}

	/**
	 * When to show owner ids and fencing tokens: 'never', 'when-authorized' (to an authenticated caller with one of
	 * the roles) or 'always'. Masked values read '******'.
	 */
	private Show showValues = Show.WHEN_AUTHORIZED;

	/**
	 * Roles of which a caller needs one to see owner ids and fencing tokens under 'when-authorized'. When empty, every
	 * authenticated caller may.
	 */
	private Set<String> roles = new HashSet<>();

	/** {@return when owner ids and fencing tokens are shown} */
	public Show getShowValues() {
		return this.showValues;
	}

	/**
	 * Set when owner ids and fencing tokens are shown.
	 * @param showValues never, when authorized or always
	 */
	public void setShowValues(Show showValues) {
		this.showValues = showValues;
	}

	/** {@return the roles of which a caller needs one under 'when-authorized'} */
	public Set<String> getRoles() {
		return this.roles;
	}

	/**
	 * Set the roles of which a caller needs one under 'when-authorized'.
	 * @param roles the roles; empty lets every authenticated caller see the values
	 */
	public void setRoles(Set<String> roles) {
		this.roles = roles;
	}

}
