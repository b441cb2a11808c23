package dev.distlock.sample.inventory;

import dev.distlock.sample.inventory.stock.InMemoryInventoryStore;

import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.util.Assert;

/**
 * Puts the sample's stock in memory ({@link InMemoryInventoryStore}) in place of its store on Redis: imported by a test
 * ({@code @Import(InMemoryInventory.class)}) or by {@link InMemoryDevConfiguration}. It replaces the definition of the
 * {@code inventoryStore} bean, so the Redis store is never created and needs no Redis connection.
 * <p>
 * A plain class, not a {@code @Configuration}: under {@code spring-boot:test-run} the application's component scan
 * sees the test classes, and this must apply only where it is imported.
 */
public final class InMemoryInventory implements BeanDefinitionRegistryPostProcessor {

	static final String BEAN_NAME = "inventoryStore";

	@Override
	public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
		Assert.state(registry.containsBeanDefinition(BEAN_NAME),
				() -> "No bean '" + BEAN_NAME + "' to put in memory: InventoryStoreConfiguration changed?");
		registry.removeBeanDefinition(BEAN_NAME);
		registry.registerBeanDefinition(BEAN_NAME, new RootBeanDefinition(InMemoryInventoryStore.class));
	}

}
