package dev.distlock.annotation;

import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.AdviceModeImportSelector;
import org.springframework.util.ClassUtils;

/**
 * Imports what {@link EnableDistributedLocks#mode()} needs: for {@link AdviceMode#PROXY PROXY}, the advising bean
 * post-processor, last and only when nothing else defined one (with Spring Boot, the auto-configuration's, which
 * applies the {@code distlock.*} properties, comes first); for {@link AdviceMode#ASPECTJ ASPECTJ}, the
 * {@code lock-aspectj} module's configuration, which the auto-configuration sees and so configures the aspect instead
 * of proxies.
 *
 * @since 0.1.0
 */
public class DistributedLockConfigurationSelector extends AdviceModeImportSelector<EnableDistributedLocks> {

	/** The configuration of {@code lock-aspectj}: named, as this module does not depend on it. */
	public static final String ASPECTJ_CONFIGURATION_CLASS_NAME = "dev.distlock.aspectj.AspectJDistributedLockConfiguration";

	/** Proxy mode: a deferred selector of {@code dev.distlock.interceptor}, named, as this package does not see it. */
	private static final String PROXY_SELECTOR_CLASS_NAME = "dev.distlock.interceptor.ProxyDistributedLockSelector";

	/** Created by Spring for {@link EnableDistributedLocks}. */
	public DistributedLockConfigurationSelector() {
	}

	/**
	 * {@return the configuration classes to import for {@code adviceMode}}
	 * @param adviceMode the mode {@link EnableDistributedLocks} names
	 * @throws IllegalStateException when the mode is {@code ASPECTJ} and {@code lock-aspectj} is not on the classpath
	 */
	@Override
	protected String[] selectImports(AdviceMode adviceMode) {
		if (adviceMode == AdviceMode.PROXY) {
			return new String[] { PROXY_SELECTOR_CLASS_NAME };
		}
		if (!ClassUtils.isPresent(ASPECTJ_CONFIGURATION_CLASS_NAME, getClass().getClassLoader())) {
			throw new IllegalStateException("@EnableDistributedLocks(mode = AdviceMode.ASPECTJ) needs the "
					+ "dev.distlock:lock-aspectj module on the classpath (it has the aspect "
					+ "dev.distlock.aspectj.DistributedLockAspect and its configuration " + ASPECTJ_CONFIGURATION_CLASS_NAME
					+ "), and the application's classes woven with it at compile time or load time");
		}
		return new String[] { ASPECTJ_CONFIGURATION_CLASS_NAME };
	}

}
