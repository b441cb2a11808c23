package dev.distlock.sample.inventory.demo;

import dev.distlock.sample.inventory.InventoryApplication;

import org.springframework.boot.SpringApplication;

/**
 * The main class of each app instance the demo starts: the application exactly as it is, plus
 * {@link DemoInstanceSupport} (its port for the demo, and an exit when the demo is gone), which the application itself
 * does not carry. Named here rather than left to the application's component scan, which would find it on this class
 * path too: its package lies under the application's.
 */
public final class DemoInstance {

	private DemoInstance() {
	}

	public static void main(String[] args) {
		SpringApplication.from(InventoryApplication::main).with(DemoInstanceSupport.class).run(args);
	}

}
